"""OpenAI-compatible chat completions behind the `Model` interface.

This also covers local servers that speak the same API (Ollama, llama.cpp,
vLLM) through a base URL. The tool table arrives as functions with
`parameters` (`translate.to_openai_tool`); tool results go back as
`role: "tool"` messages, whose content is text only.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from .commands.bill import flat_usage
from .http_json import Endpoint, HttpSettings, post_json
from .model import Json, Message, ModelTurn, ToolCall, block_text

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def tool_message_content(result: Optional[Json]) -> str:
    """MCP content blocks as the text of a tool message (no images there)."""
    text = "\n".join(block_text(block) for block in (result or {}).get("content") or []) or "(no content)"
    # The API has no error flag for tool messages, so the text carries it.
    return f"[tool error] {text}" if (result or {}).get("isError") else text


def to_messages(system: str, messages: List[Message]) -> List[Json]:
    wire: List[Json] = [{"role": "system", "content": system}]
    for message in messages:
        if message.role == "tool":
            wire.append({"role": "tool", "tool_call_id": message.tool_call_id,
                         "content": tool_message_content(message.result)})
        elif message.role == "assistant":
            entry: Json = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for c in message.tool_calls]
            wire.append(entry)
        else:  # the user's question, or the client's news (which says it is the client's)
            wire.append({"role": "user", "content": message.text})
    return wire


def parse_arguments(raw: Any) -> Any:
    """Arguments arrive as a JSON string; a broken one is passed on as it is,
    so the aggregator's check turns it into an isError the model can read."""
    if isinstance(raw, dict):
        return raw
    try:
        return json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        return raw


def from_response(data: Json) -> ModelTurn:
    choices = data.get("choices") or [{}]
    message = choices[0].get("message") or {}
    calls = [ToolCall(str(c.get("id")), str(c.get("function", {}).get("name")),
                      parse_arguments(c.get("function", {}).get("arguments")))
             for c in message.get("tool_calls") or []]
    usage = flat_usage(data.get("usage"))  # nested counts too (cached tokens are nested)
    return ModelTurn(str(message.get("content") or ""), calls, usage)


class OpenAIModel:
    api = "openai"

    def __init__(self, model: str = DEFAULT_MODEL, base_url: str = DEFAULT_BASE_URL,
                 api_key: Optional[str] = None, *, http: HttpSettings = HttpSettings()) -> None:
        self.name = f"openai:{model}"
        self.model = model
        self.http = http
        self.max_tokens: Optional[int] = None  # none: the API's own limit (sampling sets one)
        headers: Dict[str, str] = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self.endpoint = Endpoint(base_url.rstrip("/") + "/chat/completions", headers,
                                 f"OpenAI-compatible API at {base_url}", "OPENAI_API_KEY", model)

    def request_body(self, system: str, tools: List[Json], messages: List[Message]) -> Dict[str, Any]:
        body: Dict[str, Any] = {"model": self.model, "messages": to_messages(system, messages)}
        if tools:
            body["tools"] = tools
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    async def next_turn(self, system: str, tools: List[Json], messages: List[Message]) -> ModelTurn:
        data = await post_json(self.endpoint, self.request_body(system, tools, messages), self.http)
        return from_response(data)
