"""The fault suite: the reference client against servers that go wrong.

    python -m checks.dev.faults        one line: scenarios run, survived, left behind, hangs

Each scenario pairs a broken server with the healthy note library and claims
four things: the client stays up, the note library keeps working, the failure
reaches the caller as a clear reason (offline table or `isError` text), and
when the client closes no process is left (checked in the process table, by
the pids the servers wrote to their journals). Every scenario has a deadline.

A catalogue: each scenario is a few lines of setup and claim; the shared lab
is fault_lab.py, the hostile half hostile.py.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional

import anyio

from checks.dev.fault_lab import GENEROUS, FaultLab, Scenario, beside_notes, offline_with, text
from checks.fixtures import process_exists, still_running
from checks.reaper import sleeping
from checks.dev.hostile import HOSTILE_SCENARIOS
from checks.target import ROOT
from solution.host.aggregator import Aggregator
from solution.config import ServerSpec, parse_config
from solution.errors import ConfigError
from solution.stdio_client import MAX_LINE_BYTES, STDERR_TAIL_BYTES

# -- the scenarios ---------------------------------------------------------------

async def exits_at_start(lab: FaultLab) -> str:
    return await beside_notes(lab, lab.spec("tickets", "tickets", "--fail", "exit-at-start"),
                              offline_with("exit status 3", "cannot open the ticket database"))


async def command_not_found(lab: FaultLab) -> str:
    return await beside_notes(lab, ServerSpec("ghost", "no-such-mcp-server-for-the-lab"),
                              offline_with("command not found", "no-such-mcp-server-for-the-lab"))


async def not_executable(lab: FaultLab) -> str:
    script = lab.directory / "server.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    return await beside_notes(lab, ServerSpec("noexec", str(script)), offline_with("not executable"))


async def dies_mid_call(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        began = time.monotonic()
        result = await tools.call("mcp__crashy__echo", {"text": "hi"})
        took = time.monotonic() - began
        # Ended by the exit (its status and stderr), not by the 10 s timeout.
        assert result["isError"] and "exit status 7" in text(result) and "crashing" in text(result), text(result)
        return f"failed after {took * 1000:.0f} ms: {text(result)[:80]}"
    return await beside_notes(lab, lab.spec("crashy", "misbehave", "--scenario", "die-mid-call"), check,
                              timeout=10.0)


async def never_answers(lab: FaultLab) -> str:
    return await beside_notes(lab, lab.spec("tickets", "tickets", "--fail", "never-answer"),
                              offline_with("no reply to server/discover or initialize within 0.3 s"),
                              timeout=0.3)


async def answers_after_the_timeout(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        late = await tools.call("mcp__lagging__read_note", {"id": "n-1"})
        assert late["isError"] and "no reply to tools/call within 1 s" in text(late), text(late)
        # Wait (bounded) until the server has dealt with the late call: it must find nothing waiting.
        with anyio.fail_after(GENEROUS):
            while not answered(lab, late_id(lab)):
                await anyio.sleep(0.01)
        fresh = await tools.call("mcp__lagging__search", {"query": "naming"})
        assert fresh["structuredContent"]["results"][0]["id"] == "n-3", fresh
        return "timed out at 1 s; the late reply was ignored; the next call got its own answer"
    return await beside_notes(lab, lab.spec("lagging", "notes", "--latency", "read_note=3"), check,
                              timeout=1.0)


def answered(lab: FaultLab, request_id: Any) -> bool:
    """The server wrote its reply to `request_id`, or withheld it after a cancellation."""
    return any((e.get("kind") == "out" and (e.get("msg") or {}).get("id") == request_id)
               or (e.get("kind") == "dropped" and e.get("id") == request_id) for e in lab.entries())


def late_id(lab: FaultLab) -> Any:
    """The request id of the call to read_note, from the journal."""
    return next((e["msg"]["id"] for e in lab.entries() if e.get("kind") == "in"
                 and (e.get("msg", {}).get("params") or {}).get("name") == "read_note"), None)


async def answers_slowly_in_time(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        slow = await tools.call("mcp__slow__read_note", {"id": "n-2"})
        assert not slow.get("isError") and slow["structuredContent"]["id"] == "n-2", slow
        return "answered after 0.3 s, inside its timeout"
    return await beside_notes(lab, lab.spec("slow", "notes", "--latency", "read_note=0.3"), check)


async def writes_noise(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        for word in ("one", "two"):
            result = await tools.call("mcp__noisy__echo", {"text": word})
            assert text(result) == "called echo" and not result.get("isError"), result
        noise = list(tools.connections["noisy"].client.noise)
        assert noise, "the non-JSON lines should have been noticed"
        return f"ignored {len(noise)} kinds of junk, unknown ids and duplicate replies"
    return await beside_notes(lab, lab.spec("noisy", "misbehave", "--scenario", "noise"), check)


async def huge_line_accepted(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        result = await tools.call("mcp__big__echo", {"text": "x"})
        assert len(text(result)) == 10 * 1024 * 1024, len(text(result))
        return f"a 10 MB line accepted (the limit is {MAX_LINE_BYTES // (1024 * 1024)} MiB)"
    return await beside_notes(lab, lab.spec("big", "misbehave", "--scenario", "huge-reply"), check,
                              timeout=10.0)


async def huge_line_refused(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        result = await tools.call("mcp__big__echo", {"text": "x"})
        assert result["isError"] and f"longer than {MAX_LINE_BYTES} bytes" in text(result), text(result)
        return text(result)[:100]
    return await beside_notes(lab, lab.spec("big", "misbehave", "--scenario", "huge-reply", "--size-mb", "20"),
                              check, timeout=10.0)


async def floods_stderr(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        client = tools.connections["loud"].client
        assert text(await tools.call("mcp__loud__echo", {})) == "called echo"
        assert 0 < len(client.stderr_tail()) <= STDERR_TAIL_BYTES
        return f"10 MB of stderr drained; {len(client.stderr_tail())} bytes kept"
    return await beside_notes(lab, lab.spec("loud", "misbehave", "--scenario", "stderr-flood"), check)


async def closes_stdout(lab: FaultLab) -> str:
    return await beside_notes(lab, lab.spec("mute", "misbehave", "--scenario", "close-stdout"),
                              offline_with("closed its output"))


async def ignores_eof(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        assert text(await tools.call("mcp__deaf__echo", {})) == "called echo"
        return "served normally"
    began = time.monotonic()
    account = await beside_notes(lab, lab.spec("deaf", "misbehave", "--scenario", "ignore-eof"), check,
                                 close_grace=0.5)
    took = time.monotonic() - began
    return f"{account}; deaf to EOF and SIGTERM, killed within {took:.1f} s"


async def spawns_a_child(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        children = [e["pid"] for e in lab.entries() if e.get("kind") == "child"]
        assert children and process_exists(children[0])
        return f"its child (pid {children[0]}) goes with its process group"
    return await beside_notes(lab, lab.spec("parent", "misbehave", "--scenario", "spawn-child"), check)


async def same_cursor_forever(lab: FaultLab) -> str:
    return await beside_notes(lab, lab.spec("loop", "misbehave", "--scenario", "same-cursor"),
                              offline_with("tools/list did not end after 100 pages"))


async def pages_without_end(lab: FaultLab) -> str:
    return await beside_notes(lab, lab.spec("loop", "misbehave", "--scenario", "endless-pages"),
                              offline_with("tools/list did not end after 100 pages"))


async def ten_thousand_tools(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        mine = [e for e in tools.entries.values() if e.alias == "wide"]
        assert len(mine) == 10_000
        await tools.call("mcp__wide__tool_09999", {})
        assert lab.calls()[-1] == "tool_09999"
        return "10,000 tools over 10 pages; the last one called by its original name"
    return await beside_notes(lab, lab.spec("wide", "misbehave", "--scenario", "many-tools"), check,
                              timeout=10.0)


async def odd_tools(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        kept = {e.original_name: e.model_name for e in tools.entries.values() if e.alias == "odd"}
        assert sorted(kept) == sorted(["twice", "with space", "naïve_ünïcode", "n" * 200]), kept
        assert [d.split(":")[0] for d in tools.dropped] == ["odd/no schema at all", "odd/string_schema", "odd/twice"]
        for original, model_name in kept.items():
            await tools.call(model_name, {})
            assert lab.calls()[-1] == original
        return "no-schema and non-object schemas left out with reasons; duplicates kept once; " \
               "odd names made legal and called by their originals"
    return await beside_notes(lab, lab.spec("odd", "misbehave", "--scenario", "odd-tools"), check)


KILLED_CLIENT = """
import sys, anyio
from solution.host.aggregator import Aggregator
from solution.config import ServerSpec, config_of
split = sys.argv.index("--")
specs = [ServerSpec("notes", sys.executable, tuple(sys.argv[1:split]), {}, None),
         ServerSpec("deaf", sys.executable, tuple(sys.argv[split + 1:]), {}, None)]
async def main():
    async with Aggregator(config_of(specs)) as tools:
        await tools.refresh()
        print("ready", flush=True)
        await anyio.sleep_forever()
anyio.run(main)
"""


async def client_killed(lab: FaultLab) -> str:
    notes = lab.spec("notes", "notes")
    deaf = lab.spec("deaf", "misbehave", "--scenario", "ignore-eof")
    client = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, *notes.args, "--", *deaf.args],
                              stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert client.stdout is not None
        ready = await anyio.to_thread.run_sync(client.stdout.readline)
        assert ready.strip() == b"ready", ready
        pids = lab.pids()
        assert len(pids) == 2, f"expected two servers, journals show {pids}"
        client.send_signal(signal.SIGKILL)
        client.wait(5)
        began = time.monotonic()
        left = await anyio.to_thread.run_sync(still_running, pids, 5.0)
        assert not left, f"servers outlived the killed client: {left}"
        return f"client SIGKILLed; its {len(pids)} servers were gone {time.monotonic() - began:.2f} s later"
    finally:
        if client.poll() is None:
            client.kill()
        if client.stdout:
            client.stdout.close()


async def missing_cwd(lab: FaultLab) -> str:
    spec = replace(lab.spec("lost", "notes"), cwd=str(lab.directory / "no-such-directory"))
    return await beside_notes(lab, spec, offline_with("working directory not found", "no-such-directory"))


TREE_SERVER = ("import os, subprocess, sys; subprocess.Popen(['sleep', sys.argv[1]]); "
               "os.execv(sys.executable, [sys.executable, *sys.argv[2:]])")


def tree_chain(lab: FaultLab, marker: str) -> Path:
    """A config whose server is a process tree, as `npx ...` makes one: `sh -c`
    runs a python that starts a grandchild (sleep MARKER), then becomes the notes
    server, which never answers tools/list, so the client waits in discovery."""
    notes = lab.spec("tree", "notes", "--silent", "tools/list")
    line = " ".join(shlex.quote(a) for a in [sys.executable, "-c", TREE_SERVER, marker, *notes.args])
    path = lab.directory / "tree.json"
    path.write_text(json.dumps({"mcpServers": {"tree": {"command": "sh", "args": ["-c", f"{line}; true"],
                                                        "timeout": 60}}}))
    return path


async def process_tree(lab: FaultLab) -> str:
    accounts = []
    for name, sig in (("SIGTERM", signal.SIGTERM), ("SIGKILL", signal.SIGKILL)):
        marker = str(800000 + os.getpid() % 1000 * 10 + sig)
        client = subprocess.Popen([sys.executable, "-m", "solution", "tools", "--config", str(tree_chain(lab, marker))],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        journal = lab.journals[-1]
        try:
            with anyio.fail_after(GENEROUS):  # until the grandchild runs and this server waits on tools/list
                while not (sleeping(marker) and journal.exists() and "tools/list" in journal.read_text()):
                    await anyio.sleep(0.02)
            client.send_signal(sig)
            status = await anyio.to_thread.run_sync(client.wait, GENEROUS)
            left = await anyio.to_thread.run_sync(still_running, sleeping(marker), 5.0)
            assert not left, f"after {name} of the client, its server's child still runs: {left}"
            accounts.append(f"{name}: exit {status}, tree gone")
        finally:
            if client.poll() is None:
                client.kill()
            for pid in sleeping(marker):
                os.kill(pid, signal.SIGKILL)
    return "; ".join(accounts)


def config_problem(text_: str, words: str, environ: Optional[Dict[str, str]] = None) -> Callable[[FaultLab], Awaitable[str]]:
    async def scenario(lab: FaultLab) -> str:
        try:
            config = parse_config(text_, "servers.json", environ=environ or {})
        except ConfigError as exc:
            assert words in str(exc), str(exc)
            return str(exc)
        assert any(words in w for w in config.warnings), config.warnings
        return config.warnings[0]
    return scenario


SCENARIOS = [
    Scenario("exits at start", exits_at_start),
    Scenario("command not found", command_not_found),
    Scenario("not executable", not_executable),
    Scenario("dies mid-call", dies_mid_call),
    Scenario("never answers", never_answers),
    Scenario("answers after the timeout", answers_after_the_timeout),
    Scenario("answers slowly but in time", answers_slowly_in_time),
    Scenario("noise, unknown ids, no ids, duplicate replies", writes_noise),
    Scenario("a 10 MB line", huge_line_accepted),
    Scenario("a line past the limit", huge_line_refused),
    Scenario("10 MB on stderr before replying", floods_stderr),
    Scenario("closes stdout, keeps running", closes_stdout),
    Scenario("ignores stdin EOF and SIGTERM", ignores_eof),
    Scenario("starts a child of its own", spawns_a_child),
    Scenario("the same cursor forever", same_cursor_forever),
    Scenario("pages without end", pages_without_end),
    Scenario("10,000 tools", ten_thousand_tools),
    Scenario("tools with odd names and schemas", odd_tools),
    Scenario("the client is killed with SIGKILL", client_killed),
    Scenario("config: duplicate alias", config_problem(
        '{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}', "duplicate key 'a'")),
    Scenario("config: invalid alias", config_problem(
        '{"mcpServers": {"a.b": {"command": "x"}}}', "invalid server alias 'a.b'")),
    Scenario("config: missing command", config_problem(
        '{"mcpServers": {"a": {"args": []}}}', "'command' is missing")),
    Scenario("config: unknown keys", config_problem(
        '{"mcpServers": {"a": {"command": "x", "disabled": true}}}', "ignoring unknown keys disabled")),
    Scenario("config: a missing variable", config_problem(
        '{"mcpServers": {"a": {"command": "${NOPE}"}}}', "${NOPE} is not set")),
    Scenario("config: a timeout that is not finite", config_problem(
        '{"mcpServers": {"a": {"command": "x", "timeout": NaN}}}', "finite number of seconds")),
    Scenario("config: nested 100,000 levels deep", config_problem(
        '{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply")),
    Scenario("a working directory that does not exist", missing_cwd),
    Scenario("sh -c, a child, a grandchild: the client killed", process_tree, limit=60.0),
    *HOSTILE_SCENARIOS,
]


@dataclass
class Outcome:
    name: str
    survived: bool
    hung: bool
    left_behind: List[int]
    seconds: float
    account: str


def run_scenario(scenario: Scenario) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="mcp-fault-") as directory:
        lab = FaultLab(Path(directory))
        began = time.monotonic()
        survived, hung, account = False, False, ""

        async def body() -> None:
            nonlocal account
            with anyio.fail_after(scenario.limit):
                account = await scenario.run(lab)
        try:
            anyio.run(body)
            survived = True
        except TimeoutError:
            hung, account = True, f"did not finish within {scenario.limit:g} s"
        except AssertionError as exc:
            account = f"did not hold: {exc}"
        except Exception as exc:  # the client raised where it should have reported
            account = f"raised {type(exc).__name__}: {exc}"
        left = still_running(lab.pids())
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return Outcome(scenario.name, survived and not left, hung, left, time.monotonic() - began, account)


def main() -> int:
    outcomes = []
    for scenario in SCENARIOS:
        outcome = run_scenario(scenario)
        outcomes.append(outcome)
        mark = "ok  " if outcome.survived else "FAIL"
        print(f"{mark} {outcome.name:<48} {outcome.seconds:5.2f} s  {outcome.account[:90]}", flush=True)
    survived = sum(o.survived for o in outcomes)
    left = sum(len(o.left_behind) for o in outcomes)
    hangs = sum(o.hung for o in outcomes)
    print(f"faults: {len(outcomes)} scenarios run, {survived} survived, "
          f"{left} processes left behind, {hangs} hangs")
    return 0 if survived == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
