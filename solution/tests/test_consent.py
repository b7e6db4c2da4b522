"""E1: consent decides when to ask; every call is audited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from solution.host.aggregator import Aggregator
from solution.config import config_of
from solution.host.audit import AuditLog
from solution.consent import NO, ONCE, SESSION, Consent, ConsentRequest, runs_without_asking
from solution.tests.conftest import ROOT
from solution.translate import make_entry


def entry(annotations: Any, alias: str = "s", name: str = "t") -> Any:
    tool: Dict[str, Any] = {"name": name, "inputSchema": {"type": "object"}}
    if annotations is not None:
        tool["annotations"] = annotations
    return make_entry(alias, tool, f"mcp__{alias}__{name}")


@pytest.mark.parametrize("annotations, trusted, runs", [
    ({"readOnlyHint": True}, True, True),
    ({"readOnlyHint": True, "destructiveHint": True}, False, False),  # an untrusted server's claim counts for nothing
    ({"readOnlyHint": False, "destructiveHint": False}, True, False),  # writes always ask
    (None, True, False),  # no annotations: the cautious defaults, so it asks
    ({"readOnlyHint": "yes"}, True, False),  # only a real true counts
])
def test_who_runs_without_asking(annotations: Any, trusted: bool, runs: bool) -> None:
    assert runs_without_asking(entry(annotations), trusted) is runs


@pytest.mark.anyio
async def test_session_approval_covers_one_tool_and_no_other() -> None:
    asked: List[ConsentRequest] = []

    async def ask(request: ConsentRequest) -> str:
        asked.append(request)
        return SESSION if request.original_name == "a" else NO
    consent = Consent(ask, {"s": True})
    first, second = entry({"readOnlyHint": False}, name="a"), entry({"readOnlyHint": False}, name="b")
    assert [await consent.decide(first, {"x": 1}) for _ in range(2)] == [SESSION, SESSION]
    assert await consent.decide(second, {}) == NO
    assert [r.original_name for r in asked] == ["a", "b"]
    assert asked[0].arguments == {"x": 1} and "wants to run a" in asked[0].describe()
    assert Consent(ask)._approved == {}  # a new session remembers nothing


@pytest.mark.anyio
async def test_a_declined_call_never_reaches_the_server_and_is_audited(fixture: Any, tmp_path: Path) -> None:
    tickets = fixture("tickets")

    async def refuse(request: ConsentRequest) -> str:
        return NO
    async with Aggregator(config_of([tickets.spec])) as tools:
        await tools.refresh()
        tools.consent = Consent(refuse)
        tools.audit = AuditLog(tmp_path / "audit.jsonl")
        declined = await tools.call("mcp__tickets__close_ticket", {"ticket_id": "T-101"})
        allowed = await tools.call("mcp__tickets__search", {"query": "login"})
    assert declined["isError"] and "declined" in declined["content"][0]["text"]
    assert not allowed.get("isError") and [c["name"] for c in tickets.calls()] == ["search"]
    log = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(e["tool"], e["decision"], e["outcome"]) for e in log] == [
        ("close_ticket", "no", "error"), ("search", "policy", "ok")]
    assert log[0]["arguments"] == {"ticket_id": "T-101"} and log[0]["duration_ms"] >= 0


def test_untrusted_in_the_config_and_the_cli_answers(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"tickets": {
        "command": "python", "args": [str(ROOT / "servers" / "tickets.py")], "trusted": False}}}))
    audit = tmp_path / "audit.jsonl"

    def call(*flags: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([sys.executable, "-m", "solution", "call", "mcp__tickets__queue_stats_af6d318b",
                               "{}", "--config", str(config), "--audit", str(audit), *flags],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                              env={**os.environ, "MOCK": "1"})
    quiet = call()
    assert quiet.returncode == 1 and "declined" in quiet.stdout and "no terminal to ask" in quiet.stderr
    assert call("--yes").returncode == 0
    assert call("--no").returncode == 1
    assert [json.loads(line)["decision"] for line in audit.read_text().splitlines()] == [NO, ONCE, NO]
