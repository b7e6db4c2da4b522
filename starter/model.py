"""The one interface every model implements, the messages of a conversation, and
how a tool result reads as text.

Messages are kept in a neutral shape; each model adapter translates them to
its API. A model sees the system prompt, the model-facing tool table and the
conversation so far, and returns text, tool calls, or both.

A tool result's content blocks are the server's: text as it is, a resource
link named with its URI, an embedded resource's contents bounded (text is cut
at `MAX_TEXT_CHARS` with a note saying how much was left out; a blob is never
decoded past `MAX_BLOB_BYTES`, its size reckoned from the Base64 length first,
and shown as text only when its type says it is text and its bytes are UTF-8).
Anything else is named with its type, never dropped silently. The message that
carried them is bounded by the transport (stdio_client.MAX_LINE_BYTES), so
memory is bounded before any of this runs.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Protocol

Json = Dict[str, Any]


@dataclass
class ToolCall:
    id: str
    name: str  # a model-facing name from the tool table
    arguments: Json


@dataclass
class ModelTurn:
    text: str = ""
    tool_calls: List[ToolCall] = field(default_factory=list)
    usage: Dict[str, int] = field(default_factory=dict)  # token counts, as the API reported them


@dataclass
class Message:
    role: str  # "user", "assistant", "tool" or "note" (the client's own news for the model, mid-run)
    text: str = ""
    tool_calls: List[ToolCall] = field(default_factory=list)
    tool_call_id: Optional[str] = None
    result: Optional[Json] = None  # the MCP tool result, for role "tool"


class Model(Protocol):
    name: str
    api: str  # which tool-table shape it takes: "anthropic" or "openai"

    async def next_turn(self, system: str, tools: List[Json], messages: List[Message]) -> ModelTurn:
        """The model's next move given everything so far."""
        ...


def block_text(block: Any) -> str:
    """One MCP content block as text: text as it is, an embedded resource's contents
    (contents.py: bounded, a text-like blob decoded), a resource link's name and URI
    with the tool that reads it; anything else named, never dropped."""
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource_link":
        return link_text(block)
    if kind == "resource":
        return resource_block_text(block)
    return f"[{kind or 'unknown'} content not shown]"


def result_text(result: Optional[Json]) -> str:
    """The text a tool result shows (non-text blocks named, not dropped)."""
    if not result:
        return ""
    return "\n".join(block_text(block) for block in result.get("content") or [])

MAX_TEXT_CHARS = 100_000  # of one resource's text, shown or given to the model
MAX_BLOB_BYTES = 8 * 1024 * 1024  # decoded; a larger blob is named, not decoded
TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/javascript",
              "application/toml", "application/x-sh")


def is_text_type(mime: Any) -> bool:
    kind = str(mime or "").split(";")[0].strip().lower()
    return kind.startswith("text/") or kind in TEXT_TYPES or kind.endswith(("+json", "+xml"))


def blob_size(blob: str) -> int:
    """The decoded size of Base64 text, reckoned without decoding it."""
    return len(blob) * 3 // 4 - blob[-2:].count("=")


def blob_bytes(blob: Any, limit: int = MAX_BLOB_BYTES) -> Optional[bytes]:
    """The blob's bytes: None when it is not Base64, or larger than `limit` (not decoded then)."""
    if not isinstance(blob, str) or blob_size(blob) > limit:
        return None
    try:
        return base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return None


def cut(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """`text` within `limit` characters, with a note when cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… cut here: {len(text) - limit:,} more characters not shown]"


def contents_text(item: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """One `ResourceContents` (or an embedded resource) as bounded text."""
    if not isinstance(item, dict):
        return "[resource contents that are not an object]"
    mime = item.get("mimeType")
    if isinstance(item.get("text"), str):
        return cut(item["text"], limit)
    blob = item.get("blob")
    if not isinstance(blob, str):
        return f"[resource {str(item.get('uri', ''))[:200]} with neither text nor blob]"
    size = blob_size(blob)
    data = blob_bytes(blob) if is_text_type(mime) else None
    if data is not None:
        try:
            return cut(data.decode("utf-8"), limit)
        except UnicodeDecodeError:
            pass
    over = f" (over the {MAX_BLOB_BYTES:,}-byte limit, not decoded)" if size > MAX_BLOB_BYTES else ""
    return f"[binary resource {str(item.get('uri', ''))[:200]}, {mime or 'no type'}, about {size:,} bytes{over}: not shown]"


def resource_block_text(block: Json) -> str:
    """An embedded `resource` content block as text: its URI, then its contents."""
    resource = block.get("resource")
    uri = resource.get("uri", "") if isinstance(resource, dict) else ""
    return f"[embedded resource {str(uri)[:200]}]\n{contents_text(resource)}"


def link_text(block: Json) -> str:
    """A `resource_link` block as text: what it names (the model's read_resource tool
    says it reads these; a person has the `read` command)."""
    mime = f" ({block.get('mimeType')})" if block.get("mimeType") else ""
    return f"[resource link: {str(block.get('name', ''))[:200]} {str(block.get('uri', ''))[:500]}{mime}]"
