"""`--html FILE`: the run as one page, each item's conversation a sequence diagram,
server text never markup; rendered for real in headless Chromium."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any, Dict, List

import pytest

from checks.fixtures import Journal
from checks.harness import Verdict
from checks.page import About, Fold, folded, page
from checks.target import ROOT
from checks.tests.chromium import chromium, photograph

HOSTILE = '<script>alert("owned")</script>\x1b[2J<img src=x onerror=alert(1)>'


def event(ms: float, kind: str, toward: str, text: str, server: str = "notes", id: str = "null") -> Dict[str, Any]:
    return {"ms": ms, "server": server, "kind": kind, "toward": toward, "label": text, "full": text, "id": id}


def test_server_text_is_text_never_markup_and_each_item_has_its_anchor() -> None:
    wire = [event(0.0, "request", "server", "tools/call #1 read_note"),
            event(0.4, "iserror", "client", HOSTILE),
            event(0.5, "exit", "", "exited with status 3", server=HOSTILE)]
    verdicts = [Verdict(3, "paging", "pages", "fail", 0.1, f"got: {HOSTILE}", wire=wire),
                Verdict(12, "E2-list-changes", "changes", "pass", 0.1, "fine")]
    text = page("MCP client lab · starter", "1/2 passed", verdicts)
    assert 'id="item-3"' in text and 'id="item-E2"' in text and 'href="#item-E2"' in text
    assert "<script" not in text and "<img" not in text and "\x1b" not in text
    assert "&lt;script&gt;" in text and "\\x1b[2J" in text
    assert text.count('<div class="diagram"') == 1  # E2 had no conversation: it says so instead of drawing nothing


def test_a_long_run_of_alike_messages_is_folded_to_its_ends() -> None:
    wire = [event(float(i), "request", "server", f"tools/list #{i} cursor=c{i}") for i in range(10)]
    rows = folded(wire)
    assert [r.count if isinstance(r, Fold) else None for r in rows] == [None, None, 7, None]
    last = rows[-1]
    assert isinstance(last, dict) and last["label"] == "tools/list #9 cursor=c9"  # where it ended


def test_html_to_a_directory_that_does_not_exist_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "checks", "1", "--html", str(tmp_path / "no" / "r.html")],
                          capture_output=True, text=True, timeout=60, cwd=ROOT, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 2 and "--html wants a file in a directory that exists" in done.stderr
    assert "Traceback" not in done.stderr


def pixels(png: bytes) -> List[bytes]:
    """The rows of an 8-bit RGB or RGBA PNG (what Chromium writes), unfiltered."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, data, width, height, channels = 8, b"", 0, 0, 0
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        body = png[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            data += body
        at += 12 + length
    raw, stride = zlib.decompress(data), width * channels
    rows: List[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                line[x] = (line[x] + near[2]) & 0xFF
        rows.append(b"".join(bytes(line[i:i + 3]) for i in range(0, stride, channels)))  # RGB only
        previous = line
    return rows


@pytest.mark.shipped_starter  # item 2 fails only on the starter as shipped
@pytest.mark.timeout(180)
def test_the_starters_failing_item_renders_its_conversation_in_chromium(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "checks", "2", "--html", str(report)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 1 and report.exists()  # the exit status stays the verdicts'
    assert done.stdout.splitlines()[-1] == f"page written to {report.resolve().as_uri()}"
    text = report.read_text(encoding="utf-8")
    assert '<section id="item-2">' in text and '<svg' in text
    assert 'class="message error"' in text  # the -32601 reply, drawn as an arrow
    # Item 2's diagram, photographed over the DevTools pipe once it has been laid out,
    # wherever it lies (--screenshot shot a 900 px window: what fell below it went unseen).
    shot = photograph(chromium(), report, 1000, "#item-2 svg", tmp_path / "profile")
    red = bytes((0xDC, 0x26, 0x26))  # the diagram's error colour, used nowhere else on the page
    drawn = sum(row[i:i + 3] == red for row in pixels(shot) for i in range(0, len(row), 3))
    assert drawn > 20, "no error arrow was painted"


def test_a_request_that_was_never_answered_says_so() -> None:
    from checks.page import diagram
    wire = [event(0.0, "request", "server", "tools/call #1 read_note", id="1"),
            event(0.1, "request", "server", "server/discover #2", id="2"),
            event(0.3, "reply", "client", "#2 discover result", id="2")]
    drawn = diagram(wire)
    assert "tools/call #1 read_note: never answered" in drawn and "server/discover #2: never" not in drawn


# What code under test could put in a verdict's wire: markup where a number or a
# fold count belongs, and rows of the wrong shape.
def run_with_page(report: Path) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "checks", "1", "--html", str(report)], capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env={**os.environ, "MOCK": "1"})


def two_items() -> List[Verdict]:
    wire = [event(0.0, "request", "server", "tools/call #1 read_note", id="1"),
            event(0.2, "reply", "client", "#1 note", id="1")]
    return [Verdict(1, "connect", "connects", "pass", 0.1, "fine", wire=wire),
            Verdict(2, "errors", "errors", "fail", 0.1, "got: x", wire=wire)]


def test_every_id_in_the_page_is_used_once_and_every_arrow_points_to_its_own_diagrams_head() -> None:
    text = page("MCP client lab · starter", "1/2 passed", two_items())
    ids = re.findall(r'\bid="([^"]*)"', text)
    assert len(ids) == len(set(ids)) and len(ids) >= 4, ids
    for section in text.split("<section")[1:]:
        heads = set(re.findall(r'marker-end="url\(#([^)]*)\)"', section))
        assert len(heads) == 1 and f'id="{heads.pop()}"' in section


def drawn_texts(svg: str) -> List[str]:
    """The text of each <text> in a diagram, markup inside it dropped, entities read."""
    return [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(r"<text\b[^>]*>(.*?)</text>", svg)]


def test_a_cut_label_ends_in_an_ellipsis_and_its_whole_text_is_on_hover() -> None:
    from checks.page import diagram
    said = 'tools/call #7 add_ticket {"title": "follow up", "date": "follow' + "-up" * 40 + '"}'
    svg = diagram([event(0.0, "request", "server", said, id="7"), event(0.1, "reply", "client", "#7 ok", id="7")])
    cut = next(t for t in drawn_texts(svg) if t.startswith("tools/call #7"))
    assert cut.endswith("…") and len(cut) < len(said)
    titles = [html.unescape(t) for t in re.findall(r"<title>(.*?)</title>", svg, re.S)]
    assert any(said in t for t in titles)


def test_a_label_cut_where_the_worker_hands_it_over_says_so() -> None:
    from checks.trace import LABEL_TEXT, wire_row
    kept = wire_row(event(0.0, "request", "server", "x" * (LABEL_TEXT + 50)))
    assert kept is not None and len(kept["label"]) == LABEL_TEXT and kept["label"].endswith("…")
    whole = wire_row(event(0.0, "request", "server", "x" * LABEL_TEXT))
    assert whole is not None and whole["label"] == "x" * LABEL_TEXT


def test_the_name_a_server_received_in_a_tools_call_is_drawn_whole_and_bold() -> None:
    from checks.page import diagram
    name = "export_ticket_history_including_comments_and_attachments_for_audit_as_json"
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": name, "arguments": {"q": "y" * 90}}}
    row = {**event(0.0, "request", "server", f'tools/call #5 {name} {{"q": "{"y" * 30}…', server="tickets",
                   id="5"), "full": json.dumps(call)}
    svg = diagram([row])
    assert f'<tspan font-weight="bold">{name}</tspan>' in svg
    drawn = next(t for t in drawn_texts(svg) if t.startswith("tools/call #5"))
    assert name in drawn and drawn.endswith("…")


TASK = "0949447d10a0f0336f2641c4"


@pytest.mark.parametrize("message, said", [
    ({"id": 3, "result": {"resultType": "task", "taskId": TASK, "status": "working", "statusMessage": "Queued"}},
     '#3 task created, working: "Queued" (task 0949447d…)'),
    ({"id": 4, "result": {"taskId": TASK, "status": "input_required", "statusMessage": "Waiting for the user's answer",
                          "resultType": "complete", "inputRequests": {}}},
     '#4 task input_required: "Waiting for the user\'s answer" (task 0949447d…)'),
    ({"id": 5, "result": {"taskId": TASK, "status": "completed", "statusMessage": "Done",
                          "result": {"content": [{"type": "text", "text": "Exported 3"}]}}},
     '#5 task completed: "Done" (task 0949447d…)'),
    ({"id": 4, "result": {"task": {"taskId": TASK, "status": "working", "statusMessage": "Queued"}}},
     '#4 task created, working: "Queued" (task 0949447d…)'),
    ({"method": "notifications/tasks/status", "params": {"taskId": TASK, "status": "failed"}},
     "notifications/tasks/status failed (task 0949447d…)"),
])
def test_a_tasks_reply_is_labelled_with_the_status_e6_judges(message: Dict[str, Any], said: str) -> None:
    from checks.trace import describe_reply
    assert describe_reply({"jsonrpc": "2.0", **message}) == said


def test_a_tall_diagram_names_its_lanes_again_every_so_many_rows() -> None:
    from checks.page_parts import LANE_REPEAT, diagram
    polls = [event(i / 10, "request" if i % 2 == 0 else "reply", "server" if i % 2 == 0 else "client",
                   f"tasks/get #{i // 2}" if i % 2 == 0 else f"#{i // 2} task working", server="slow-tickets",
                   id=str(i // 2)) for i in range(3 * LANE_REPEAT)]
    names = drawn_texts(diagram(polls))
    assert names.count("slow-tickets") == 3 and names.count("client") == 3  # at the top, then every LANE_REPEAT
    assert drawn_texts(diagram(polls[:LANE_REPEAT])).count("slow-tickets") == 1


def journal(path: Path, alias: str, *accounts: List[Dict[str, Any]]) -> List[Journal]:
    """One Journal per account of a server under `alias` (a restarted server writes a second one)."""
    made = []
    for at, entries in enumerate(accounts):
        file = path / f"{alias}-{at}.jsonl"
        file.write_text("".join(json.dumps(e) + "\n" for e in entries))
        made.append(Journal(alias, file))
    return made


def started(t: float, server: str, *argv: str, fail: Any = None) -> Dict[str, Any]:
    return {"t": t, "kind": "start", "pid": 100 + int(t * 10), "server": server, "fail": fail,
            "argv": ["--journal", "j.jsonl", *argv]}


def discovered(t: float) -> List[Dict[str, Any]]:
    asked = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {}}}
    return [{"t": t, "kind": "in", "msg": asked},
            {"t": t + 0.001, "kind": "out", "msg": {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "x"}}}]


def item_8_journals(tmp_path: Path) -> List[Journal]:
    """Item 8's scenarios as their servers' journals: a healthy notes beside a tickets
    that exits at start (and is started again), and a tickets slow at every reply."""
    return [*journal(tmp_path, "notes-exit-at-start", [started(0.0, "notes"), *discovered(0.1)]),
            *journal(tmp_path, "tickets-exit-at-start",
                     [started(0.02, "tickets", "--fail", "exit-at-start", fail="exit-at-start"),
                      {"t": 0.021, "kind": "exit", "status": 3}],
                     [started(0.3, "tickets", "--fail", "exit-at-start", fail="exit-at-start"),
                      {"t": 0.301, "kind": "exit", "status": 3}]),
            *journal(tmp_path, "slow-tickets", [started(0.05, "tickets", "--delay", "0.15"), *discovered(0.4)])]


def test_a_broken_servers_item_names_each_lane_for_what_its_server_was_started_as(tmp_path: Path) -> None:
    from checks.page import diagram
    from checks.trace import trace_lines, wire_events
    wire = wire_events(item_8_journals(tmp_path))
    starts = [(r["server"], r["label"]) for r in wire if r["kind"] == "start"]
    assert starts == [("notes-exit-at-start", "notes (healthy)"), ("tickets-exit-at-start", "tickets (exits at start)"),
                      ("slow-tickets", "tickets (slow: 0.15 s a reply)"),
                      ("tickets-exit-at-start", "tickets (exits at start)")]
    texts = drawn_texts(diagram(wire))
    assert {"notes (healthy)", "tickets (exits at start)", "tickets (slow: 0.15 s a reply)"} <= set(texts)
    assert "notes-exit-at-start" in texts  # the name the run knew it by, under what it is
    assert [t for t in texts if "started again" in t] == ["started again: tickets (exits at start)"]  # the restart
    assert not any("started" in line or "healthy" in line for line in trace_lines([], events=wire))


def test_an_item_whose_servers_were_all_healthy_draws_no_starts(tmp_path: Path) -> None:
    from checks.trace import wire_events
    wire = wire_events(journal(tmp_path, "notes", [started(0.0, "notes", "--paging", "endless"), *discovered(0.1)]))
    assert [r["kind"] for r in wire] == ["request", "reply"] and wire[0]["ms"] == 0.0


def test_the_point_where_the_client_raised_is_drawn_after_the_broken_servers_last_event(tmp_path: Path) -> None:
    from checks.trace import wire_events
    wire = wire_events(item_8_journals(tmp_path))
    said = ("expected: with tickets-exit-at-start broken (exit-at-start), it goes to the offline table\n"
            "got: refresh() raised ServerGone (server 'tickets' closed its output (exit status 3)): one broken "
            "server sank the whole refresh")
    text = page("MCP client lab · starter", "0/1 passed", [Verdict(8, "offline", "offline", "fail", 1.0, said,
                                                                  wire=wire)])
    texts = drawn_texts(text[text.index("<svg"):])
    raised = next(i for i, t in enumerate(texts) if t.startswith("refresh() raised ServerGone"))
    exits = [i for i, t in enumerate(texts) if t == "exited with status 3"]
    assert len(exits) == 2 and exits[-1] < raised < texts.index("server/discover #1", exits[-1])
    calm = page("MCP client lab · solution", "1/1 passed", [Verdict(8, "offline", "offline", "pass", 1.0, "fine",
                                                                    wire=wire)])
    assert 'class="raised"' not in calm and 'class="raised"' in text


def test_the_messages_in_full_are_indented_json_each_saying_which_way_it_went() -> None:
    asked = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_note", "arguments": {}}}
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": HOSTILE}]}}
    wire = [{**event(0.0, "request", "server", "tools/call #1 read_note {}", id="1"), "full": json.dumps(asked)},
            {**event(0.4, "reply", "client", "#1 note", id="1"), "full": json.dumps(answer)},
            event(0.5, "not-json", "server", "hello (not JSON)"),
            event(0.9, "exit", "", "exited with status 3")]
    text = page("MCP client lab · starter", "0/1 passed", [Verdict(1, "connect", "connects", "fail", 0.1, "x",
                                                                  wire=wire)])
    full = html.unescape(re.sub(r"<[^>]+>", "", text[text.index("the messages in full"):]))
    assert "+0.0 ms  client → notes · to the server\n{\n" in full and '\n  "method": "tools/call",\n' in full
    assert "+0.4 ms  notes → client · to the client\n{\n" in full and '\n        "text": "<script>' in full
    assert "+0.5 ms  client → notes · to the server (not JSON)\nhello (not JSON)" in full
    assert "+0.9 ms  notes · at the server\nexited with status 3" in full
    assert "notes server" not in full and "notes client" not in full
    assert "<script" not in text  # indented, and still text


def test_the_page_has_a_legend_for_every_way_a_diagram_draws() -> None:
    text = page("MCP client lab · starter", "1/2 passed", two_items())
    legend = text[text.index('<ul class="legend"'):text.index("</ul>", text.index('<ul class="legend"'))]
    words = html.unescape(re.sub(r"<[^>]+>", " ", legend))
    for said in ("solid: a request", "dashed: a reply", "dotted: a notification", "red: an error reply",
                 "never answered", "orange: an isError result", "✕", "withheld", "exited", "↻", "started again",
                 "✖", "raised", "blue: a request from the server"):
        assert said in words, said
    assert 'stroke-dasharray="6,4"' in legend and 'stroke-dasharray="2,3"' in legend  # drawn as the arrows are
    assert text.count('<ul class="legend"') == 1 and text.index("legend") < text.index("<section")


def test_the_summary_table_puts_failures_first_in_words_each_linked_to_its_item() -> None:
    verdicts = [Verdict(1, "connect", "connects", "pass", 0.1, "fine"), Verdict(5, "names", "names", "fail", 0.2, "x"),
                Verdict(3, "paging", "pages", "error", 0.3, "x"), Verdict(2, "errors", "errors", "fail", 0.4, "x"),
                Verdict(12, "E2-list-changes", "changes", "pass", 0.1, "fine")]
    text = page("MCP client lab · starter", "2/4 passed", verdicts)
    table = text[text.index('<table class="summary"'):text.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]  # the header row first
    said = [html.unescape(re.sub(r"<[^>]+>", " ", r)).split() for r in rows]
    assert [(words[0], words[1]) for words in said] == [("FAIL", "2"), ("FAIL", "5"), ("ERROR", "3"), ("PASS", "1"),
                                                        ("PASS", "E2")]
    assert all(f'href="#item-{n}"' in row for n, row in zip(["2", "5", "3", "1", "E2"], rows))
    assert '<span class="badge error">ERROR</span> 3.' in text  # each item's own heading says it in words too


def about() -> About:
    return About(date="2026-12-01 09:30 UTC", target="starter (/home/me/lab/starter)", commit="1a2b3c4",
                 python="3.12.4 (CPython)", version="0.1.0")


def test_the_header_says_when_and_on_what_the_run_was_made() -> None:
    text = page("MCP client lab · starter", "1/2 passed", two_items(), about=about())
    header = html.unescape(re.sub(r"<[^>]+>", " ", text[text.index("<header"):text.index("</header>")]))
    for said in ("2026-12-01 09:30 UTC", "starter (/home/me/lab/starter)", "1a2b3c4", "3.12.4 (CPython)", "0.1.0"):
        assert said in header, said
    unknown = page("MCP client lab · starter", "1/2 passed", two_items(),
                   about=dataclasses.replace(about(), commit=None))
    assert "not a git checkout" in unknown


def test_what_the_header_says_is_read_from_the_lab_and_its_repository_without_git(tmp_path: Path,
                                                                                   monkeypatch: Any) -> None:
    from checks.page import about_run
    found = about_run("starter", ROOT / "starter")
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert version is not None and found.version == version.group(1)
    assert found.python.startswith(sys.version.split()[0]) and found.target.startswith("starter (")
    assert about_run("mine", tmp_path).commit is None  # not in a git checkout
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    monkeypatch.setenv("PATH", str(tmp_path))  # no git at all: the commit is read from the repository's files
    if head.returncode == 0:  # a git checkout; an unpacked archive has none
        assert about_run("starter", ROOT / "starter").commit == head.stdout.strip()[:12]


def test_the_page_a_run_writes_names_its_commit_python_and_version(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    assert run_with_page(report).returncode == 0
    text = html.unescape(report.read_text(encoding="utf-8"))
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          timeout=30)
    if head.returncode == 0:  # a git checkout; an unpacked archive has none
        assert head.stdout.strip() in text
    assert sys.version.split()[0] in text and '<table class="summary"' in text


@pytest.mark.timeout(180)
def test_a_solved_labs_page_shows_what_items_5_6_and_8_judge(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "checks", "--target", "solution", "5", "6", "8", "--html",
                           str(report)], capture_output=True, text=True, timeout=150, cwd=ROOT,
                          env={**os.environ, "MOCK": "1"})
    assert done.returncode == 0, done.stdout[-2000:]
    text = report.read_text(encoding="utf-8")
    sections = {m.group(1): m.group(2) for m in re.finditer(r'<section id="item-(\w+)">(.*?)</section>', text, re.S)}
    bold = {n: set(html.unescape(b) for b in re.findall(r'<tspan font-weight="bold">(.*?)</tspan>', sections[n]))
            for n in ("5", "6")}
    assert bold["5"] == {"search"}  # the name each server received, not the model-facing one
    assert {"queue.stats", "weekly report", "résumé",
            "export_ticket_history_including_comments_and_attachments_for_audit_as_json"} <= bold["6"]
    lanes = drawn_texts(sections["8"])
    assert {"notes (healthy)", "tickets (exits at start)", "tickets (never answers)"} <= set(lanes)


def test_a_healthy_server_started_again_is_drawn_as_a_restart_without_calling_anyone_healthy(tmp_path: Path) -> None:
    from checks.page import diagram
    from checks.trace import wire_events
    wire = wire_events(journal(tmp_path, "notes", [started(0.0, "notes"), *discovered(0.1)],
                               [started(0.5, "notes"), *discovered(0.6)]))
    texts = drawn_texts(diagram(wire))
    assert "started again: notes" in texts and not any("healthy" in t for t in texts)


