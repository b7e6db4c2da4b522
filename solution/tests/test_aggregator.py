"""The aggregator against the real fixture servers, judged by their journals."""

from __future__ import annotations

from dataclasses import replace

from typing import Any, Dict, List

import pytest

from solution.aggregator import Aggregator
from solution.aggregator import Connection
from solution.config import ServerSpec, config_of
from solution.discovery import ServerInfo
from solution.tests.conftest import alive


def text(result: Dict[str, Any]) -> str:
    return " ".join(b["text"] for b in result["content"])


@pytest.mark.anyio
async def test_refresh_builds_one_table_with_prefixed_names(fixture: Any) -> None:
    notes, tickets = fixture("notes"), fixture("tickets")
    async with Aggregator(config_of([notes.spec, tickets.spec])) as tools:
        await tools.refresh()
        assert len(tools.entries) == 15 and tools.offline == {} and tools.dropped == []
        assert {"mcp__notes__search", "mcp__tickets__search"} <= set(tools.entries)
        assert tools.connections["notes"].info.name == "notes"
    assert not alive(notes.pid) and not alive(tickets.pid)


@pytest.mark.anyio
async def test_calls_go_out_under_the_original_name(fixture: Any) -> None:
    notes, tickets = fixture("notes"), fixture("tickets")
    async with Aggregator(config_of([notes.spec, tickets.spec])) as tools:
        await tools.refresh()
        dotted = tools.find("tickets", "queue.stats")
        assert dotted is not None
        await tools.call("mcp__notes__read_note", {"id": "n-2"})
        await tools.call(dotted.model_name, {})
    assert notes.calls() == [{"name": "read_note", "arguments": {"id": "n-2"}, "_meta": notes.calls()[0]["_meta"]}]
    assert [c["name"] for c in tickets.calls()] == ["queue.stats"]


@pytest.mark.anyio
async def test_call_never_raises(fixture: Any) -> None:
    notes = fixture("notes")
    async with Aggregator(config_of([notes.spec]), request_timeout=2.0) as tools:
        await tools.refresh()
        unknown = await tools.call("mcp__nowhere__x", {})
        assert unknown["isError"] and "Unknown tool" in text(unknown)
        invalid = await tools.call("mcp__notes__read_note", {"id": 5})
        assert invalid["isError"] and "Nothing was sent" in text(invalid)
        not_object = await tools.call("mcp__notes__read_note", "n-1")
        assert not_object["isError"]
        execution = await tools.call("mcp__notes__read_note", {"id": "n-99"})
        assert execution["isError"] and "No note with id" in text(execution)
        await tools.connections["notes"].client.aclose()  # the server goes away mid-session
        gone = await tools.call("mcp__notes__search", {"query": "x"})
        assert gone["isError"] and "notes" in text(gone)
    assert [c["arguments"] for c in notes.calls()] == [{"id": "n-99"}]


@pytest.mark.anyio
async def test_a_protocol_error_from_the_server_becomes_an_iserror_result(fixture: Any) -> None:
    notes = fixture("notes")
    async with Aggregator(config_of([notes.spec])) as tools:
        await tools.refresh()
        entry = tools.entries["mcp__notes__search"]
        entry.original_name = "vanished"  # as if the server dropped the tool since listing
        result = await tools.call("mcp__notes__search", {"query": "x"})
    assert result["isError"] and "-32602" in text(result)


@pytest.mark.anyio
@pytest.mark.parametrize("mode, words", [("exit-at-start", "exit status 3"),
                                         ("never-answer", "no reply to server/discover")])
async def test_a_broken_server_goes_offline_with_its_reason(fixture: Any, mode: str, words: str) -> None:
    notes, tickets = fixture("notes"), fixture("tickets", "", "--fail", mode)
    # Only the broken server gets the short timeout: the healthy one is never judged by the clock.
    async with Aggregator(config_of([notes.spec, replace(tickets.spec, timeout=0.5)])) as tools:
        await tools.refresh()
        assert list(tools.offline) == ["tickets"] and words in tools.offline["tickets"]
        assert not (await tools.call("mcp__notes__search", {"query": "paging"}))["isError"]
        offline = await tools.call("mcp__tickets__close_ticket", {"ticket_id": "T-1"})
        assert offline["isError"] and "offline" in text(offline)
    assert not alive(tickets.pid) and not alive(notes.pid)


@pytest.mark.anyio
async def test_a_missing_command_goes_offline_too(fixture: Any) -> None:
    notes = fixture("notes")
    config = config_of([notes.spec, ServerSpec("ghost", "no-such-mcp-server-command")])
    async with Aggregator(config) as tools:
        await tools.refresh()
        assert "command not found" in tools.offline["ghost"]
        assert "mcp__notes__search" in tools.entries


@pytest.mark.anyio
async def test_discovery_runs_concurrently(fixture: Any) -> None:
    # By order, from the journals: every server was started before any of them
    # answered its first request (each answer waits 1.5 s), so none waited for another.
    slow = [fixture("notes", f"n{i}", "--delay", "1.5") for i in range(3)]
    async with Aggregator(config_of([f.spec for f in slow])) as tools:
        await tools.refresh()
    assert len(tools.entries) == 9
    starts = [e["t"] for f in slow for e in f.entries() if e["kind"] == "start"]
    first_answer = min(e["t"] for f in slow for e in f.entries() if e["kind"] == "out")
    assert len(starts) == 3 and max(starts) < first_answer


@pytest.mark.anyio
async def test_refresh_again_replaces_the_old_processes(fixture: Any) -> None:
    notes = fixture("notes")
    async with Aggregator(config_of([notes.spec])) as tools:
        await tools.refresh()
        first = tools.connections["notes"].client.pid
        await tools.refresh()
        assert first is not None and not alive(first)
        assert len(tools.entries) == 3


def test_a_name_clash_keeps_the_first_and_says_what_was_left_out() -> None:
    # Aliases "a" + tool "b__c" and alias "a__b" are impossible (config rules),
    # so force a clash the naming could never make, to test the safety net.
    tools = Aggregator(config_of([ServerSpec("one", "x"), ServerSpec("two", "x")]))
    tool = {"name": "same", "inputSchema": {"type": "object"}}
    found: Dict[str, Connection] = {
        alias: Connection(alias, None, ServerInfo(alias, "1"), [tool, tool])  # type: ignore[arg-type]
        for alias in ("one", "two")}
    tools._rebuild(found, {})
    assert list(tools.entries) == ["mcp__one__same", "mcp__two__same"]
    assert len(tools.dropped) == 2 and "already taken by one/same" in tools.dropped[0]


def test_model_tools_come_in_either_api_shape() -> None:
    tools = Aggregator(config_of([ServerSpec("one", "x")]))
    found = {"one": Connection("one", None, ServerInfo("one", "1"),  # type: ignore[arg-type]
                               [{"name": "t", "inputSchema": {"type": "object"}}])}
    tools._rebuild(found, {})
    shapes: List[Any] = [tools.model_tools()[0], tools.model_tools("openai")[0]]
    assert "input_schema" in shapes[0] and shapes[1]["function"]["parameters"] == {"type": "object"}


def test_a_tool_with_an_unusable_schema_is_left_out_with_the_reason() -> None:
    tools = Aggregator(config_of([ServerSpec("one", "x")]))
    found = {"one": Connection("one", None, ServerInfo("one", "1"),  # type: ignore[arg-type]
                               [{"name": "ok", "inputSchema": {"type": "object"}},
                                {"name": "bad", "inputSchema": {"type": "array"}}])}
    tools._rebuild(found, {})
    assert list(tools.entries) == ["mcp__one__ok"]
    assert tools.dropped == ["one/bad: its inputSchema is not an object schema"]


@pytest.mark.anyio
async def test_servers_keep_the_configs_order_whichever_finished_first(fixture: Any) -> None:
    slow, fast = fixture("tickets", "", "--delay", "0.2"), fixture("notes")
    async with Aggregator(config_of([slow.spec, fast.spec])) as tools:
        await tools.refresh()
        assert list(tools.connections) == ["tickets", "notes"]  # notes finished first
