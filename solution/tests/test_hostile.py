"""Everything a server sends is hostile: the client's promises, each shown
against a server or an input written to break it. (The fault suite,
`checks/dev/hostile.py`, covers the aggregator against the same servers.)"""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from solution.consent import NO, SESSION, Consent, ConsentRequest, fingerprint
from solution.jsonrpc import MAX_DEPTH, TooDeep, parse_line
from solution.naming import model_tool_name
from solution.stdio_client import child_environment
from solution.commands.views import ProgressBar
from solution.translate import make_entry
from solution.tests.conftest import ROOT

MISBEHAVE = ROOT / "servers" / "misbehave.py"
ATTACKS = ("\x1b[2J", "\x1b]0;", "\x1b]52;", "\r\x1b[2K", "\u202e")


def config(tmp_path: Path, scenario: str, **extra: Any) -> Path:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {
        "notes": {"command": "python", "args": [str(ROOT / "servers" / "notes.py")]},
        "hostile": {"command": "python", "args": [str(MISBEHAVE), "--scenario", scenario], **extra}}}))
    return path


def in_pty(args: List[str], answers: bytes = b"") -> Tuple[int, str]:
    """Run the client on a real terminal; what reached it, and the exit status."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "solution", *args], stdin=follower, stdout=follower,
                               stderr=follower, cwd=ROOT, env={**os.environ, "MOCK": "1"})
    os.close(follower)
    chunks: List[bytes] = []
    deadline = time.monotonic() + 60
    sent = False
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
            if answers and not sent and b"Allow?" in b"".join(chunks):
                os.write(leader, answers)
                sent = True
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(10), b"".join(chunks).decode("utf-8", "replace")


def test_a_line_nested_too_deep_is_refused_before_parsing() -> None:
    with pytest.raises(TooDeep):
        parse_line(b"[" * 1100 + b"]" * 1100)
    inside = MAX_DEPTH - 1  # the object itself is one level
    assert parse_line(b'{"a": ' + b"[" * inside + b"]" * inside + b"}") is not None
    assert parse_line(b'{"s": "' + b"[" * 500 + b'"}') == {"s": "[" * 500}  # brackets in a string are text
    assert parse_line(b'{"n": NaN, "i": -Infinity}') == {"n": None, "i": None}


def test_a_lone_surrogate_in_a_name_still_gets_a_legal_unique_name() -> None:
    name = model_tool_name("s", "x\ud800y")
    assert name.startswith("mcp__s__x_y_") and name != model_tool_name("s", "x\ud801y")


@pytest.mark.skipif(os.name != "posix", reason="a pty")
def test_tools_and_call_put_no_server_escape_code_on_the_terminal(tmp_path: Path) -> None:
    path = config(tmp_path, "hostile-text")
    status, screen = in_pty(["tools", "--config", str(path)])
    assert status == 0 and "mcp__notes__search" in screen and "\\x1b[2J" in screen
    assert not [a for a in ATTACKS if a in screen]
    name = model_tool_name("hostile", "echo")
    status, screen = in_pty(["call", name, "{}", "--config", str(path), "--yes", "--audit", ""])
    assert status == 0 and "safe \\ud800 text" in screen and not [a for a in ATTACKS if a in screen]
    status, screen = in_pty(["call", name, "{}", "--config", str(path), "--yes", "--audit", "", "--json"])
    assert status == 0 and "\\u001b[2J" in screen and not [a for a in ATTACKS if a in screen]
    assert '"n": null' in screen  # NaN is not JSON; it never reaches the output as NaN


@pytest.mark.skipif(os.name != "posix", reason="a pty")
def test_the_consent_prompt_cannot_be_redrawn_by_a_title(tmp_path: Path) -> None:
    path = config(tmp_path, "hostile-text", trusted=False)
    status, screen = in_pty(["call", model_tool_name("hostile", "echo"), "{}", "--config", str(path),
                             "--audit", ""], answers=b"n\n")
    prompt = screen[screen.index("hostile (server marked untrusted) wants to run echo"):]
    assert "Allow?" in prompt and not [a for a in ATTACKS if a in prompt]
    assert status == 1 and "declined" in screen


async def ask_session(request: ConsentRequest) -> str:
    ASKED.append(request)
    return SESSION


ASKED: List[ConsentRequest] = []


@pytest.mark.anyio
async def test_a_changed_tool_asks_again_and_says_what_changed() -> None:
    ASKED.clear()
    consent = Consent(ask_session)
    tool: Dict[str, Any] = {"name": "deploy", "description": "Deploy to staging.", "inputSchema": {"type": "object"},
                            "annotations": {"readOnlyHint": False, "destructiveHint": False}}
    before = make_entry("s", tool, "mcp__s__deploy")
    assert [await consent.decide(before, {}) for _ in range(2)] == [SESSION, SESSION] and len(ASKED) == 1
    pulled = make_entry("s", {**tool, "description": "Deploy to production.",
                              "annotations": {"destructiveHint": True, "openWorldHint": True}}, "mcp__s__deploy")
    assert fingerprint(pulled.tool) != fingerprint(before.tool)
    assert await consent.decide(pulled, {}) == SESSION and len(ASKED) == 2
    assert ASKED[1].changed == ("description", "annotations")
    assert "CHANGED since you allowed it for the session: description, annotations" in ASKED[1].describe()


def test_a_server_starts_with_a_short_environment_plus_what_its_config_names() -> None:
    parent = {"PATH": "/bin", "HOME": "/h", "ANTHROPIC_API_KEY": "k", "GITHUB_TOKEN": "t", "EXTRA": "e"}
    assert child_environment({"OWN": "1"}, False, parent) == {"PATH": "/bin", "HOME": "/h", "OWN": "1"}
    assert child_environment({}, ("EXTRA",), parent) == {"PATH": "/bin", "HOME": "/h", "EXTRA": "e"}
    assert child_environment({}, True, parent) == parent


def test_the_audit_log_keeps_one_object_per_line_and_an_unusable_path_stops_before_any_call(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    run = [sys.executable, "-m", "solution", "call", "mcp__notes__search",
           json.dumps({"query": "a\u2028b\ud800"}), "--audit"]
    done = subprocess.run([*run, str(audit)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = audit.read_bytes().split(b"\n")
    assert len(lines) == 2 and lines[1] == b"" and json.loads(lines[0])["arguments"]["query"] == "a\u2028b\ud800"
    journal = tmp_path / "notes.jsonl"
    done = subprocess.run([*run, str(tmp_path / "no" / "such" / "dir.jsonl")], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env={**os.environ, "MCP_LAB_JOURNAL": str(journal)})
    assert done.returncode == 2 and done.stderr.startswith("error: cannot write the audit log")
    assert "Traceback" not in done.stderr and not journal.exists()  # no server was even started


@pytest.mark.parametrize("text, words", [(b"\xff\xfe{", "not UTF-8 text (byte 0 is 0xff)"),
                                         (b'{"mcpServers": ' + b"[" * 100_000 + b"}", "nested too deeply")])
def test_an_unusable_config_is_one_line_and_exit_2(tmp_path: Path, text: bytes, words: str) -> None:
    path = tmp_path / "servers.json"
    path.write_bytes(text)
    done = subprocess.run([sys.executable, "-m", "solution", "tools", "--config", str(path)],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and words in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("value", ["nan", "inf", "1e309", "0"])
def test_a_timeout_that_no_timer_can_use_is_refused(value: str) -> None:
    done = subprocess.run([sys.executable, "-m", "solution", "tools", "--timeout", value],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and "--timeout wants a finite number of seconds above 0" in done.stderr


def test_progress_is_a_bar_not_a_line_per_notification() -> None:
    out = io.StringIO()
    bar = ProgressBar(out)
    for step in range(1, 50_001):
        bar(step, 50_000, "\x1b[2Jstep")
    lines = out.getvalue().splitlines()
    assert 1 <= len(lines) <= 11 and all("\x1b" not in line for line in lines) and "50000/50000" in lines[-1]


def test_a_reply_whose_id_differs_only_in_type_is_not_matched_and_is_named() -> None:
    from solution.jsonrpc import PendingRequests
    pending = PendingRequests()
    request_id, _ = pending.open("tools/list")
    assert pending.get(str(request_id)) is None and pending.get(float(request_id)) is None
    assert pending.near_miss(str(request_id)) == request_id == pending.near_miss(float(request_id))
    assert pending.near_miss("x") is None and pending.near_miss(True) is None and pending.near_miss(7) is None


@pytest.mark.anyio
async def test_a_timeout_after_a_reply_with_a_string_id_says_so() -> None:
    import anyio
    from solution.config import ServerSpec
    from solution.errors import RequestTimeout
    from solution.stdio_client import StdioClient
    echo_as_string = ("import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n"
                      "    print(json.dumps({'jsonrpc': '2.0', 'id': str(m['id']), 'result': {}}), flush=True)\n")
    async with anyio.create_task_group() as group:
        # Only a timeout can end the request (the reply never matches); 3 s lets a busy machine start the server.
        client = StdioClient(ServerSpec("stringly", sys.executable, ("-c", echo_as_string)), request_timeout=3.0)
        await client.start(group)
        try:
            with pytest.raises(RequestTimeout, match=r"within 3 s; the server did answer, with id '1' "
                                                     r"where the request's id is 1"):
                await client.request("tools/list")
        finally:
            await client.aclose()


@pytest.mark.anyio
async def test_the_transcript_says_not_sent_when_a_call_never_left_the_client(fixture: Any) -> None:
    from contextlib import redirect_stdout

    from solution.agent import run_agent
    from solution.host.aggregator import Aggregator
    from solution.commands.transcript import print_run
    from solution.config import config_of
    from solution.consent import always
    from solution.model import ModelTurn, ToolCall

    class Scripted:
        name, api = "scripted", "anthropic"

        def __init__(self) -> None:
            self.turns = [ModelTurn("", [ToolCall("c1", "mcp__tickets__close_ticket", {"ticket_id": "T-101"})]),
                          ModelTurn("", [ToolCall("c2", "mcp__tickets__schedule_followup", {"ticket_id": 5})]),
                          ModelTurn("done")]

        async def next_turn(self, system: str, tools: Any, messages: Any) -> ModelTurn:
            return self.turns.pop(0)

    async with Aggregator(config_of([fixture("tickets").spec])) as tools:
        await tools.refresh()
        tools.consent = Consent(always(NO))
        run = await run_agent("close it", tools, Scripted(), max_steps=4)
    out = io.StringIO()
    with redirect_stdout(out):
        print_run(run, "model: scripted")
    text = out.getvalue()
    assert "-> not sent: declined" in text and "-> not sent: invalid arguments" in text
    assert "sent to tickets" not in text


@pytest.mark.skipif(os.name != "posix", reason="a pty")
@pytest.mark.parametrize("signal_name,status", [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
def test_a_signal_at_a_consent_prompt_ends_the_client_at_once_with_its_servers(
        tmp_path: Path, signal_name: str, status: int) -> None:
    import signal
    journal = tmp_path / "notes.jsonl"
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"notes": {"command": sys.executable, "args": [
        str(ROOT / "servers" / "notes.py"), "--journal", str(journal)]}}}))
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "solution", "call", "mcp__notes__add_note",
                                '{"title": "t", "body": "b"}', "--config", str(path), "--audit", ""],
                               stdin=follower, stdout=follower, stderr=follower, cwd=ROOT,
                               env={**os.environ, "MOCK": "1"})
    os.close(follower)
    screen = b""
    deadline = time.monotonic() + 60
    while b"Allow?" not in screen and time.monotonic() < deadline:
        if select.select([leader], [], [], 0.5)[0]:
            screen += os.read(leader, 65536)
    assert b"Allow?" in screen, screen
    process.send_signal(getattr(signal, signal_name))  # nobody ever presses Enter
    try:
        assert process.wait(30) == status
    finally:
        process.kill()
        while select.select([leader], [], [], 0.1)[0]:
            try:
                screen += os.read(leader, 65536)
            except OSError:
                break
        os.close(leader)
    assert b"Traceback" not in screen and b"every server was closed" in screen, screen
    pid = next(json.loads(line)["pid"] for line in journal.read_text().splitlines() if '"start"' in line)
    for _ in range(100):  # reaped by now, or about to be: the process table settles
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"the notes server (pid {pid}) outlived the client")


@pytest.mark.skipif(os.name != "posix", reason="a pty")
def test_tools_on_a_terminal_declares_elicitation_as_call_and_ask_do(tmp_path: Path) -> None:
    journal = tmp_path / "notes.jsonl"
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"notes": {"command": sys.executable, "args": [
        str(ROOT / "servers" / "notes.py"), "--journal", str(journal)]}}}))
    status, screen = in_pty(["tools", "--config", str(path)])
    assert status == 0, screen
    asked = [json.loads(line)["msg"] for line in journal.read_text().splitlines() if '"server/discover"' in line]
    capabilities = asked[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert capabilities.get("elicitation") == {"form": {}}, capabilities
