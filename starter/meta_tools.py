"""Many tools: two stable meta-tools instead of the whole table.

Past a threshold, the model gets `search_tools` (a keyword search of the
catalogue: names, titles, descriptions) and `call_tool` (a call by the name a
search returned). The tool array then never changes during a conversation,
which keeps a provider's prompt cache valid, and a hundred definitions stop
eating the context. Servers marked on-demand in the config join the catalogue
when a search mentions what they are for, and leave when the run is over.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Set

from .aggregator import Aggregator
from .failures import error_result
from .jsonrpc import Json
from .stdio_client import ProgressHandler
from .translate import ToolEntry

SEARCH, CALL = "search_tools", "call_tool"
MANY_TOOLS = 40  # more than this many tools: switch to the meta-tools
MANY_TOKENS = 8000  # or more than about this many tokens of tool definitions
_WORD = re.compile(r"[a-z0-9]+")

SEARCH_SCHEMA: Json = {"type": "object", "additionalProperties": False, "required": ["query"], "properties": {
    "query": {"type": "string", "description": "what you want to do, in a few words"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5}}}
CALL_SCHEMA: Json = {"type": "object", "additionalProperties": False, "required": ["name"], "properties": {
    "name": {"type": "string", "description": "a tool name returned by search_tools"},
    "arguments": {"type": "object", "description": "arguments matching that tool's input_schema"}}}


def words(text: str) -> Set[str]:
    return set(_WORD.findall(text.lower()))


def rank(query: str, entries: List[ToolEntry], limit: int) -> List[ToolEntry]:
    """The entries that best match the query, best first."""
    # >>> extension E4 (many tools): keyword ranking over names, titles, descriptions
    # TODO extension E4: search_tools finds nothing. Score each entry by the
    # query words found in its name, title and description; best first.
    return []
    # <<< extension E4


def too_many(tools: Aggregator, threshold: int = MANY_TOOLS) -> bool:
    """Whether the full table would be too much for the model's context."""
    if len(tools.entries) > threshold:
        return True
    return len(json.dumps(tools.model_tools())) / 4 > MANY_TOKENS  # about 4 characters a token


class MetaTools:
    """The aggregator behind two tools. Same interface as the aggregator for the agent loop."""

    def __init__(self, tools: Aggregator) -> None:
        self.tools = tools
        self.attached: List[str] = []  # on-demand servers this run brought in

    @property
    def offline(self) -> Dict[str, str]:
        return self.tools.offline

    @property
    def connections(self) -> Dict[str, Any]:
        return self.tools.connections

    def model_tools(self, api: str = "anthropic") -> List[Dict[str, Any]]:
        shapes = [(SEARCH, "Find tools for a task. Returns names, titles, descriptions and input schemas.",
                   SEARCH_SCHEMA),
                  (CALL, "Call a tool found with search_tools, by its name, with its arguments.", CALL_SCHEMA)]
        if api == "openai":
            return [{"type": "function", "function": {"name": n, "description": d, "parameters": p}}
                    for n, d, p in shapes]
        return [{"name": n, "description": d, "input_schema": p} for n, d, p in shapes]

    async def search(self, query: str, limit: int = 5) -> Json:
        wanted = words(query)
        for spec in self.tools.config.servers:  # bring in on-demand servers the query is about
            if spec.on_demand and spec.alias not in self.tools.connections \
                    and wanted & (words(spec.description) | {spec.alias.lower()}):
                if await self.tools.attach(spec.alias):
                    self.attached.append(spec.alias)
        found = rank(query, list(self.tools.entries.values()), limit)
        listing = [{"name": e.model_name, "title": e.title, "description": e.description,
                    "input_schema": e.input_schema} for e in found]
        text = json.dumps(listing, ensure_ascii=False) if listing else "No tool matches; try other words."
        return {"content": [{"type": "text", "text": text}], "structuredContent": {"tools": listing},
                "isError": False}

    async def call(self, name: str, arguments: Any = None, *,
                   on_progress: Optional[ProgressHandler] = None) -> Json:
        arguments = arguments if isinstance(arguments, dict) else {}
        if name == SEARCH:
            limit = arguments.get("limit", 5)
            return await self.search(str(arguments.get("query", "")), limit if isinstance(limit, int) else 5)
        if name == CALL:
            return await self.tools.call(str(arguments.get("name", "")), arguments.get("arguments"),
                                         on_progress=on_progress)
        return error_result(f"Unknown tool {name!r}: use {SEARCH} to find tools, then {CALL} to call one.")

    def route(self, name: str, arguments: Any) -> Optional[ToolEntry]:
        if name == CALL and isinstance(arguments, dict):
            return self.tools.route(str(arguments.get("name", "")), arguments.get("arguments"))
        return None  # search_tools runs in the client; it reaches no server

    async def release(self) -> None:
        """Disconnect the on-demand servers this run brought in."""
        for alias in self.attached:
            await self.tools.detach(alias)
        self.attached = []
