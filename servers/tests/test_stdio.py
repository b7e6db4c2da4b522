"""The fixture servers as processes: framing, journal, concurrency, switches."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

from servers.tests.conftest import ROOT, journal, line, replies, request, run_server


def test_runs_as_a_module_and_as_a_file_path() -> None:
    for as_file in (False, True):
        done = run_server("notes", [line(request(1, "server/discover"))], as_file=as_file)
        assert done.returncode == 0
        assert replies(done.stdout)[0]["result"]["supportedVersions"] == ["2026-07-28"]


def test_stdout_carries_only_messages_and_stderr_the_log() -> None:
    done = run_server("tickets", [line(request(1, "tools/list")), b"garbage"])
    assert all(x.startswith(b"{") for x in done.stdout.splitlines())
    assert b"ready" in done.stderr


def test_answers_every_request_read_before_stdin_closed() -> None:
    done = run_server("notes", [line(request(i, "tools/list")) for i in range(1, 6)])
    assert sorted(r["id"] for r in replies(done.stdout)) == [1, 2, 3, 4, 5]


def test_a_slow_call_does_not_hold_up_a_fast_one() -> None:
    done = run_server("notes", [
        line(request(1, "tools/call", name="read_note", arguments={"id": "n-1"})),
        line(request(2, "tools/call", name="search", arguments={"query": "paging"})),
    ], "--latency", "read_note=0.3")
    assert [r["id"] for r in replies(done.stdout)] == [2, 1]


def test_journal_records_start_messages_in_and_out_and_exit(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    run_server("notes", [line(request(1, "server/discover")), b"not json"], "--journal", str(path))
    entries = journal(path)
    kinds = [e["kind"] for e in entries]
    assert kinds[0] == "start" and kinds[-1] == "exit"
    assert entries[0]["pid"] > 0
    ins = [e for e in entries if e["kind"] == "in"]
    assert ins[0]["msg"]["method"] == "server/discover" and ins[1]["raw"] == "not json"
    outs = [e for e in entries if e["kind"] == "out"]
    assert {o["msg"]["id"] for o in outs} == {1, None}
    assert all(isinstance(e["t"], float) for e in entries)
    assert outs[0]["t"] >= ins[0]["t"]


def test_with_evidence_every_journal_line_also_goes_to_the_runner_once_it_says_it_takes_them(tmp_path: Path) -> None:
    path, place = tmp_path / "j.jsonl", str(tmp_path / "runner.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(place)
    listener.listen(1)
    listener.settimeout(10.0)  # bounded: the server connects as it starts
    server = subprocess.Popen([sys.executable, "-m", "servers.notes", "--journal", str(path), "--evidence", place],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        runner, _ = listener.accept()
        runner.settimeout(10.0)
        hello = b""
        while not hello.endswith(b"\n"):
            hello += runner.recv(1)
        assert json.loads(hello) == {"journal": str(path)} and path.read_text() == ""  # it waits for the runner
        runner.sendall(b"\n")
        server.communicate(line(request(1, "server/discover")) + b"\n", timeout=10)
        sent = b""
        while chunk := runner.recv(65536):
            sent += chunk
    finally:
        server.kill()
        listener.close()
    assert [json.loads(x) for x in sent.splitlines()] == journal(path)


def test_a_runner_that_does_not_take_the_account_leaves_the_server_to_its_file(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    done = run_server("notes", [line(request(1, "server/discover"))], "--journal", str(path),
                      "--evidence", str(tmp_path / "nobody.sock"))
    assert replies(done.stdout)[0]["id"] == 1 and journal(path)[0]["kind"] == "start"


def test_journal_can_come_from_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "env.jsonl"
    subprocess.run([sys.executable, "-m", "servers.notes"], input=b"", capture_output=True,
                   timeout=10, cwd=ROOT, env={"MCP_LAB_JOURNAL": str(path), "PATH": ""})
    assert journal(path)[0]["kind"] == "start"


def test_exit_at_start_says_why_on_stderr_and_exits_3() -> None:
    done = run_server("tickets", [], "--fail", "exit-at-start")
    assert done.returncode == 3 and b"ticket database" in done.stderr and done.stdout == b""


def test_never_answer_reads_and_journals_but_never_replies(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    done = run_server("tickets", [line(request(1, "server/discover"))],
                      "--fail", "never-answer", "--journal", str(path))
    assert done.stdout == b""
    assert [e["kind"] for e in journal(path)] == ["start", "in", "exit"]


def test_garbage_mode_writes_a_non_json_line_before_each_reply() -> None:
    done = run_server("notes", [line(request(1, "server/discover"))], "--fail", "garbage")
    lines = done.stdout.splitlines()
    assert lines[0] == b"this line is not JSON-RPC" and replies(done.stdout)[0]["id"] == 1


def test_delay_answers_late() -> None:
    began = time.monotonic()
    run_server("notes", [line(request(1, "server/discover"))], "--delay", "0.3")
    assert time.monotonic() - began >= 0.3


def test_a_cancelled_request_is_not_answered(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
    done = run_server("notes", [line(request(1, "tools/call", name="read_note", arguments={"id": "n-1"})),
                                cancel], "--latency", "read_note=0.2", "--journal", str(path))
    assert replies(done.stdout) == []
    assert any(e["kind"] == "dropped" for e in journal(path))


def test_exits_promptly_when_stdin_closes() -> None:
    process = subprocess.Popen([sys.executable, "-m", "servers.notes"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=5) == 0
    process.stdout.close()  # type: ignore[union-attr]
    process.stderr.close()  # type: ignore[union-attr]


def test_hold_makes_a_call_wait_for_another_reply() -> None:
    done = run_server("notes", [
        line(request(1, "tools/call", name="read_note", arguments={"id": "n-1"})),
        line(request(2, "server/discover")),
    ], "--hold", "read_note")
    assert [r["id"] for r in replies(done.stdout)] == [2, 1]


def test_empty_reply_answers_a_method_with_an_empty_result() -> None:
    done = run_server("notes", [line(request(1, "notes/flush"))], "--empty-reply", "notes/flush")
    assert replies(done.stdout) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_bad_progress_sends_two_malformed_reports_before_the_real_ones() -> None:
    call = request(1, "tools/call", name="rebuild_index", arguments={})
    call["params"]["_meta"]["progressToken"] = "p"
    done = run_server("tickets", [line(call)], "--bad-progress", "--progress-steps", "2", "--progress-gap", "0")
    reports = [r["params"] for r in replies(done.stdout) if r.get("method") == "notifications/progress"]
    assert reports[0]["progress"] == "half" and "progress" not in reports[1]
    assert [r["progress"] for r in reports[2:]] == [1, 2]


def test_annotations_can_be_replaced_or_removed_and_tools_added_on_one_page() -> None:
    done = run_server("notes", [line(request(1, "tools/list"))], "--annotations", "read_note=null",
                      "--annotations", 'search={"readOnlyHint": 1}', "--add-tool", "weekly report",
                      "--add-tool", 'tune={"type": "object", "properties": {"x": {"enum": [0.5]}}}',
                      "--page-size", "10")
    page = replies(done.stdout)[0]["result"]
    tools = {t["name"]: t for t in page["tools"]}
    assert "annotations" not in tools["read_note"] and tools["search"]["annotations"] == {"readOnlyHint": 1}
    assert tools["weekly report"]["annotations"]["readOnlyHint"] is True
    assert tools["tune"]["inputSchema"]["properties"]["x"]["enum"] == [0.5]
    assert len(tools) == 5 and "nextCursor" not in page


def test_an_added_tool_answers_with_its_name_and_arguments() -> None:
    done = run_server("tickets", [line(request(1, "tools/call", name="owner@team", arguments={}))],
                      "--add-tool", "owner@team")
    assert replies(done.stdout)[0]["result"]["content"][0]["text"] == "owner@team ran with {}"


def test_the_journal_start_says_when_the_process_was_started(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    before = time.time()
    run_server("notes", [], "--journal", str(path))
    start = journal(path)[0]
    # The kernel's start time, rounded up to its clock tick: after the spawn, before Python was up.
    assert before - 0.05 < start["forked"] <= start["t"] + 0.02


def test_a_line_nested_too_deep_or_with_an_object_as_its_id_is_answered_and_the_server_goes_on() -> None:
    done = run_server("notes", [b"[" * 100_000 + b"]" * 100_000,
                                b'{"jsonrpc": "2.0", "id": {"an": "object"}, "method": "tools/list"}',
                                line(request(3, "server/discover"))])
    answers = replies(done.stdout)
    got = sorted(((a["id"], a.get("error", {}).get("code")) for a in answers), key=str)  # each on its own thread
    assert got == sorted([(None, -32700), (None, -32600), (3, None)], key=str)


def test_a_listen_hears_the_resource_list_change_and_the_watched_note_of_add_note(tmp_path: Path) -> None:
    listen = request("L", "subscriptions/listen",
                     notifications={"resourcesListChanged": True, "resourceSubscriptions": ["note://n-5"]})
    add = request(2, "tools/call", name="add_note", arguments={"title": "New", "body": "Fresh."})
    path = tmp_path / "j.jsonl"
    done = run_server("notes", [line(listen), line(add)], "--journal", str(path))
    methods = [m.get("method") or m.get("id") for m in replies(done.stdout)]
    assert methods == ["notifications/subscriptions/acknowledged", "notifications/resources/list_changed",
                       "notifications/resources/updated", 2]
    updated = replies(done.stdout)[2]["params"]
    assert updated == {"uri": "note://n-5", "_meta": {"io.modelcontextprotocol/subscriptionId": "L"}}
    sent = [e["msg"].get("method") for e in journal(path) if e["kind"] == "out"]
    assert "notifications/resources/updated" in sent


class Conversation:
    """A fixture process talked to line by line, every read bounded by a deadline."""

    def __init__(self, name: str, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", f"servers.{name}", *args], cwd=ROOT,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.pending = b""

    def send(self, message: dict) -> None:  # type: ignore[type-arg]
        assert self.process.stdin is not None
        self.process.stdin.write(line(message) + b"\n")
        self.process.stdin.flush()

    def read(self, timeout: float = 10.0) -> dict:  # type: ignore[type-arg]
        """The next line, read from the pipe itself (a buffered reader would hide lines from select)."""
        import os
        import selectors

        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as waiting:
            waiting.register(self.process.stdout, selectors.EVENT_READ)
            while b"\n" not in self.pending:
                assert waiting.select(max(0.0, deadline - time.monotonic())), \
                    f"nothing more from the server within {timeout} s"
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, "the server closed its output"
                self.pending += chunk
        first, _, self.pending = self.pending.partition(b"\n")
        return dict(json.loads(first))

    def close(self) -> None:
        self.process.kill()
        self.process.wait(10)


def plain(request_id: object, method: str, **params: object) -> dict:  # type: ignore[type-arg]
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def test_legacy_tickets_ask_the_client_for_a_sampling_and_then_for_roots_again_after_a_change(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    talk = Conversation("tickets", "--era", "legacy", "--lifecycle-tools", "--journal", str(path))
    try:
        talk.send(plain(1, "initialize", protocolVersion="2025-11-25", clientInfo={"name": "t", "version": "1"},
                        capabilities={"sampling": {}, "roots": {"listChanged": True}}))
        assert talk.read()["id"] == 1
        talk.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        talk.send(plain(2, "tools/call", name="draft_reply", arguments={"ticket_id": "T-101"}))
        asked = talk.read()
        assert asked["method"] == "sampling/createMessage" and "T-101" in json.dumps(asked["params"])
        talk.send({"jsonrpc": "2.0", "id": asked["id"],
                   "result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "On it."}}})
        assert talk.read()["result"]["structuredContent"] == {"ticket": "T-101", "draft": "On it.", "model": "m"}
        for request_id, changed in ((3, False), (4, False), (5, True)):
            if changed:
                talk.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
            talk.send(plain(request_id, "tools/call", name="scan_roots", arguments={}))
            got = talk.read()
            if got.get("method") == "roots/list":
                talk.send({"jsonrpc": "2.0", "id": got["id"], "result": {"roots": [{"uri": f"file:///r{request_id}"}]}})
                got = talk.read()
            assert got["id"] == request_id and got["result"]["isError"] is False
    finally:
        talk.close()
    entries = journal(path)
    asked_roots = [e for e in entries if e["kind"] == "out" and e["msg"].get("method") == "roots/list"]
    assert len(asked_roots) == 2  # once, then again only after the change
    assert [e["kind"] for e in entries if e["kind"] == "roots-changed"] == ["roots-changed"]


def test_legacy_set_level_and_subscribe_show_on_the_wire_and_in_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    talk = Conversation("notes", "--era", "legacy", "--lifecycle-tools", "--journal", str(path))
    try:
        talk.send(plain(1, "initialize", protocolVersion="2025-11-25", capabilities={},
                        clientInfo={"name": "t", "version": "1"}))
        talk.read()
        talk.send(plain(2, "logging/setLevel", level="notice"))
        assert talk.read() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        talk.send(plain(3, "resources/subscribe", uri="note://n-2"))
        assert talk.read()["result"] == {}
        talk.send(plain(4, "tools/call", name="edit_note", arguments={"id": "n-2", "body": "Later."}))
        got = [talk.read() for _ in range(3)]
    finally:
        talk.close()
    assert [m.get("method") or m["id"] for m in got] == ["notifications/message", "notifications/resources/updated", 4]
    assert got[1]["params"] == {"uri": "note://n-2"} and got[0]["params"]["level"] == "notice"
    kinds = [(e["kind"], e.get("level") or e.get("uri")) for e in journal(path) if e["kind"] in ("log-level", "subscribed")]
    assert kinds == [("log-level", "notice"), ("subscribed", "note://n-2")]
