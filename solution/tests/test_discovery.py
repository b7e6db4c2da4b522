"""Discovery against a scripted fake server: no process needed."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from solution.discovery import discover, list_all_tools
from solution.errors import ProtocolViolation


class Scripted:
    """Answers tools/list from a list of pages; records the params it was sent."""

    def __init__(self, pages: Dict[Optional[str], Dict[str, Any]]) -> None:
        self.pages = pages
        self.sent: List[Optional[str]] = []
        self.era = "current"

    async def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        pass

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                      timeout: Optional[float] = None) -> Dict[str, Any]:
        if method == "server/discover":
            return self.pages[None]
        cursor = (params or {}).get("cursor")
        self.sent.append(cursor)
        return self.pages[cursor]


def tool(name: str) -> Dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}}


@pytest.mark.anyio
async def test_follows_cursors_past_short_and_empty_pages() -> None:
    server = Scripted({None: {"tools": [tool("a"), tool("b")], "nextCursor": "c1"},
                       "c1": {"tools": [], "nextCursor": "c2"},
                       "c2": {"tools": [tool("c")], "nextCursor": "c3"},
                       "c3": {"tools": [tool("d")]}})
    assert [t["name"] for t in await list_all_tools(server)] == ["a", "b", "c", "d"]
    assert server.sent == [None, "c1", "c2", "c3"]


@pytest.mark.anyio
async def test_an_empty_string_is_a_real_cursor_and_null_ends_the_list() -> None:
    server = Scripted({None: {"tools": [tool("a")], "nextCursor": ""},
                       "": {"tools": [tool("b")], "nextCursor": None}})
    assert [t["name"] for t in await list_all_tools(server)] == ["a", "b"]
    assert server.sent == [None, ""]


@pytest.mark.anyio
async def test_cursors_go_back_exactly_as_received() -> None:
    odd = "  +/=ünï code\n"
    server = Scripted({None: {"tools": [], "nextCursor": odd}, odd: {"tools": [tool("z")]}})
    await list_all_tools(server)
    assert server.sent[1] == odd


@pytest.mark.anyio
async def test_a_cursor_that_never_ends_is_stopped_by_the_guard() -> None:
    server = Scripted({None: {"tools": [], "nextCursor": "again"},
                       "again": {"tools": [], "nextCursor": "again"}})
    with pytest.raises(ProtocolViolation, match="did not end after 5 pages"):
        await list_all_tools(server, max_pages=5)
    assert len(server.sent) == 5


@pytest.mark.anyio
@pytest.mark.parametrize("page", [{}, {"tools": "x"}, {"tools": [{"title": "no name"}]}])
async def test_a_malformed_page_is_a_protocol_violation(page: Dict[str, Any]) -> None:
    with pytest.raises(ProtocolViolation):
        await list_all_tools(Scripted({None: page}))


@pytest.mark.anyio
async def test_discover_reads_identity_from_meta_and_checks_the_version() -> None:
    found = await discover(Scripted({None: {
        "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "instructions": "hi",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "n", "version": "1"}}}}))
    assert (found.name, found.version, found.instructions) == ("n", "1", "hi")
    with pytest.raises(ProtocolViolation, match="does not support"):  # pinned: no handshake to fall back to
        await discover(Scripted({None: {"supportedVersions": ["2030-01-01"]}}), fallback=False)
