"""tools/list pages reused while their ttlMs says they are fresh and no list_changed
came since: in memory, with an injected clock, and across reconnects of real fixtures."""

from __future__ import annotations

from typing import Any, List, Optional

import pytest

from solution.host.aggregator import Aggregator
from solution.host.config import HostServerSpec
from solution.config import ServerSpec, config_of
from solution.discovery import list_all_tools
from solution.jsonrpc import Json
from solution.host.list_cache import CachedLister, ListCache, list_key

PAGES = {None: {"tools": [{"name": "a"}], "nextCursor": "", "ttlMs": 60_000},
         "": {"tools": [{"name": "b"}], "ttlMs": 60_000}}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Lister:
    """A server that hands out PAGES (with a given ttlMs) and counts what it was asked."""

    def __init__(self, ttl: Any = 60_000, era: str = "current") -> None:
        self.era = era
        self.ttl = ttl
        self.asked: List[Optional[str]] = []
        self.during: Any = None  # run while a request is on its way (a change announced meanwhile)

    async def request(self, method: str, params: Optional[Json] = None, *, timeout: Optional[float] = None) -> Json:
        cursor = (params or {}).get("cursor")
        self.asked.append(cursor)
        if self.during is not None:
            self.during()
        return {**PAGES[cursor], "ttlMs": self.ttl}

    async def notify(self, method: str, params: Optional[Json] = None) -> None:
        pass


SPEC = ServerSpec("s", "python", ("server.py",))


async def listed(server: Lister, cache: ListCache) -> List[str]:
    return [t["name"] for t in await list_all_tools(CachedLister(server, cache, list_key(SPEC, False)))]


@pytest.mark.anyio
async def test_fresh_pages_are_reused_until_their_ttl_and_then_asked_for_again() -> None:
    clock, server = Clock(), Lister()
    cache = ListCache(clock)
    assert await listed(server, cache) == ["a", "b"] and server.asked == [None, ""]  # "" is a real cursor
    clock.now += 59.9
    assert await listed(server, cache) == ["a", "b"] and server.asked == [None, ""]  # not asked again
    clock.now += 0.1
    assert await listed(server, cache) == ["a", "b"] and server.asked == [None, "", None, ""]


@pytest.mark.anyio
@pytest.mark.parametrize("ttl", [0, None, -5, True, "60000"])
async def test_a_page_without_a_positive_ttl_is_never_reused(ttl: Any) -> None:
    server, cache = Lister(ttl), ListCache(Clock())
    await listed(server, cache)
    await listed(server, cache)
    assert server.asked == [None, "", None, ""]


@pytest.mark.anyio
async def test_the_handshake_era_and_a_list_change_are_never_served_from_the_cache() -> None:
    legacy, cache = Lister(era="legacy"), ListCache(Clock())
    await listed(legacy, cache)
    await listed(legacy, cache)
    assert legacy.asked == [None, "", None, ""]
    server = Lister()
    await listed(server, cache)
    cache.drop(list_key(SPEC, False))  # list_changed
    await listed(server, cache)
    assert server.asked == [None, "", None, ""]
    cache.drop(list_key(SPEC, False))
    server.during = lambda: cache.drop(list_key(SPEC, False))  # announced while the pages were on their way
    await listed(server, cache)
    server.during = None
    await listed(server, cache)
    assert len(server.asked) == 8  # what came back then may predate the change: not kept


def test_another_config_entry_or_the_ability_to_answer_forms_is_another_list() -> None:
    keys = {list_key(SPEC, False), list_key(SPEC, True), list_key(ServerSpec("s", "python", ("other.py",)), False),
            list_key(ServerSpec("s", "python", ("server.py",), {"A": "1"}), False),
            list_key(HostServerSpec("s", "", url="http://127.0.0.1:1/mcp", headers={"Authorization": "x"}), False),
            list_key(HostServerSpec("s", "", url="http://127.0.0.1:1/mcp", headers={"Authorization": "y"}), False)}
    assert len(keys) == 6 and not any("Authorization" in key for key in keys)


@pytest.mark.anyio
async def test_a_refresh_reuses_fresh_pages_and_a_list_change_drops_them(fixture: Any) -> None:
    notes = fixture("notes", "notes", "--list-ttl-ms", "600000")  # three pages, one empty
    tickets = fixture("tickets", "tickets", "--list-ttl-ms", "600000")
    async with Aggregator(config_of([notes.spec, tickets.spec])) as tools:
        await tools.refresh()
        assert notes.methods().count("tools/list") == 3 and tickets.methods().count("tools/list") == 1
        await tools.refresh()  # every server started again, as after a pause or a second attach
        assert notes.methods().count("tools/list") == 3 and tickets.methods().count("tools/list") == 1
        assert len(tools.entries) == 15 and notes.methods().count("server/discover") == 2
        since = tools.version
        await tools.call("mcp__tickets__install_plugin", {})
        assert await tools.wait_for_change(since, 10)  # re-listed at once (E2), not from the cache
        await tools.refresh()
        assert notes.methods().count("tools/list") == 3 and tickets.methods().count("tools/list") == 3


@pytest.mark.anyio
async def test_pages_that_say_ttl_0_are_asked_for_on_every_connect(fixture: Any) -> None:
    notes = fixture("notes")
    async with Aggregator(config_of([notes.spec])) as tools:
        await tools.refresh()
        await tools.refresh()
    assert notes.methods().count("tools/list") == 6
