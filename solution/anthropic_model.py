"""Anthropic's Messages API behind the `Model` interface.

The tool table arrives already in this API's shape (`name`, `description`,
`input_schema`, built by `translate.to_anthropic_tool`). This module owns the
rest of the mapping: conversation messages to `tool_use` / `tool_result`
blocks, and MCP content blocks to what a `tool_result` may hold.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .commands.bill import flat_usage
from .lifecycle.contents import MAX_BLOB_BYTES, blob_size
from .http_json import Endpoint, HttpSettings, post_json
from .model import Json, Message, ModelTurn, ToolCall, block_text

DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def embedded_image(block: Json) -> bool:
    """An embedded resource that is an image the API takes, within the blob limit."""
    resource = block.get("resource")
    return isinstance(resource, dict) and resource.get("mimeType") in IMAGE_TYPES and \
        isinstance(resource.get("blob"), str) and blob_size(resource["blob"]) <= MAX_BLOB_BYTES


def tool_result_content(result: Optional[Json]) -> List[Json]:
    """MCP content blocks as `tool_result` content: text and images as they are (an
    embedded image resource too), other resources as text (the API has no resource block)."""
    blocks: List[Json] = []
    for block in (result or {}).get("content") or []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            blocks.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image" and block.get("data"):
            blocks.append({"type": "image", "source": {"type": "base64", "data": block["data"],
                                                       "media_type": block.get("mimeType", "image/png")}})
        elif kind == "resource" and embedded_image(block):  # a picture the server embedded: as a picture
            blocks.append({"type": "image", "source": {"type": "base64", "data": block["resource"]["blob"],
                                                       "media_type": block["resource"]["mimeType"]}})
        else:  # resources and anything else, as text (the API has no block for them)
            blocks.append({"type": "text", "text": block_text(block)})
    return blocks or [{"type": "text", "text": "(no content)"}]


def to_messages(messages: List[Message]) -> List[Json]:
    wire: List[Json] = []
    for message in messages:
        if message.role == "tool":
            block = {"type": "tool_result", "tool_use_id": message.tool_call_id,
                     "content": tool_result_content(message.result),
                     "is_error": bool((message.result or {}).get("isError"))}
            # Results answering one assistant turn travel together in one user message.
            if wire and wire[-1]["role"] == "user" and isinstance(wire[-1]["content"], list):
                wire[-1]["content"].append(block)
            else:
                wire.append({"role": "user", "content": [block]})
        elif message.role == "note":  # after the results it follows, in the same user message
            note = {"type": "text", "text": message.text}
            if wire and wire[-1]["role"] == "user" and isinstance(wire[-1]["content"], list):
                wire[-1]["content"].append(note)
            else:
                wire.append({"role": "user", "content": [note]})
        elif message.role == "assistant":
            content: List[Json] = [{"type": "text", "text": message.text}] if message.text else []
            content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                        for c in message.tool_calls]
            wire.append({"role": "assistant", "content": content})
        else:
            wire.append({"role": "user", "content": message.text})
    return wire


# Prompt caching. The API reads a prompt as tools, then system, then messages, and
# caches the prefix that ends at a block marked with `cache_control` (at most four
# marks; a read costs 0.1 of an input token, a write 1.25). Marked: the last tool,
# so a table that only grew still reads the part the model has seen; the system
# prompt, which never changes within a run; and the conversation's last block, so
# each message is paid for in full once. The fourth mark is where the previous
# request ended: the API looks for an earlier entry only 20 blocks back from a
# mark, and a turn of many parallel calls adds more blocks than that.
EPHEMERAL: Json = {"type": "ephemeral"}


def marked(block: Json) -> Json:
    return {**block, "cache_control": EPHEMERAL}


def system_blocks(system: str) -> List[Json]:
    return [marked({"type": "text", "text": system})] if system else []


def marked_conversation(wire: List[Json]) -> List[Json]:
    """The conversation with the last block of its last two user messages marked."""
    users = [i for i, message in enumerate(wire) if message["role"] == "user"][-2:]
    marks = list(wire)
    for index in users:
        content = wire[index]["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        if blocks:
            marks[index] = {**wire[index], "content": [*blocks[:-1], marked(blocks[-1])]}
    return marks


def from_response(data: Json) -> ModelTurn:
    texts, calls = [], []
    for block in data.get("content") or []:
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            calls.append(ToolCall(str(block.get("id")), str(block.get("name")), block.get("input") or {}))
    usage = flat_usage(data.get("usage"))  # nested counts too (cached tokens are nested)
    return ModelTurn("".join(texts), calls, usage)


class AnthropicModel:
    api = "anthropic"

    def __init__(self, api_key: str, model: str = DEFAULT_MODEL, base_url: str = DEFAULT_BASE_URL,
                 *, max_tokens: int = 1024, http: HttpSettings = HttpSettings()) -> None:
        self.name = f"anthropic:{model}"
        self.model = model
        self.max_tokens = max_tokens
        self.http = http
        self.endpoint = Endpoint(base_url.rstrip("/") + "/v1/messages",
                                 {"x-api-key": api_key, "anthropic-version": API_VERSION},
                                 "Anthropic API", "ANTHROPIC_API_KEY", model)

    def request_body(self, system: str, tools: List[Json], messages: List[Message]) -> Dict[str, Any]:
        return {"model": self.model, "max_tokens": self.max_tokens, "system": system_blocks(system),
                "tools": [*tools[:-1], marked(tools[-1])] if tools else [],
                "messages": marked_conversation(to_messages(messages))}

    async def next_turn(self, system: str, tools: List[Json], messages: List[Message]) -> ModelTurn:
        data = await post_json(self.endpoint, self.request_body(system, tools, messages), self.http)
        return from_response(data)
