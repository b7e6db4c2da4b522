"""Tool list pages reused while their server says they are fresh.

A 2026-07-28 `tools/list` page carries `ttlMs`: how long the client may reuse it.
Within one process the same list is fetched again more often than it changes:
after the breaker's pause, when an on-demand server is attached a second time,
on `refresh()`. A page younger than its `ttlMs`, with no `list_changed` from that
server since, is handed out again instead of asked for. `ttlMs: 0` (the
fixtures' default) or none at all means never; the handshake era has no such
field, so its lists are always fetched.

Pages are keyed by everything in the server's config entry (a changed command,
URL, header or environment is another server) and whether the client can answer
forms (a server may offer some tools only then), and by cursor (`""` is a real
cursor, not the first page's `None`).

Only in memory, not across runs: a stdio server's list can depend on the process
that gave it (the `tickets` fixture's plugin lives in its process), and a change
announced while no client was connected is never heard, so a list written to
disk could go on being served after the server has changed; the cost saved is a
few requests at start-up.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import time
from typing import Callable, Dict, Optional, Tuple

from ..config import ServerSpec
from ..discovery import Requester
from ..jsonrpc import Json

Clock = Callable[[], float]
Key = str


def list_key(spec: ServerSpec, answers_forms: bool) -> Key:
    """Who gave the list, as a digest (the config's secrets are not kept in the clear)."""
    entry = json.dumps([dataclasses.asdict(spec), answers_forms], sort_keys=True, default=str)
    return hashlib.sha256(entry.encode()).hexdigest()


def fresh_for(page: Json) -> float:
    """Seconds the page may be reused: its `ttlMs`, or 0 when absent or not a positive number."""
    ttl = page.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0:
        return 0.0
    return float(ttl) / 1000


class ListCache:
    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self._pages: Dict[Key, Dict[Optional[str], Tuple[float, Json]]] = {}  # key -> cursor -> (until, page)
        self._changes: Dict[Key, int] = {}  # key -> list changes heard so far

    def get(self, key: Key, cursor: Optional[str]) -> Optional[Json]:
        held = self._pages.get(key, {}).get(cursor)
        if held is None or self.clock() >= held[0]:
            return None
        return copy.deepcopy(held[1])  # the caller may keep and change what it is given

    def changes(self, key: Key) -> int:
        return self._changes.get(key, 0)

    def put(self, key: Key, cursor: Optional[str], page: Json, asked_at: int) -> None:
        """Keep a page asked for when `changes(key)` was `asked_at`: if a change was
        announced while it was on its way, it may predate the change, so it is not kept."""
        seconds = fresh_for(page)
        if seconds > 0 and self.changes(key) == asked_at:
            self._pages.setdefault(key, {})[cursor] = (self.clock() + seconds, copy.deepcopy(page))

    def drop(self, key: Key) -> None:
        """The server said its list changed: nothing it gave before is reused."""
        self._pages.pop(key, None)
        self._changes[key] = self.changes(key) + 1


class CachedLister:
    """A server, except that `tools/list` pages still fresh come from the cache."""

    def __init__(self, server: Requester, cache: ListCache, key: Key) -> None:
        self.server = server
        self.cache = cache
        self.key = key

    @property
    def era(self) -> str:
        return self.server.era

    @era.setter
    def era(self, value: str) -> None:
        self.server.era = value

    async def request(self, method: str, params: Optional[Json] = None, *,
                      timeout: Optional[float] = None) -> Json:
        if method != "tools/list" or self.server.era != "current":
            return await self.server.request(method, params, timeout=timeout)
        cursor = (params or {}).get("cursor")
        held = self.cache.get(self.key, cursor)
        if held is not None:
            return held
        asked_at = self.cache.changes(self.key)
        page = await self.server.request(method, params, timeout=timeout)
        self.cache.put(self.key, cursor, page, asked_at)
        return page

    async def notify(self, method: str, params: Optional[Json] = None) -> None:
        await self.server.notify(method, params)
