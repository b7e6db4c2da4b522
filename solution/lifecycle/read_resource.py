"""The model's `read_resource` tool: its shape, its entry for consent and the
audit log, and what a read gives back. Which server a URI is read from is
resource_links.py's (`Offers`); the read itself is features.py's.
"""

from __future__ import annotations

from typing import Any, List

from ..jsonrpc import Json
from ..model import contents_text
from ..resource_links import MAX_URI, READ_RESOURCE
from ..translate import ToolEntry, make_entry

DESCRIPTION = ("Read a resource an MCP server offered: a resource link in one of its tool results, or a "
               "resource it lists. Give the uri exactly as offered; add server (the name in the link's tool, "
               "or the one the error names) only when asked to.")
SCHEMA: Json = {"type": "object", "additionalProperties": False, "required": ["uri"], "properties": {
    "uri": {"type": "string", "description": "the resource's URI, exactly as the link or the listing gave it"},
    "server": {"type": "string", "description": "the server that offered it, when two did"}}}


def read_tool(api: str) -> Json:
    """The tool in a model API's shape."""
    if api == "openai":
        return {"type": "function", "function": {"name": READ_RESOURCE, "description": DESCRIPTION,
                                                 "parameters": SCHEMA}}
    return {"name": READ_RESOURCE, "description": DESCRIPTION, "input_schema": SCHEMA}


def links_in(result: Any) -> List[str]:
    """The URIs of the resource links in a tool result."""
    blocks = result.get("content") if isinstance(result, dict) else None
    return [b["uri"] for b in blocks or [] if isinstance(b, dict) and b.get("type") == "resource_link"
            and isinstance(b.get("uri"), str) and 0 < len(b["uri"]) <= MAX_URI]


def read_entry(alias: str) -> ToolEntry:
    """`resources/read` on `alias`, as consent and the audit log see a tool: read-only by
    the protocol (a read changes nothing), so consent treats it as a read-only tool."""
    return make_entry(alias, {"name": "resources/read", "title": "read a resource",
                              "inputSchema": SCHEMA, "annotations": {"readOnlyHint": True}}, READ_RESOURCE)


def read_result(alias: str, uri: str, contents: List[Json]) -> Json:
    """The read as a tool result: each content as bounded text, under its URI."""
    blocks = [{"type": "text", "text": f"[resource {str(c.get('uri', uri))[:MAX_URI]} from server '{alias}'"
                                       f"{', ' + str(c['mimeType'])[:100] if c.get('mimeType') else ''}]\n"
                                       f"{contents_text(c)}"} for c in contents]
    return {"content": blocks or [{"type": "text", "text": f"[resource {uri[:MAX_URI]} is empty]"}],
            "isError": False}
