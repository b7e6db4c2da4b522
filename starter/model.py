"""The one interface every model implements, and the messages of a conversation.

Messages are kept in a neutral shape; each model adapter translates them to
its API. A model sees the system prompt, the model-facing tool table and the
conversation so far, and returns text, tool calls, or both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Protocol

from .lifecycle.contents import link_text, resource_block_text

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
