"""Real servers' habits: an era remembered or pinned, a server that dies on the
probe started again with the handshake, discovery bounded by the config and
named by its step, per-tool timeouts, and a breaker for a failing server."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, List

import pytest

from solution.agent import system_prompt
from solution.host.aggregator import Aggregator
from solution.host.breaker import Breaker
from solution.config import config_of, parse_config
from solution.host.config import host_options, parse_host_config


def starts(fixture: Any) -> List[List[str]]:
    """Per process start, the methods it received, in order."""
    found: List[List[str]] = []
    for entry in fixture.entries():
        if entry["kind"] == "start":
            found.append([])
        elif entry["kind"] == "in" and "msg" in entry and "id" in entry["msg"]:
            found[-1].append(entry["msg"].get("method"))
    return found


@pytest.mark.anyio
async def test_a_server_that_dies_on_the_probe_is_started_again_and_spoken_to_by_handshake(fixture: Any) -> None:
    old = fixture("notes", "old", "--era", "legacy", "--fail", "exit-on-discover")
    async with Aggregator(config_of([old.spec])) as tools:
        await tools.refresh()
        assert tools.offline == {} and tools.connections["old"].info.era == "legacy"
        assert tools.connector.eras == {"old": "legacy"}
        await tools.refresh()  # the era is remembered: no second probe
    first, second, third = starts(old)
    assert first == ["server/discover"]
    assert second[0] == "initialize" and third[0] == "initialize" and "server/discover" not in second + third


@pytest.mark.anyio
@pytest.mark.parametrize("pinned, era, probed", [("2025-11-25", "legacy", False), ("2026-07-28", None, True)])
async def test_a_pinned_era_skips_the_probe_or_the_fallback(fixture: Any, pinned: str, era: Any,
                                                             probed: bool) -> None:
    old = fixture("notes", "old", "--era", "legacy")
    async with Aggregator(config_of([replace(old.spec, protocol_version=pinned)])) as tools:
        await tools.refresh()
        if era is None:  # pinned to 2026-07-28: an older server is not spoken to the old way
            assert "the server answered error -32600" in tools.offline["old"]
        else:
            assert tools.connections["old"].info.era == era
    methods = [m for start in starts(old) for m in start]
    assert ("server/discover" in methods) == probed and ("initialize" in methods) == (not probed)


def test_the_config_pins_an_era_and_names_tool_timeouts() -> None:
    (spec,) = map(host_options, parse_host_config('{"mcpServers": {"s": {"command": "x", "protocolVersion": "2025-11-25", '
                                                  '"toolTimeouts": {"report": 30, "lookup": 0.5}}}}').servers)
    assert spec.protocol_version == "2025-11-25" and spec.tool_timeouts == {"report": 30.0, "lookup": 0.5}
    for bad, words in (('"protocolVersion": "2024-01-01"', "'protocolVersion' must be one of"),
                       ('"toolTimeouts": {"a": NaN}', "'toolTimeouts' must map tool names")):
        with pytest.raises(Exception, match=words):
            parse_host_config('{"mcpServers": {"s": {"command": "x", %s}}}' % bad)


def test_discovery_as_a_whole_follows_the_longest_configured_timeout() -> None:
    slow = parse_config('{"mcpServers": {"npx": {"command": "x", "timeout": 60}}}')
    assert Aggregator(slow).discovery_timeout == 180.0
    assert Aggregator(slow, request_timeout=120).discovery_timeout == 360.0
    assert Aggregator(parse_config('{"mcpServers": {"s": {"command": "x"}}}')).discovery_timeout == 90.0


@pytest.mark.anyio
async def test_a_discovery_that_runs_out_of_time_names_its_step_and_the_limit(fixture: Any) -> None:
    # The server never answers tools/list: the limit is only ever reached there, however
    # long the start and the probe take on a busy machine (the limit is theirs too).
    stuck = fixture("notes", "stuck", "--silent", "tools/list")
    async with Aggregator(config_of([stuck.spec]), discovery_timeout=3.0) as tools:
        await tools.refresh()
    assert tools.offline["stuck"] == "discovery did not finish within 3 s (it was waiting for tools/list)"


@pytest.mark.anyio
async def test_a_tool_timeout_fires_for_its_tool_only(fixture: Any) -> None:
    notes = fixture("notes", "", "--latency", "read_note=5")
    spec = replace(notes.spec, tool_timeouts={"read_note": 0.2})
    async with Aggregator(config_of([spec])) as tools:
        await tools.refresh()
        slow = await tools.call("mcp__notes__read_note", {"id": "n-1"})
        fast = await tools.call("mcp__notes__search", {"query": "paging"})
    assert slow["isError"] and "no reply to tools/call within 0.2 s" in slow["content"][0]["text"]
    assert not fast.get("isError")


def test_the_breaker_opens_after_n_failures_in_a_row_and_closes_after_the_cool_down() -> None:
    now = [100.0]
    breaker = Breaker(threshold=3, cool_down=30.0, clock=lambda: now[0])
    assert [breaker.failed("s") for _ in range(2)] == [False, False]
    breaker.succeeded("s")  # a success starts the count again
    assert [breaker.failed("s") for _ in range(3)] == [False, False, True]
    assert breaker.paused_for("s") == 30.0 and breaker.paused_for("other") is None
    now[0] += 29.5
    assert breaker.paused_for("s") == pytest.approx(0.5)
    now[0] += 0.5
    assert breaker.paused_for("s") is None and breaker.failed("s") is False


@pytest.mark.anyio
async def test_a_server_that_keeps_timing_out_is_paused_then_reconnected(fixture: Any) -> None:
    notes = fixture("notes", "", "--latency", "read_note=5")
    spec = replace(notes.spec, tool_timeouts={"read_note": 0.1})
    now = [0.0]
    async with Aggregator(config_of([spec])) as tools:
        await tools.refresh()
        tools.breaker = Breaker(threshold=3, cool_down=30.0, clock=lambda: now[0])
        for _ in range(3):
            await tools.call("mcp__notes__read_note", {"id": "n-1"})
        assert "paused after failing 3 times in a row" in tools.offline["notes"]
        assert "mcp__notes__search" not in tools.entries and "'notes' is offline" in system_prompt(tools)
        paused = await tools.call("mcp__notes__search", {"query": "paging"})
        assert paused["isError"] and "will be tried again in" in paused["content"][0]["text"]
        assert len(starts(notes)) == 1
        now[0] += 30.0  # the cool-down is over: the next call reconnects
        back = await tools.call("mcp__notes__search", {"query": "paging"})
        assert not back.get("isError") and tools.offline == {} and len(starts(notes)) == 2


def test_output_a_user_reads_keeps_resources_words_and_identifiers_whole() -> None:
    import subprocess
    import sys

    from solution.model import result_text
    from solution.naming import model_tool_name
    from solution.untrusted import last_words
    from solution.tests.conftest import ROOT
    result = {"content": [{"type": "resource", "resource": {"uri": "file:///a", "text": "the text"}},
                          {"type": "resource_link", "name": "spec", "uri": "https://x/spec"}]}
    assert result_text(result) == "[embedded resource file:///a]\nthe text\n[resource link: spec https://x/spec]"
    tail = last_words("run 'motherduck --help' for help.\n" * 20, 60)
    assert tail.startswith("…") and tail[1:].startswith(("run", "'", "for", "help", "--help"))
    done = subprocess.run([sys.executable, "-m", "solution", "tools"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env={"PATH": "/usr/bin:/bin", "COLUMNS": "80"})
    long_name = model_tool_name("tickets", "export_ticket_history_including_comments_and_attachments_for_audit_as_csv")
    assert done.returncode == 0 and long_name in done.stdout  # on one line, never folded in a pipe
    assert "no terminal to ask for consent" not in done.stderr
