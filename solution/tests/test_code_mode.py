"""Code mode: a script type-checked against the stubs, run in the Monty sandbox
with limits, every call inside it on the client's own path (consent, audit,
validation), and only what it prints given back to the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator, Dict, List

import anyio
import pytest

from solution.agent import run_agent, system_prompt
from solution.host.aggregator import Aggregator
from solution.code_mode.run_script import RUN_SCRIPT, CodeMode
from solution.config import config_of
from solution.consent import NO, ONCE, Consent, ConsentRequest
from solution.host.audit import AuditLog
from solution.code_mode.mock_code import CodeModeMock
from solution.model import result_text
from solution.code_mode.sandbox import Limits
from solution.tests.conftest import alive
from servers.notes import NOTES

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
DIGEST_QUESTION = "Read the notes about timeouts, naming and paging, and save their titles as one new note"
SECRET = "lab-secret-7f3a"


def children_named(parent: int, name: bytes) -> List[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent \
                    and name in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def monty_workers() -> List[int]:
    """Sandbox workers that are children of this process (none may outlive a run)."""
    return children_named(os.getpid(), b"monty")


class Asked:
    """A consent asker that records each question and gives one answer."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.requests: List[ConsentRequest] = []

    async def __call__(self, request: ConsentRequest) -> str:
        self.requests.append(request)
        return self.answer


@pytest.fixture
async def code(fixture: Any, tmp_path: Path) -> AsyncIterator[Dict[str, Any]]:
    notes, tickets = fixture("notes"), fixture("tickets")
    async with Aggregator(config_of([notes.spec, tickets.spec])) as tools:
        asked = Asked(NO)
        tools.consent = Consent(asked)
        tools.audit = AuditLog(tmp_path / "audit.jsonl")
        await tools.refresh()
        yield {"code": CodeMode(tools), "tools": tools, "notes": notes, "tickets": tickets, "asked": asked,
               "audit": tmp_path / "audit.jsonl"}


async def run(code: CodeMode, script: str) -> Any:
    return await code.call(RUN_SCRIPT, {"script": script})


async def test_a_script_that_misuses_a_type_is_refused_before_it_runs_with_the_line(code: Dict[str, Any]) -> None:
    script = "from tickets import set_priority\n\nawait set_priority(ticket_id='T-101', priority='urgent')\n"
    result = await run(code["code"], script)
    assert result["isError"] and "refused before it ran (type check)" in result_text(result)
    assert "script.py:3:" in result_text(result) and "urgent" in result_text(result)
    assert code["tickets"].calls() == []  # nothing reached the server


async def test_many_tool_results_come_back_as_the_printed_line_only(code: Dict[str, Any]) -> None:
    script = ("from notes import search, read_note\n"
              "found = await search(query='timeouts naming paging')\n"
              "bodies = [(await read_note(id=hit['id']))['body'] for hit in found['results']]\n"
              "print(f'{len(bodies)} notes, {sum(len(b) for b in bodies)} characters')\n")
    result = await run(code["code"], script)
    size = sum(len(NOTES[note_id]["body"]) for note_id in ("n-1", "n-2", "n-3"))
    assert result_text(result) == f"3 notes, {size} characters\n"  # the bodies stayed in the script
    assert [c["name"] for c in code["notes"].calls()] == ["search", "read_note", "read_note", "read_note"]
    audit = [json.loads(line) for line in code["audit"].read_text().splitlines()]
    assert [(a["tool"], a["via"], a["outcome"]) for a in audit] == \
        [("search", RUN_SCRIPT, "ok")] + [("read_note", RUN_SCRIPT, "ok")] * 3


async def test_a_destructive_call_asks_like_a_direct_one_and_a_decline_raises_in_the_script(
        code: Dict[str, Any]) -> None:
    script = ("from tickets import close_ticket\n"
              "try:\n"
              "    await close_ticket(ticket_id='T-101')\n"
              "except RuntimeError as error:\n"
              "    print('not closed:', error)\n")
    result = await run(code["code"], script)
    assert not result["isError"] and result_text(result).startswith("not closed: tickets.close_ticket (not sent: "
                                                                   "declined)")
    [asked] = code["asked"].requests
    assert (asked.alias, asked.original_name, asked.arguments) == ("tickets", "close_ticket", {"ticket_id": "T-101"})
    assert code["tickets"].calls() == []
    [line] = [json.loads(x) for x in code["audit"].read_text().splitlines()]
    assert (line["tool"], line["decision"], line["via"]) == ("close_ticket", "no", RUN_SCRIPT)


async def test_an_error_result_raises_with_the_servers_words(code: Dict[str, Any]) -> None:
    script = "from notes import read_note\nawait read_note(id='n-99')\nprint('unreachable')\n"
    result = await run(code["code"], script)
    text = result_text(result)
    assert result["isError"] and "The script raised" in text and "No note with id 'n-99'" in text
    assert 'File "script.py", line 2' in text and "unreachable" not in text


async def test_invalid_arguments_never_leave_the_client(code: Dict[str, Any]) -> None:
    # The type checker cannot see a pattern; the client's own schema check still runs.
    script = "from tickets import schedule_followup\nawait schedule_followup(ticket_id='101', date='x')\n"
    result = await run(code["code"], script)
    assert result["isError"] and "not sent: invalid arguments" in result_text(result)
    assert code["tickets"].calls() == []


async def test_an_endless_loop_is_stopped_and_the_client_carries_on(code: Dict[str, Any]) -> None:
    code["code"].limits = Limits(seconds=1.0)
    result = await run(code["code"], "n = 0\nwhile True:\n    n += 1\n")
    assert result["isError"] and "more than 1 s of running time" in result_text(result)
    again = await run(code["code"], "from notes import read_note\nprint((await read_note(id='n-2'))['title'])\n")
    assert result_text(again) == "Timeouts\n"
    assert monty_workers() == []


async def test_unbounded_allocation_is_stopped(code: Dict[str, Any]) -> None:
    code["code"].limits = Limits(memory_bytes=16 * 1024 * 1024)
    result = await run(code["code"], "blocks = []\nwhile True:\n    blocks.append('x' * 100000)\n")
    assert result["isError"] and "more than 16 MiB" in result_text(result)
    assert monty_workers() == []


async def test_the_number_of_calls_is_limited(code: Dict[str, Any]) -> None:
    code["code"].limits = Limits(calls=3)
    script = ("from notes import read_note\n"
              "for i in range(10):\n"
              "    try:\n"
              "        await read_note(id='n-1')\n"
              "    except RuntimeError:\n"
              "        pass\n"
              "print('done')\n")
    result = await run(code["code"], script)
    assert len(code["notes"].calls()) == 3  # the fourth never went out, however the script insisted
    assert "done" in result_text(result)  # the script caught each refusal and went on


async def test_gathered_calls_within_the_limit_all_complete(code: Dict[str, Any]) -> None:
    code["code"].limits = Limits(calls=50)
    script = ("import asyncio\nfrom notes import search\n"
              "found = await asyncio.gather(*[search(query='paging') for _ in range(40)])\n"
              "print(len(found), 'searches')\n")
    result = await run(code["code"], script)
    # Counted as calls, not as the sandbox's suspensions (two or so per gathered call).
    assert result_text(result).strip() == "40 searches" and len(code["notes"].calls()) == 40


async def test_printed_output_is_cut_to_the_limit(code: Dict[str, Any]) -> None:
    code["code"].limits = Limits(printed_chars=100)
    result = await run(code["code"], "for i in range(1000):\n    print('line', i)\n")
    text = result_text(result)
    total = sum(len(f"line {i}\n") for i in range(1000))
    assert text.startswith("line 0\n") and f"[... {total - 100} more characters cut" in text and len(text) < 200
    [script] = code["code"].runs
    assert len(script.printed) == 101  # the rest was never kept


ESCAPES = {
    "read a file": ("open('/etc/hostname').read()", "/etc/hostname"),
    "read a file by path": ("from pathlib import Path\nprint(Path('/etc/hostname').read_text())", "/etc/hostname"),
    "write a file": ("from pathlib import Path\nPath('{tmp}/escaped').write_text('x')", "{tmp}/escaped"),
    "list a directory": ("from pathlib import Path\nprint(list(Path('/').iterdir()))", ""),
    "open a socket": ("import socket\ns = socket.socket()", ""),
    "start a process": ("import subprocess\nsubprocess.run(['true'])", ""),
    "os.system": ("import os\nos.system('touch {tmp}/escaped')", "{tmp}/escaped"),
    "read the environment": ("import os\nprint(os.getenv('LAB_SECRET'), dict(os.environ))", ""),
}


@pytest.mark.parametrize("attempt", sorted(ESCAPES))
async def test_a_script_cannot_reach_files_sockets_processes_or_secrets(
        code: Dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attempt: str) -> None:
    monkeypatch.setenv("LAB_SECRET", SECRET)
    source, path = (part.replace("{tmp}", str(tmp_path)) for part in ESCAPES[attempt])
    for script in (source, "\n".join(line + "  # type: ignore" for line in source.splitlines())):
        # Checked, and with the checker silenced: the sandbox itself must refuse.
        result = await run(code["code"], script)
        text = result_text(result)
        assert result["isError"], (script, text)
        assert SECRET not in text and "root:" not in text
        if path and path.startswith(str(tmp_path)):
            assert not Path(path).exists()
        if path == "/etc/hostname":
            assert Path(path).read_text().strip() not in text.replace(path, "")


async def test_offline_servers_are_absent_from_the_stubs(fixture: Any) -> None:
    down = fixture("tickets", "down", "--fail", "exit-at-start")
    async with Aggregator(config_of([fixture("notes").spec, down.spec])) as tools:
        await tools.refresh()
        code = CodeMode(tools)
        description = code.model_tools()[0]["description"]
        assert "# module notes" in description and "module down" not in description
        result = await run(code, "from down import search\n")
        assert result["isError"] and "unresolved-import" in result_text(result)


async def test_the_mock_model_answers_the_demo_with_one_script(code: Dict[str, Any]) -> None:
    code["tools"].consent = Consent(Asked(ONCE))  # add_note writes: allowed once
    run_ = await run_agent(DIGEST_QUESTION, code["code"], CodeModeMock())
    assert run_.model_turns == 2 and [s.model_name for s in run_.steps] == [RUN_SCRIPT]
    [script] = code["code"].runs
    assert [c.original_name for c in script.calls] == ["search", "read_note", "read_note", "read_note", "add_note"]
    assert script.printed.count("\n") == 1 and "saved them as note" in run_.answer
    added = code["notes"].calls()[-1]
    assert added["name"] == "add_note" and added["arguments"]["body"] == "Paging tools/list; Timeouts; Naming"


async def test_without_the_sandbox_installed_a_script_gets_the_way_to_install_it(
        code: Dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pydantic_monty", None)  # as if the extra were not installed
    result = await run(code["code"], "print(1)\n")
    assert result["isError"] and "pip install -e '.[codemode]'" in result_text(result)
    assert code["notes"].calls() == []


def test_the_command_line_says_how_to_enable_code_mode_when_it_cannot(tmp_path: Path) -> None:
    program = ("import sys; sys.modules['pydantic_monty'] = None\n"
               "from solution.commands.cli import main\n"
               "sys.exit(main(['ask', '--code-mode', 'Read note n-2']))\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines()[-1] == ("error: code mode needs the Monty sandbox, which is not "
                                                    "installed: pip install -e '.[codemode]'")


def test_the_transcript_shows_the_script_each_call_and_what_was_printed(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "solution", "ask", "--code-mode", "--yes", "--audit",
                           str(tmp_path / "audit.jsonl"), DIGEST_QUESTION], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "model wrote a script for run_script" in out and "    | found = await search(" in out
    assert out.count("notes / read_note") == 3 and "call 5: notes / add_note" in out
    assert "printed: read 3 notes (Paging tools/list, Timeouts, Naming); saved them as note" in out


def test_a_busy_sandbox_worker_dies_with_a_killed_client() -> None:
    program = ("import anyio\n"
               "from solution.host.process import guard_process_tree\n"
               "from solution.code_mode.sandbox import Limits, run_in_sandbox\n"
               "guard_process_tree()\n"
               "anyio.run(run_in_sandbox, 'while True:\\n    pass\\n', {}, Limits(seconds=120))\n")
    client = subprocess.Popen([sys.executable, "-c", program], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        workers: List[int] = []
        while not workers and time.monotonic() < deadline and client.poll() is None:
            workers = children_named(client.pid, b"monty")
            time.sleep(0.05)
        assert workers, "the sandbox worker never started"
    finally:
        client.kill()  # SIGKILL: no code of the client's runs
        client.wait(30)
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in workers)  # ended by the watchdog, long before its 120 s limit


async def test_a_real_model_is_told_about_code_mode_and_gets_the_stubs_in_its_own_shape(
        code: Dict[str, Any]) -> None:
    prompt = system_prompt(code["code"])
    assert "Code mode: you have one tool, run_script" in prompt and "raises RuntimeError" in prompt
    assert "Code mode" not in system_prompt(code["tools"])  # the plain table needs no such words
    [anthropic] = code["code"].model_tools("anthropic")
    [openai] = code["code"].model_tools("openai")
    assert anthropic["name"] == openai["function"]["name"] == RUN_SCRIPT
    assert anthropic["description"] == openai["function"]["description"]
    assert "async def set_priority(*, ticket_id: str, priority: Literal['low', 'normal', 'high'] | None = None)" \
        in anthropic["description"]


def test_a_script_file_runs_from_the_command_line_and_a_missing_one_is_refused(tmp_path: Path) -> None:
    script = "from notes import read_note\n\nnote = await read_note(id='n-2')\nprint(note['title'])\n"
    done = subprocess.run([sys.executable, "-m", "solution", "script", "-", "--json", "--audit",
                           str(tmp_path / "audit.jsonl")], input=script, cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert result_text(shown["result"]) == "Timeouts\n" and shown["script"]["calls"][0]["original_name"] == "read_note"
    assert json.loads((tmp_path / "audit.jsonl").read_text())["via"] == RUN_SCRIPT
    missing = subprocess.run([sys.executable, "-m", "solution", "script", str(tmp_path / "none.py")], cwd=ROOT,
                             capture_output=True, text=True, timeout=120, env={**os.environ, "MOCK": "1"})
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.strip().splitlines()[-1].endswith(f"cannot read the script {tmp_path / 'none.py'}: "
                                                            f"[Errno 2] No such file or directory: "
                                                            f"'{tmp_path / 'none.py'}'")


async def test_calls_a_script_gathers_still_ask_one_at_a_time(code: Dict[str, Any]) -> None:
    state = {"asking": 0, "most": 0}

    async def slow_person(request: ConsentRequest) -> str:
        state["asking"] += 1
        state["most"] = max(state["most"], state["asking"])
        for _ in range(20):  # yield to every other task: any call running beside this one would enter now
            await anyio.sleep(0)
        state["asking"] -= 1
        return NO
    code["tools"].consent = Consent(slow_person)
    script = ("import asyncio\nfrom tickets import close_ticket\n\n"
              "async def close(ticket: str) -> str:\n"
              "    try:\n"
              "        return await close_ticket(ticket_id=ticket)\n"
              "    except RuntimeError:\n"
              "        return 'kept'\n\n"
              "print(await asyncio.gather(close('T-101'), close('T-102'), close('T-103')))\n")
    result = await run(code["code"], script)
    assert result_text(result) == "['kept', 'kept', 'kept']\n" and state["most"] == 1


async def test_every_fixture_tools_stub_passes_the_sandboxs_own_type_check(code: Dict[str, Any]) -> None:
    modules = code["code"].modules()
    assert [m.name for m in modules] == ["notes", "tickets"]
    script = "".join(f"import {m.name}\n" for m in modules) + \
        "print(sum(1 for m in (" + ", ".join(f"{m.name}.{f}" for m in modules for f in m.originals) + ",)))\n"
    result = await run(code["code"], script)
    assert result_text(result) == f"{sum(len(m.originals) for m in modules)}\n", result_text(result)


async def test_nan_from_a_script_is_refused_before_sending_and_still_recorded(code: Dict[str, Any],
                                                                             tmp_path: Any) -> None:
    audit = tmp_path / "audit.jsonl"
    code["code"].tools.audit = AuditLog(audit)
    script = ("from notes import search\n"
              "try:\n"
              "    await search(query=float('nan'))  # type: ignore\n"
              "except RuntimeError as error:\n"
              "    print('refused:', error)\n")
    result = await run(code["code"], script)
    assert "refused:" in result_text(result) and "not JSON" in result_text(result)
    assert code["notes"].calls() == []  # NaN never reached the wire
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(e["decision"], e["arguments"]["query"]) for e in lines] == [("not sent", "nan")]
    assert len(code["code"].runs[-1].calls) == 1  # the transcript has it too


async def test_stubs_keep_to_the_tools_share_of_the_context(code: Dict[str, Any], monkeypatch: Any) -> None:
    monkeypatch.setenv("MCP_LAB_TOOL_SHARE", "0.0001")  # 80 characters: no module fits
    described = code["code"].description()
    assert "# module notes (server 'notes'): 3 tools, not shown" in described
    assert "async def search" not in described
    monkeypatch.delenv("MCP_LAB_TOOL_SHARE")
    assert "async def search" in code["code"].description()


def test_script_in_text_shows_all_it_printed_line_by_line(tmp_path: Path) -> None:
    script = "from notes import read_note\n\nfor n in (1, 2, 3):\n    print((await read_note(id=f'n-{n}'))['title'])\n"
    done = subprocess.run([sys.executable, "-m", "solution", "script", "-", "--audit", ""], input=script, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 0, done.stderr
    assert "    > Paging tools/list\n    > Timeouts\n    > Naming\n" in done.stdout
