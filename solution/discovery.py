"""Discovery: who a server is (`server/discover`) and every tool it offers.

Both functions take anything with an async `request(method, params)` method,
so they are tested with a scripted fake instead of a process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Protocol

from .errors import ProtocolViolation
from .jsonrpc import Json
from .protocol import PROTOCOL_VERSION, SERVER_INFO_KEY

MAX_PAGES = 100  # a server that pages forever is a broken server


class Requester(Protocol):
    async def request(self, method: str, params: Optional[Json] = None, *,
                      timeout: Optional[float] = None) -> Json: ...


@dataclass
class ServerInfo:
    """What `server/discover` told us; identity is for display only."""

    name: str
    version: str
    instructions: str = ""
    capabilities: Dict[str, Any] = field(default_factory=dict)
    supported_versions: List[str] = field(default_factory=list)


async def discover(server: Requester) -> ServerInfo:
    result = await server.request("server/discover")
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or PROTOCOL_VERSION not in versions:
        raise ProtocolViolation(
            f"server does not support {PROTOCOL_VERSION} (it supports {versions!r})")
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
    info = info if isinstance(info, dict) else {}
    instructions = result.get("instructions")
    capabilities = result.get("capabilities")
    return ServerInfo(name=str(info.get("name", "")), version=str(info.get("version", "")),
                      instructions=instructions if isinstance(instructions, str) else "",
                      capabilities=capabilities if isinstance(capabilities, dict) else {},
                      supported_versions=[str(v) for v in versions])


async def list_all_tools(server: Requester, *, max_pages: int = MAX_PAGES) -> List[Json]:
    """Every tool the server offers, following `nextCursor` page by page."""
    tools: List[Json] = []
    # >>> exercise 2 (item 3): follow the cursor until there is none
    cursor: Optional[str] = None
    for _ in range(max_pages):
        params: Json = {} if cursor is None else {"cursor": cursor}
        page = await server.request("tools/list", params)
        tools.extend(page_tools(page))
        # Only a missing (or null) nextCursor ends the list: not a short page,
        # not an empty one. "" is a real cursor. Pass it back untouched.
        cursor = page.get("nextCursor")
        if cursor is None:
            return tools
    raise ProtocolViolation(f"tools/list did not end after {max_pages} pages")
    # <<< exercise 2


def page_tools(page: Json) -> List[Json]:
    """The tools of one `tools/list` page, checked for the fields we rely on."""
    tools = page.get("tools")
    if not isinstance(tools, list):
        raise ProtocolViolation("tools/list result has no 'tools' list")
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ProtocolViolation(f"tools/list returned a tool without a name: {tool!r:.80}")
    return tools
