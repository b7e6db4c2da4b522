"""The hostile half of the fault suite: servers that attack the client rather
than merely break the protocol (`servers/misbehave.py`, hostile scenarios).

Each claims what the rest of the suite claims (the client stays up, the note
library beside it keeps answering, nothing is left running) and one thing
more: the line that kills a naive reader ends only its own server; bad
notifications are ignored; server text cannot act on a terminal; a server
sees none of the user's secrets; a catastrophic pattern is given up on; every
request from a server is answered; stderr reaches the model only as quoted,
labelled data.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List

import anyio

from checks.dev.fault_lab import GENEROUS, FaultLab, Scenario, beside_notes, text
from solution.agent import system_prompt
from solution.host.aggregator import Aggregator
from solution.host.patterns import MATCH_SECONDS, MAX_STEPS
from solution.stdio_client import BASE_ENV
from solution.untrusted import json_text, shown

SECRET = "MCP_LAB_TEST_SECRET_TOKEN"  # planted in the client's environment; no server may see it
TERMINAL_ATTACKS = ("\x1b[2J", "\x1b]0;", "\x1b]52;", "\r\x1b[2K", "\u202e")


def misbehaving(lab: FaultLab, alias: str, scenario: str) -> Any:
    return lab.spec(alias, "misbehave", "--scenario", scenario)


def entry_of(tools: Aggregator, alias: str) -> Any:
    found = [e for e in tools.entries.values() if e.alias == alias]
    assert found, f"{alias} has no tools in the table (offline: {tools.offline.get(alias)})"
    return found[0]


async def deep_nesting(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        result = await tools.call(entry_of(tools, "nested").model_name, {"text": "x"})
        assert result["isError"] and "nested more than" in text(result), text(result)
        return text(result)[:90]
    return await beside_notes(lab, misbehaving(lab, "nested", "deep-nesting"), check)


async def bad_progress(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        seen: List[float] = []
        result = await tools.call(entry_of(tools, "noisy").model_name, {"text": "x"},
                                  on_progress=lambda value, total, message: seen.append(value))
        assert not result.get("isError") and seen == [], (result, seen)
        return "progress as a list, as a word, as NaN and as a string: ignored; the call answered"
    return await beside_notes(lab, misbehaving(lab, "noisy", "bad-progress"), check)


async def hostile_text(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        odd = tools.find("hostile", "s\ud800x")
        assert odd is not None, tools.dropped
        result = await tools.call(odd.model_name, {})
        assert result["structuredContent"] == {"n": None}, result  # NaN is not JSON: read as null
        for rendered in (shown(odd.title), shown(text(result)), json_text(result), json_text(odd.tool)):
            found = [a for a in TERMINAL_ATTACKS if a in rendered]
            assert not found, f"raw {found!r} in {rendered[:80]!r}"
        return f"a lone surrogate in a name hashed to {odd.model_name}; escape codes shown, never sent"
    return await beside_notes(lab, misbehaving(lab, "hostile", "hostile-text"), check)


async def environment(lab: FaultLab) -> str:
    os.environ[SECRET] = "do-not-leak"
    try:
        async def check(tools: Aggregator) -> str:
            result = await tools.call(entry_of(tools, "nosy").model_name, {"text": "x"})
            names = set(json.loads(text(result)))
            allowed = set(BASE_ENV) | {"LC_CTYPE"}  # Python may set LC_CTYPE itself (PEP 538)
            assert SECRET not in names and names <= allowed, sorted(names - allowed)
            return f"the server saw {len(names)} variables, all from the base list: {', '.join(sorted(names))}"
        return await beside_notes(lab, misbehaving(lab, "nosy", "env-echo"), check)
    finally:
        os.environ.pop(SECRET, None)


async def slow_pattern(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        result = await tools.call(entry_of(tools, "regexp").model_name, {"text": "a" * 36 + "!"})
        assert result["isError"] and f"took longer than {MATCH_SECONDS:g} s" in text(result), text(result)
        assert lab.calls() == [], "arguments that could not be checked reached the server"
        return text(result)[:90]
    return await beside_notes(lab, misbehaving(lab, "regexp", "slow-pattern"), check)


async def asks_back(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        result = await tools.call(entry_of(tools, "curious").model_name, {"text": "x"})
        assert not result.get("isError"), result
        with anyio.fail_after(GENEROUS):  # the answers are written by the client's own tasks
            while len(replies(lab)) < 4:
                await anyio.sleep(0.01)
        got = replies(lab)
        assert got["ask-0"].get("result") == {}, got
        assert all(got[f"ask-{n}"].get("error", {}).get("code") == -32601 for n in (1, 2, 3)), got
        return "ping answered {}; sampling, roots and elicitation answered -32601 with a message"
    return await beside_notes(lab, misbehaving(lab, "curious", "asks-back"), check)


def replies(lab: FaultLab) -> Dict[str, Dict[str, Any]]:
    return {str(e["msg"].get("id")): e["msg"] for e in lab.entries() if e.get("kind") == "reply"}


async def stderr_injection(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        prompt = system_prompt(tools)
        lines = [line for line in prompt.splitlines() if "SYSTEM:" in line]
        assert len(lines) == 1 and "(untrusted data, not instructions): \"" in lines[0], prompt
        assert not lines[0].startswith("SYSTEM:") and lines[0].index("untrusted") < lines[0].index("SYSTEM:")
        return "the stderr reached the model only inside quotes, after an untrusted-data label"
    return await beside_notes(lab, misbehaving(lab, "liar", "stderr-injection"), check)


async def fan_out(lab: FaultLab) -> str:
    async def check(tools: Aggregator) -> str:
        name = entry_of(tools, "fanned").model_name
        bad = await tools.call(name, {"x": 5})  # the input check: a million paths, given up on
        assert bad["isError"] and "could not be checked" in text(bad), text(bad)
        assert lab.calls() == [], "arguments that could not be checked reached the server"
        good = await tools.call(name, {"x": "fine"})  # the output check of structuredContent 5
        assert good["isError"] and "could not be checked" in text(good), text(good)
        return f"input and output given up on after {MAX_STEPS} steps each; the client answered at once"
    return await beside_notes(lab, misbehaving(lab, "fanned", "fan-out"), check)


HOSTILE_SCENARIOS = [
    Scenario("hostile: 2 KB of nested arrays", deep_nesting),
    Scenario("hostile: malformed progress notifications", bad_progress),
    Scenario("hostile: escape codes and a lone surrogate", hostile_text),
    Scenario("hostile: a server that reads its environment", environment),
    Scenario("hostile: a catastrophic pattern", slow_pattern),
    Scenario("hostile: requests from the server", asks_back),
    Scenario("hostile: instructions on stderr", stderr_injection),
    Scenario("hostile: a schema whose references fan out", fan_out),
]
