"""Paging for every list a fixture hands out (tools, resources): which items go
on which page, and cursors that are opaque to the client and verifiable here.

The page plan puts an empty page after the first, the trap a loop that stops
on a short or empty page falls into. A cursor names its list: a tools cursor
sent to `resources/list` is refused like an invented one.
"""

from __future__ import annotations

import binascii
from typing import Any, List

from servers.rpc import INVALID_PARAMS, RpcError

PAGING_MODES = ("normal", "empty-cursor", "endless")
ENDLESS_PAGES = 40  # an endless lister gives up here, so a client without a page limit still ends


def page_plan(count: int, page_size: int) -> List[List[int]]:
    """Split item indexes into pages, with an empty page after the first.

    The empty page is the trap: a loop that stops on a short or an empty page
    stops there and never sees the rest. Only a missing cursor ends the list.
    """
    chunks = [list(range(i, min(i + page_size, count))) for i in range(0, count, page_size)]
    if len(chunks) > 1:
        chunks.insert(1, [])
    return chunks or [[]]


class Cursors:
    """Cursors for one server's lists. `kind` tells the lists apart (tools: none,
    so their cursors are what they always were); `paging` is the tools list's
    switch (`--paging`), which the other lists do not take."""

    def __init__(self, name: str) -> None:
        # A fixed key per server keeps cursors stable across processes
        # (the revision is stateless) while still making edits detectable.
        self._key = binascii.crc32(("cursor:" + name).encode())

    def _tag(self, body: bytes) -> bytes:
        # A keyed checksum, not a MAC: it catches a cursor the client made up or
        # edited, which is all a fixture needs (a cursor guards no secret).
        return binascii.crc32(body, self._key).to_bytes(4, "big")

    def make(self, page: int, *, kind: bytes = b"", paging: str = "normal") -> str:
        if paging == "empty-cursor" and page == 1:
            return ""
        body = kind + page.to_bytes(2, "big")
        return (self._tag(body) + body).hex()

    def read(self, cursor: Any, pages: int, *, kind: bytes = b"", paging: str = "normal") -> int:
        """The page a cursor names, of a list of `pages` pages; -32602 for anything else."""
        if not isinstance(cursor, str):
            raise RpcError(INVALID_PARAMS, "Invalid cursor: must be a string")
        if cursor == "" and paging == "empty-cursor" and pages > 1:
            return 1
        try:
            raw = bytes.fromhex(cursor)
        except ValueError:
            raw = b""
        tag, body = raw[:4], raw[4:]
        if len(body) != len(kind) + 2 or not body.startswith(kind) or tag != self._tag(body):
            raise RpcError(INVALID_PARAMS, "Invalid cursor: pass back nextCursor exactly as received")
        page = int.from_bytes(body[len(kind):], "big")
        last = ENDLESS_PAGES if paging == "endless" else pages
        if not 0 < page < last:
            raise RpcError(INVALID_PARAMS, "Invalid cursor: no such page")
        return page
