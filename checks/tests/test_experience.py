"""The runner as a learner meets it: in a terminal and in a pipe."""

from __future__ import annotations

import pytest

import json
import os
import pty
import queue
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import jsonschema

from checks.exercises import regions, with_region
from checks.fixtures import Journal
from checks.hints import next_hints
from checks.target import ROOT
from checks.tests.conftest import Variant
from checks.trace import trace_lines, wire_events

SCHEMA = json.loads((ROOT / "checks" / "report.schema.json").read_text())


def env(**extra: str) -> Dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return {**base, "MOCK": "1", **extra}


def in_terminal(*args: str, **extra: str) -> Tuple[int, str]:
    """Run the checks with a pseudo-terminal as stdout; return (status, output)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "checks", *args], stdout=follower,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=ROOT, env=env(**extra))
    os.close(follower)
    chunks: List[bytes] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the other side closed: the run is over
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(10), b"".join(chunks).decode()


def in_pipe(*args: str, **extra: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "checks", *args], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env=env(**extra))


@pytest.mark.shipped_starter
def test_a_terminal_gets_colour_and_a_live_line_while_an_item_waits() -> None:
    # Item 8's slow server needs at least 0.6 s by construction, so its live line shows.
    status, output = in_terminal("8", "4")
    assert status == 1
    assert "\x1b[" in output
    assert re.search(r" 8 \.\.\.\.   0\.\d s \(gives up at \d+ s\)  waiting on a silent server", output)


def test_no_color_means_no_escape_codes_even_in_a_terminal() -> None:
    status, output = in_terminal("4", NO_COLOR="1")
    assert status == 0 and "\x1b" not in output and "PASS" in output


def test_force_color_colours_a_pipe() -> None:
    assert "\x1b[" in in_pipe("4", FORCE_COLOR="1").stdout


@pytest.mark.shipped_starter
def test_a_pipe_gets_plain_words_in_number_order_and_a_summary() -> None:
    done = in_pipe()
    assert done.returncode == 1 and "\x1b" not in done.stdout and "\r" not in done.stdout
    numbered = [int(line.split()[0]) for line in done.stdout.splitlines() if re.match(r"^ ?\d \w", line)]
    assert numbered == list(range(1, 10))
    assert re.search(r"^4/9 passed · 5 failed \(2, 3, 5, 6, 8\) · [\d.]+ s · exit 1 \(some items failed\)$", done.stdout, re.M)
    assert "All nine pass" not in done.stdout


@pytest.mark.shipped_starter
def test_results_stream_as_they_are_judged(variant: Variant, tmp_path: Path) -> None:
    # Item 2's code waits for a file that the test writes only once it has read
    # item 1's verdict: so item 1 was shown while item 2 was still being judged.
    flag = tmp_path / "go"
    wait = (f"        import os, time\n        for _ in range(3000 if 'error' in message else 0):\n"
            f"            if os.path.exists({str(flag)!r}): break\n            time.sleep(0.01)\n")
    old = "        # >>> exercise 1 (item 2): a reply carries either a result or an error\n"
    directory = variant(edits={"stdio_client.py": (old, old + wait)})
    process = subprocess.Popen([sys.executable, "-m", "checks", "1", "2", "--target", str(directory)],
                               stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env())
    assert process.stdout is not None
    try:
        process.stdout.readline()  # the header
        first = process.stdout.readline()
        flag.write_text("go")
        rest = process.stdout.read()
    finally:
        process.wait(60)
    assert first.startswith(" 1 PASS") and " 2 FAIL" in rest


@pytest.mark.shipped_starter
def test_exit_statuses_mean_pass_fail_and_could_not_judge(tmp_path: Path) -> None:
    assert in_pipe("--target", "solution", "4").returncode == 0
    assert in_pipe("2").returncode == 1
    assert in_pipe("--target", str(tmp_path)).returncode == 2
    assert in_pipe("12").returncode == 2


def test_all_nine_green_says_what_to_do_next() -> None:
    done = in_pipe("--target", "solution")
    assert done.returncode == 0 and "All nine pass. Next:" in done.stdout
    assert 'QUESTION="Read note n-2" python -m solution' in done.stdout


def test_json_report_follows_the_schema_in_the_repo(tmp_path: Path, shipped: Path) -> None:
    for args in (["--target", "solution"], [], ["3", "--trace"], ["--target", str(tmp_path)],
                 ["--target", "solution", "--extensions"], ["--extensions", "--only", "2,E2,E9"]):
        report = json.loads(in_pipe(*args, "--json").stdout)
        jsonschema.validate(report, SCHEMA)
    counted = json.loads(in_pipe("--target", str(shipped), "--only", "E1,E4", "--json").stdout)  # both unsolved
    assert (counted["extensions_passed"], counted["extensions_total"]) == (0, 2) and counted["exit_status"] == 1
    traced = json.loads(in_pipe("3", "--trace", "--json").stdout)["items"][0]["trace"]
    assert any("tools/list #1" in line for line in traced)


def test_only_selects_items_by_list_or_by_position() -> None:
    one = json.loads(in_pipe("--only", "3,5", "--json").stdout)
    two = json.loads(in_pipe("3", "5", "--json").stdout)
    assert [i["number"] for i in one["items"]] == [i["number"] for i in two["items"]] == [3, 5]


def test_trace_shows_the_wire_for_passing_items_too() -> None:
    done = in_pipe("--target", "solution", "5", "--trace")
    assert "client -> tickets  tools/call #3 search" in done.stdout
    assert "client -> notes    tools/call" in done.stdout


def test_trace_lines_read_journals_in_time_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps({"t": 1.0, "kind": "in", "msg": {"id": 1, "method": "tools/call",
                                                           "params": {"name": "x", "arguments": {}, "_meta": {}}}})
                 + "\n" + json.dumps({"t": 1.003, "kind": "out", "msg": {"id": 1, "error": {
                     "code": -32601, "message": "Method not found"}}}) + "\n")
    b.write_text(json.dumps({"t": 1.001, "kind": "in", "raw": "garbage"}) + "\n")
    lines = trace_lines([Journal("a", a), Journal("b", b)])
    assert lines == ["+    0.0 ms  client -> a        tools/call #1 x {}",
                     "+    1.0 ms  client -> b        garbage (not JSON)",
                     "+    3.0 ms  a        -> client #1 error -32601 Method not found"]
    assert trace_lines([Journal("a", a)], limit=1)[0] == "(1 earlier lines; --trace shows all)"


def test_hints_climb_a_ladder_and_remember_where_they_were(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    rungs = [next_hints(3, state_file=state) for _ in range(4)]
    # nudge, then the guide, and the construct only last
    assert [r[0][:13] for r in rungs] == ["hint 1/3 (nud", "hint 2/3 (rea", "hint 3/3 (con", "hint 3/3 (con"]
    assert "labs/GUIDE.md" in rungs[1][0] and "nextCursor" in rungs[2][0] and "nextCursor" not in rungs[1][0]
    assert "last hint" in rungs[3][1]
    assert json.loads(state.read_text()) == {"hints": {"3": 4}}
    assert len(next_hints(8, show_all=True, state_file=state)) == 3


def test_hint_all_on_the_command_line() -> None:
    done = in_pipe("--hint", "2", "--all")
    assert done.returncode == 0 and done.stdout.count("hint ") == 3 and "McpError.from_reply" in done.stdout
    assert done.stdout.index("(read)") < done.stdout.index("(construct)")


def test_extensions_have_hints_too(tmp_path: Path) -> None:
    done = in_pipe("--hint", "E2", "--all")
    assert done.returncode == 0 and "section 11.2" in done.stdout and "_relist" in done.stdout
    assert in_pipe("--hint", "E12").returncode == 2 and in_pipe("--hint", "x").returncode == 2


def read_until(lines: "queue.Queue[Optional[str]]", words: str, within: float) -> List[str]:
    seen: List[str] = []
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if words in line:
            return seen
    raise AssertionError(f"{words!r} did not appear within {within} s; saw {seen[-8:]}")


@pytest.mark.shipped_starter
def test_watch_reruns_on_save_and_says_what_turned_green(tmp_path: Path, shipped: Path) -> None:
    copy = tmp_path / "mine"
    shutil.copytree(shipped, copy, ignore=shutil.ignore_patterns("__pycache__"))
    process = subprocess.Popen([sys.executable, "-m", "checks", "--watch", "--target", str(copy), "3"],
                               stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env())
    lines: "queue.Queue[Optional[str]]" = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)
    threading.Thread(target=pump, daemon=True).start()
    try:
        first = read_until(lines, "watching", 30)
        assert any(" 3 FAIL" in line for line in first) and not any("\x1b" in line for line in first)
        path = copy / "discovery.py"
        solved = regions((ROOT / "solution" / "discovery.py").read_text())[2]
        path.write_text(with_region(path.read_text(), 2, solved))
        after = read_until(lines, "item 3 turned green", 30)
        assert any(" 3 PASS" in line for line in after)
        read_until(lines, "watching", 10)
    finally:
        process.send_signal(signal.SIGINT)
        status = process.wait(10)
    assert status == 0
    assert "stopped watching" in "".join(read_until(lines, "stopped watching", 5))


def test_the_trace_names_notifications_and_replies_with_neither_member(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    entries = [{"t": 1.0, "kind": "out", "msg": {"jsonrpc": "2.0", "method": "notifications/progress",
                                                 "params": {"progressToken": 3, "progress": 1, "total": 5}}},
               {"t": 1.001, "kind": "out", "msg": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}},
               {"t": 1.002, "kind": "out", "msg": {"jsonrpc": "2.0", "id": 4}},
               {"t": 1.003, "kind": "out", "msg": {"jsonrpc": "2.0", "id": 5, "result": {"tools": [], "nextCursor": ""}}}]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    lines = trace_lines([Journal("tickets", path)])
    assert lines[0].endswith("tickets  -> client notifications/progress 1/5")
    assert lines[1].endswith("tickets  -> client notifications/tools/list_changed")
    assert lines[2].endswith("#4 (neither result nor error)") and lines[3].endswith('nextCursor=""')


def test_the_trace_shows_an_empty_cursor_sent_and_the_clients_answers_to_a_server(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    meta: Dict[str, Any] = {"_meta": {}}
    entries = [{"t": 1.0, "kind": "in", "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                                                "params": {"cursor": "", **meta}}},
               {"t": 1.001, "kind": "in", "msg": {"jsonrpc": "2.0", "id": 0, "result": {
                   "role": "assistant", "content": {"type": "text", "text": "Shipping Friday."}}}},
               {"t": 1.002, "kind": "in", "msg": {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "no"}}}]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    events = wire_events([Journal("tickets", path)])
    assert [e["label"] for e in events] == ['tools/list #2 cursor=""', "reply #0 Shipping Friday.",
                                            "reply #1 error -1 no"]
    assert [e["kind"] for e in events] == ["request", "reply", "error"]


LAB_PARTS = ("checks", "servers", "solution", "starter", "labs")


@pytest.mark.shipped_starter
def test_a_fresh_clone_that_writes_bytecode_is_judged_like_any_other(tmp_path: Path) -> None:
    # A learner's Python caches bytecode beside the sources (PYTHONDONTWRITEBYTECODE
    # is a maintainer's setting): the first run after a clone imports every module
    # from source and writes its .pyc, through a temporary file, under checks/ too.
    # Seen: the worker imported the contracts there after the guard was armed, the
    # guard took the import system's write for a forgery, and all nine were "not judged".
    for part in LAB_PARTS:
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    caching = {k: v for k, v in env().items() if k != "PYTHONDONTWRITEBYTECODE"}

    def run(*args: str) -> Dict[str, str]:
        done = subprocess.run([sys.executable, "-m", "checks", "--json", *args], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path, env=caching)
        report = json.loads(done.stdout)
        assert not report["problems"], report["problems"]
        return {str(item["number"]): item["status"] for item in report["items"]}

    assert set(run("--target", "solution", "--extensions").values()) == {"pass"}
    assert list((tmp_path / "checks" / "contracts" / "__pycache__").glob("*.pyc")), "the runner caches the judge"
    starter = run()
    assert sorted(n for n, status in starter.items() if status == "pass") == ["1", "4", "7", "9"]
    assert set(starter.values()) == {"pass", "fail"}


def test_a_run_that_cannot_judge_rewrites_the_page_to_say_so(variant: Variant, tmp_path: Path) -> None:
    # A browser tab kept open on the page (--watch --html) must not go on showing the
    # last run's verdicts once the code no longer imports.
    page = tmp_path / "report.html"
    directory = variant("solution")
    assert in_pipe("4", "--target", str(directory), "--html", str(page)).returncode == 0
    assert "PASS" in page.read_text(encoding="utf-8")
    (directory / "naming.py").write_text("def broken(:\n", encoding="utf-8")
    done = in_pipe("4", "--target", str(directory), "--html", str(page))
    text = page.read_text(encoding="utf-8")
    assert done.returncode == 2 and "cannot judge: cannot import" in text and "SyntaxError" in text
    assert "PASS" not in text and done.stderr.splitlines()[-1] == f"page written to {page.resolve().as_uri()}"
