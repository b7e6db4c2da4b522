"""E4: two stable meta-tools in front of a big catalogue; on-demand servers."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from solution.host.aggregator import Aggregator
from solution.host.config import HostServerSpec
from solution.config import ServerSpec, config_of
from solution.host.on_demand import OnDemandMetaTools
from solution.meta_tools import CALL, INSPECT, SEARCH, MetaTools, rank, too_many
from solution.tests.conftest import ROOT, Fixture
from solution.translate import make_entry


def test_rank_puts_name_matches_first_and_keeps_catalogue_order_on_ties() -> None:
    entries = [make_entry("s", {"name": n, "description": d, "inputSchema": {"type": "object"}}, n)
               for n, d in (("list_invoice", "List invoices"), ("export_invoice", "Export one invoice as a PDF"),
                            ("export_order", "Export one order"), ("get_weather", "Weather"))]
    # export_invoice matches three words; export_order and list_invoice one each in the
    # name (and title), export_order one more in its description.
    assert [e.original_name for e in rank("export invoice pdf", entries, 3)] == \
        ["export_invoice", "export_order", "list_invoice"]
    assert [e.original_name for e in rank("invoice", entries, 2)] == ["export_invoice", "list_invoice"]
    assert [e.original_name for e in rank("list order", entries, 5)] == ["list_invoice", "export_order"]  # a tie
    assert rank("nothing matches", entries, 5) == []


@pytest.mark.anyio
async def test_meta_tools_find_one_among_500_and_call_it_by_its_original_name(fixture: Any) -> None:
    shop = fixture("misbehave", "shop", "--scenario", "catalogue")
    async with Aggregator(config_of([shop.spec])) as tools:
        await tools.refresh()
        assert too_many(tools) and len(tools.entries) == 500
        meta = MetaTools(tools)
        table = meta.model_tools()
        assert [t["name"] for t in table] == [SEARCH, INSPECT, CALL]
        found = await meta.call(SEARCH, {"query": "export customer as csv", "limit": 3})
        listed = found["structuredContent"]["tools"]
        # The catalogue tier: names and one line each, grouped by server; no schemas yet.
        assert listed[0] == {"name": "mcp__shop__export_customer", "server": "shop",
                             "summary": "Export one customer as a PDF or CSV file"}
        assert found["content"][0]["text"].startswith("shop:\n  mcp__shop__export_customer: ")
        assert "input_schema" not in json.dumps(found)
        shown = await meta.call(INSPECT, {"name": listed[0]["name"]})  # the inspect tier: one definition
        assert shown["structuredContent"]["input_schema"] == {"type": "object"}
        assert (await meta.call(INSPECT, {"name": "nope"}))["isError"]
        await meta.call(CALL, {"name": listed[0]["name"], "arguments": {}})
        assert meta.route(CALL, {"name": listed[0]["name"]}).original_name == "export_customer"  # type: ignore[union-attr]
        assert meta.model_tools() == table and meta.model_tools("openai")[0]["function"]["name"] == SEARCH
    assert [c["name"] for c in shop.calls()] == ["export_customer"]


@pytest.mark.anyio
async def test_an_on_demand_server_joins_when_searched_for_and_leaves_after(fixture: Any) -> None:
    notes = fixture("notes")
    tickets: Fixture = fixture("tickets")
    lazy = HostServerSpec("tickets", sys.executable, tickets.spec.args, {}, str(ROOT), on_demand=True,
                      description="support tickets and queues")
    async with Aggregator(config_of([notes.spec, lazy])) as tools:
        await tools.refresh()
        assert "tickets" not in tools.connections and tickets.entries() == []  # never started
        meta = OnDemandMetaTools(tools)
        found = await meta.call(SEARCH, {"query": "close a support ticket"})
        assert "close_ticket" in found["content"][0]["text"] and meta.attached == ["tickets"]
        await meta.release()
        assert "tickets" not in tools.connections and all(e.alias == "notes" for e in tools.entries.values())
    kinds = [e["kind"] for e in tickets.entries()]
    assert kinds[0] == "start" and kinds[-1] == "exit"



@pytest.mark.anyio
async def test_the_switch_is_a_share_of_the_context_window(fixture: Any, monkeypatch: Any) -> None:
    async with Aggregator(config_of([fixture("notes").spec, fixture("tickets").spec])) as tools:
        await tools.refresh()
        assert not too_many(tools)  # 13 tools: well under 1.5 % of 200,000 tokens
        assert too_many(tools, context_window=8_000)  # a small model's window
        monkeypatch.setenv("MCP_LAB_TOOL_SHARE", "0.001")
        assert too_many(tools)
