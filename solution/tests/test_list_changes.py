"""E2: a server whose tool list changes is re-listed; names stay put."""

from __future__ import annotations

from typing import Any

import pytest

from solution.host.aggregator import Aggregator
from solution.config import config_of


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["current", "legacy"])
async def test_a_list_change_is_picked_up_and_old_names_stay(fixture: Any, era: str) -> None:
    notes, tickets = fixture("notes"), fixture("tickets", "", "--era", era)
    async with Aggregator(config_of([notes.spec, tickets.spec])) as tools:
        await tools.refresh()
        before = {name: (e.alias, e.original_name) for name, e in tools.entries.items()}
        version = tools.version
        await tools.call("mcp__tickets__install_plugin", {})
        assert await tools.wait_for_change(version, 5.0)
        after = {name: (e.alias, e.original_name) for name, e in tools.entries.items()}
        assert {n: v for n, v in after.items() if n in before} == before
        new = tools.find("tickets", "plugin.weekly_report")
        assert new is not None and set(after) - set(before) == {new.model_name}
        result = await tools.call(new.model_name, {})
        assert "Weekly report" in result["content"][0]["text"]
    methods = tickets.methods()
    if era == "current":  # a listen stream was opened, then left politely
        assert "subscriptions/listen" in methods and methods[-1] == "notifications/cancelled"
    else:  # the handshake era announces changes without being asked
        assert "subscriptions/listen" not in methods
    assert methods.count("tools/list") == 2


@pytest.mark.anyio
async def test_a_server_that_breaks_while_relisting_goes_offline(fixture: Any) -> None:
    tickets = fixture("tickets")
    async with Aggregator(config_of([tickets.spec]), request_timeout=2.0) as tools:
        await tools.refresh()
        client = tools.connections["tickets"].client
        version = tools.version
        await client.aclose()
        tools.list_changed("tickets")
        assert await tools.wait_for_change(version, 5.0)
        assert "tickets" in tools.offline and tools.entries == {}
