"""Which model answers, and the real ones over HTTP.

    MOCK=1                       the deterministic mock (always wins)
    ANTHROPIC_API_KEY            Anthropic Messages API
      ANTHROPIC_MODEL, ANTHROPIC_BASE_URL    optional overrides
    OPENAI_BASE_URL or OPENAI_API_KEY        any OpenAI-compatible API
      OPENAI_MODEL               the model name (local servers need one)
    nothing                      the mock, and the note says so

Each real model sits behind the `Model` interface (model.py). The tool table
arrives already in its API's shape (`translate.to_anthropic_tool` or
`to_openai_tool`); this module owns the rest of the mapping: the conversation's
messages to the API's, MCP content blocks to what a tool result may hold there,
and the response back to a `ModelTurn`. OpenAI-compatible covers local servers
that speak the same API (Ollama, llama.cpp, vLLM) through a base URL.

A request is a POST of JSON with the standard library's `urllib`, on purpose,
so the raw shapes each API takes stay in plain view. Each attempt runs on a
worker thread with a socket timeout (a stalled response ends there); 429 and
5xx answers are retried with backoff, honouring `retry-after`; everything
else becomes a one-line `ModelApiError`.

Over 400 lines because both APIs' mappings read best side by side: they take
the same conversation and differ exactly where the APIs do.
"""

from __future__ import annotations

import json
import os
import re
import socket
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

import anyio

from .errors import ModelApiError
from .mock_model import MockModel
from .model import MAX_BLOB_BYTES, blob_size
from .model import Json, Message, Model, ModelTurn, ToolCall, block_text


def choose_model(env: Optional[Mapping[str, str]] = None) -> Tuple[Model, str]:
    """The model for this run, and a note saying which and why."""
    env = os.environ if env is None else env
    if env.get("MOCK", "") not in ("", "0"):
        return MockModel(), "model: mock (MOCK=1)"
    if env.get("ANTHROPIC_API_KEY"):
        chosen = AnthropicModel(
            env["ANTHROPIC_API_KEY"], env.get("ANTHROPIC_MODEL") or ANTHROPIC_DEFAULT_MODEL,
            env.get("ANTHROPIC_BASE_URL") or ANTHROPIC_DEFAULT_BASE_URL)
        return chosen, f"model: {chosen.model} (Anthropic Messages API, from ANTHROPIC_API_KEY)"
    if env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_KEY"):
        base = env.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL
        found = OpenAIModel(env.get("OPENAI_MODEL") or OPENAI_DEFAULT_MODEL, base,
                            env.get("OPENAI_API_KEY") or None)
        return found, f"model: {found.model} (OpenAI-compatible API at {base})"
    return MockModel(), ("model: mock (no model API is configured: set ANTHROPIC_API_KEY or "
                         "OPENAI_BASE_URL/OPENAI_API_KEY for a real one)")


# -- posting JSON to a model API --------------------------------------------

MAX_BACKOFF = 20.0


@dataclass(frozen=True)
class HttpSettings:
    timeout: float = 60.0  # seconds without a byte before an attempt gives up
    retries: int = 3
    backoff: float = 1.0  # first pause; doubles per retry unless retry-after says otherwise


@dataclass(frozen=True)
class Endpoint:
    url: str
    headers: Mapping[str, str]
    service: str  # "Anthropic API", "OpenAI-compatible API at ..."
    key_hint: str  # what to check when the key is refused
    model: str


def _post(url: str, payload: bytes, headers: Mapping[str, str], timeout: float) -> Tuple[int, Dict[str, str], bytes]:
    # Imported here: urllib and http.client cost every start of the client (and of
    # every self-check) some 20 ms, and only a real model's calls need them.
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=payload, method="POST",
                                     headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (URL from config)
            return response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers.items()) if exc.headers else {}, exc.read()


async def post_json(endpoint: Endpoint, body: Json, settings: HttpSettings = HttpSettings()) -> Json:
    payload = json.dumps(body).encode("utf-8")  # encoded once, whatever the retries
    for attempt in range(settings.retries + 1):
        try:
            status, headers, data = await anyio.to_thread.run_sync(
                _post, endpoint.url, payload, endpoint.headers, settings.timeout, abandon_on_cancel=True)
        except (socket.timeout, TimeoutError):
            raise ModelApiError(f"{endpoint.service}: no response within {settings.timeout:g} s "
                                f"({endpoint.url})") from None
        except OSError as exc:  # urllib's URLError is one
            why = getattr(exc, "reason", exc)
            raise ModelApiError(f"{endpoint.service}: cannot reach {endpoint.url}: {why}") from None
        if 200 <= status < 300:
            try:
                answer = json.loads(data)
            except ValueError:
                raise ModelApiError(f"{endpoint.service}: the reply is not JSON: {data[:120]!r}") from None
            if not isinstance(answer, dict):
                raise ModelApiError(f"{endpoint.service}: the reply is not a JSON object")
            return answer
        if (status == 429 or status >= 500) and attempt < settings.retries:
            await anyio.sleep(pause(headers, settings.backoff * 2 ** attempt))
            continue
        raise ModelApiError(describe_failure(endpoint, status, data, body))
    raise AssertionError("unreachable")  # pragma: no cover


def pause(headers: Mapping[str, str], fallback: float) -> float:
    """Seconds to wait before retrying: `retry-after` when given (capped)."""
    for key, value in headers.items():
        if key.lower() == "retry-after":
            try:
                return min(max(float(value), 0.0), MAX_BACKOFF)
            except ValueError:
                break  # an HTTP date: fall back to our own backoff
    return min(fallback, MAX_BACKOFF)


def error_message(data: bytes) -> Tuple[str, Optional[str]]:
    """(message, param) from either API's error body, best effort."""
    try:
        body = json.loads(data)
    except ValueError:
        return data[:200].decode("utf-8", "replace").strip(), None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        param = error.get("param")
        return str(error.get("message", error)), param if isinstance(param, str) else None
    return str(error or body)[:200], None


_TOOL_INDEX = re.compile(r"tools(?:\.|\[)(\d+)")


def describe_failure(endpoint: Endpoint, status: int, data: bytes, body: Json) -> str:
    message, param = error_message(data)
    service = endpoint.service
    if status in (401, 403):
        return f"{service}: the API key was refused (HTTP {status}); check {endpoint.key_hint}"
    if status == 404:
        return (f"{service}: not found (HTTP 404): unknown model {endpoint.model!r} or wrong "
                f"base URL ({endpoint.url}); {message}")
    if status == 400:
        where = _TOOL_INDEX.search(param or "") or _TOOL_INDEX.search(message)
        tools = body.get("tools")
        if where and isinstance(tools, list) and int(where.group(1)) < len(tools):
            tool = tools[int(where.group(1))]
            name = tool.get("name") or tool.get("function", {}).get("name")
            return f"{service}: the API rejected tool {name!r} ({param or where.group(0)}): {message}"
        field = f" (field {param})" if param else ""
        return f"{service}: the API rejected the request{field}: {message}"
    return f"{service}: HTTP {status}: {message}"


def flat_usage(raw: Any, prefix: str = "") -> Dict[str, int]:
    """Every integer count in a usage object, nested ones under dotted keys."""
    found: Dict[str, int] = {}
    if not isinstance(raw, dict):
        return found
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            found.update(flat_usage(value, name + "."))
        elif isinstance(value, int) and not isinstance(value, bool):
            found[name] = value
    return found


# -- Anthropic's Messages API -----------------------------------------------

ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-5"
ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
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


def anthropic_messages(messages: List[Message]) -> List[Json]:
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


def anthropic_turn(data: Json) -> ModelTurn:
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

    def __init__(self, api_key: str, model: str = ANTHROPIC_DEFAULT_MODEL, base_url: str = ANTHROPIC_DEFAULT_BASE_URL,
                 *, max_tokens: int = 1024, http: HttpSettings = HttpSettings()) -> None:
        self.name = f"anthropic:{model}"
        self.model = model
        self.max_tokens = max_tokens
        self.http = http
        self.endpoint = Endpoint(base_url.rstrip("/") + "/v1/messages",
                                 {"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION},
                                 "Anthropic API", "ANTHROPIC_API_KEY", model)

    def request_body(self, system: str, tools: List[Json], messages: List[Message]) -> Dict[str, Any]:
        return {"model": self.model, "max_tokens": self.max_tokens, "system": system_blocks(system),
                "tools": [*tools[:-1], marked(tools[-1])] if tools else [],
                "messages": marked_conversation(anthropic_messages(messages))}

    async def next_turn(self, system: str, tools: List[Json], messages: List[Message]) -> ModelTurn:
        data = await post_json(self.endpoint, self.request_body(system, tools, messages), self.http)
        return anthropic_turn(data)


# -- OpenAI-compatible chat completions -------------------------------------

OPENAI_DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


def tool_message_content(result: Optional[Json]) -> str:
    """MCP content blocks as the text of a tool message (no images there)."""
    text = "\n".join(block_text(block) for block in (result or {}).get("content") or []) or "(no content)"
    # The API has no error flag for tool messages, so the text carries it.
    return f"[tool error] {text}" if (result or {}).get("isError") else text


def openai_messages(system: str, messages: List[Message]) -> List[Json]:
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


def openai_turn(data: Json) -> ModelTurn:
    choices = data.get("choices") or [{}]
    message = choices[0].get("message") or {}
    calls = [ToolCall(str(c.get("id")), str(c.get("function", {}).get("name")),
                      parse_arguments(c.get("function", {}).get("arguments")))
             for c in message.get("tool_calls") or []]
    usage = flat_usage(data.get("usage"))  # nested counts too (cached tokens are nested)
    return ModelTurn(str(message.get("content") or ""), calls, usage)


class OpenAIModel:
    api = "openai"

    def __init__(self, model: str = OPENAI_DEFAULT_MODEL, base_url: str = OPENAI_DEFAULT_BASE_URL,
                 api_key: Optional[str] = None, *, http: HttpSettings = HttpSettings()) -> None:
        self.name = f"openai:{model}"
        self.model = model
        self.http = http
        self.max_tokens: Optional[int] = None  # none: the API's own limit (sampling sets one)
        headers: Dict[str, str] = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self.endpoint = Endpoint(base_url.rstrip("/") + "/chat/completions", headers,
                                 f"OpenAI-compatible API at {base_url}", "OPENAI_API_KEY", model)

    def request_body(self, system: str, tools: List[Json], messages: List[Message]) -> Dict[str, Any]:
        body: Dict[str, Any] = {"model": self.model, "messages": openai_messages(system, messages)}
        if tools:
            body["tools"] = tools
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    async def next_turn(self, system: str, tools: List[Json], messages: List[Message]) -> ModelTurn:
        data = await post_json(self.endpoint, self.request_body(system, tools, messages), self.http)
        return openai_turn(data)
