"""However much an item says, a verdict stays small and the runner reads it in
linear time: rows and bytes per verdict are capped (with how many more were
not shown), the pipe is read without rescanning what came before, and bytes
arriving count as progress, so a client in an endless loop is a FAIL near its
limit, never a run stopped for making no progress."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterator, List

from checks.fixtures import Entry, Journal
from checks.isolation import EVENT_CAP
from checks.lines import Lines
from checks.page import page
from checks.harness import Verdict
from checks.target import ROOT
from checks.tests.conftest import Variant
from checks.trace import FULL_TEXT, WIRE_ROWS, WIRE_TEXT, trace_lines, wire_events

REQUESTS = 15_000
RUN_LIMIT = 120  # seconds for one runner process; only a hang reaches it


def busy_journal(path: Path, requests: int) -> Journal:
    """A journal of `requests` tools/list requests, each answered with a big page."""
    page_of_tools = {"tools": [{"name": f"tool_{i}", "description": "x" * 200, "inputSchema": {}} for i in range(8)]}
    with path.open("w", encoding="utf-8") as file:
        file.write(json.dumps({"t": 0.0, "kind": "start", "pid": 1}) + "\n")
        for i in range(requests):
            asked = {"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {"_meta": {}}}
            file.write(json.dumps({"t": i * 1e-4, "kind": "in", "msg": asked}) + "\n")
            file.write(json.dumps({"t": i * 1e-4 + 5e-5, "kind": "out",
                                   "msg": {"jsonrpc": "2.0", "id": i, "result": page_of_tools}}) + "\n")
    return Journal("notes", path)


def test_a_verdict_carries_capped_rows_and_text_and_says_how_many_more(tmp_path: Path) -> None:
    rows = wire_events([busy_journal(tmp_path / "notes.jsonl", REQUESTS)])
    assert len(rows) == WIRE_ROWS + 1
    omitted = [r for r in rows if r["kind"] == "omitted"]
    assert [r["label"] for r in omitted] == [f"{2 * REQUESTS - WIRE_ROWS} more message(s) not shown"]
    assert rows[-1]["label"].startswith(f"#{REQUESTS - 1} ")  # the end is kept: where it stopped
    assert sum(len(r["full"]) for r in rows) <= WIRE_TEXT + WIRE_ROWS * 100  # the budget, and a note per row
    assert all(len(r["full"]) <= FULL_TEXT for r in rows)
    lines = trace_lines([], events=rows)
    assert len(lines) == len(rows) and any("more message(s) not shown" in line for line in lines)


def test_the_page_of_a_busy_item_is_bounded_and_says_what_it_left_out(tmp_path: Path) -> None:
    rows = wire_events([busy_journal(tmp_path / "notes.jsonl", REQUESTS)])
    text = page("MCP client lab · starter", "0/1 passed", [Verdict(3, "paging", "pages", "fail", 5.0, "x", wire=rows)])
    assert "more message(s) not shown" in text
    assert len(text.encode()) < 4 * WIRE_TEXT  # the messages in full once, escaped; the diagram's rows


def test_a_line_split_across_many_reads_comes_out_whole_and_once() -> None:
    lines = Lines(EVENT_CAP)
    got: List[bytes] = []
    for piece in [b'{"event": "print", "text": "', *[b"a" * 1000] * 500, b'"}\n{"event": "done"}\n']:
        got += lines.feed(piece)
    assert [json.loads(line)["event"] for line in got] == ["print", "done"]
    assert len(json.loads(got[0])["text"]) == 500_000


def test_a_line_over_the_cap_is_dropped_counted_and_never_held_whole() -> None:
    lines = Lines(1000)
    held: List[int] = []
    got: List[bytes] = []
    for piece in [b"x" * 300] * 100 + [b'\n{"event": "done"}\n']:
        got += lines.feed(piece)
        held.append(lines.held)
    assert got == [b'{"event": "done"}'] and lines.dropped == 1
    assert max(held) <= 1000


def run_isolated_with(target: Path, patience: Dict[str, float], limit: float) -> Dict[str, Any]:
    """`run_isolated` in a process of its own (it forks), with the runner's waits
    made short, and what came of it."""
    script = textwrap.dedent(f"""
        import json, tempfile
        from checks import isolation
        isolation.BLOCKED_GRACE = {patience['grace']!r}
        isolation.PROGRESS_SLACK = {patience['slack']!r}
        with tempfile.TemporaryDirectory() as lab:
            outcome = isolation.run_isolated({{"target": {str(target)!r}, "items": [4], "limit": {limit!r}}}, lab)
        print(json.dumps({{"problems": outcome.problems, "verdicts": [v.status for v in outcome.verdicts]}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=RUN_LIMIT,
                          cwd=ROOT, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 0, done.stderr
    result: Dict[str, Any] = json.loads(done.stdout)
    return result


# At import, one event written a few bytes at a time, for longer than the
# runner's patience: the worker is busy, not hung.
DRIBBLE = """
import os, sys, time
frame = sys._getframe()
while "channel" not in frame.f_locals:
    frame = frame.f_back
fd = frame.f_locals["channel"].fd
os.write(fd, b'{"event": "print", "label": "outside", "text": "')
for _ in range(250):
    os.write(fd, b"." * 100)
    time.sleep(0.02)
os.write(fd, b'"}\\n')
"""


def test_bytes_arriving_count_as_progress(variant: Variant) -> None:
    directory = variant("solution", edits={"__init__.py": ('"""\n', '"""\n' + DRIBBLE)})
    # Patience 4 s (limit 2 + slack 2), under the 5 s the event takes to arrive; the item itself takes a fraction.
    result = run_isolated_with(directory, {"grace": 0.0, "slack": 2.0}, limit=2.0)
    assert not [p for p in result["problems"] if "no progress" in p], result["problems"]
    assert len(result["verdicts"]) == 1


def test_a_worker_that_never_stops_sending_is_stopped_all_the_same(variant: Variant) -> None:
    endless = DRIBBLE.replace("for _ in range(250):", "while True:")
    directory = variant("solution", edits={"__init__.py": ('"""\n', '"""\n' + endless)})
    result = run_isolated_with(directory, {"grace": 0.0, "slack": 1.0}, limit=0.5)  # at most 2 x 1.5 + 0.5 s
    assert [p for p in result["problems"] if "went on for longer than its items could take" in p]
    assert result["verdicts"] == []


ONE_PAGE = '    page = await server.request("tools/list", {})\n    tools.extend(page_tools(page))\n'
ENDLESS = ('    while True:\n        page = await server.request("tools/list", {})\n'
           '        tools.extend(page_tools(page))\n')


def test_an_endless_tools_list_loop_is_a_fail_at_its_limit_with_a_page(
        variant: Variant, tmp_path: Path) -> None:
    directory = variant("starter", edits={"discovery.py": (ONE_PAGE, ENDLESS)})
    report = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "checks", "--target", str(directory), "3", "--limit", "1",
                           "--json", "--html", str(report)], capture_output=True, text=True, timeout=RUN_LIMIT,
                          cwd=ROOT, env={**os.environ, "MOCK": "1"})
    result = json.loads(done.stdout)
    assert done.returncode == 1 and result["problems"] == []
    assert result["items"][0]["status"] == "fail" and "did not finish in 1 s" in result["items"][0]["message"]
    assert report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


class Counted(List[Entry]):
    """A list that counts how often it is read through."""

    reads = 0

    def __iter__(self) -> Iterator[Entry]:
        Counted.reads += 1
        return super().__iter__()


def test_a_proof_reads_a_long_account_a_bounded_number_of_times(tmp_path: Path) -> None:
    from checks.accounts import Account, HeldJournal
    from checks.items.proofs import Told
    entries = Counted(busy_journal(tmp_path / "notes.jsonl", 5_000).entries())
    told = Told([HeldJournal("notes", Account(None, tmp_path / "notes.jsonl", entries=entries))])
    Counted.reads = 0
    assert len(told.answered("notes", "tools/list")) == 5_000
    assert Counted.reads < 10  # once to list the requests and once for the index of replies: not once per request
