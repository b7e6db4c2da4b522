"""The JSON-RPC words every fixture module shares: error codes, `Json`, the
error a handler raises to answer with one, and what a tool handler returns.

Defined here once so that `core` (the protocol) and `asking` (questions during
a call) both build on it without importing each other; with them the framing
every front shares: a line parsed into a request (or the error it earns) and a
request answered with its result or error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

Json = Dict[str, Any]  # a JSON object as json.loads gives it

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION = -32022


class RpcError(Exception):
    """A JSON-RPC error to send back instead of a result."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> Json:
        error: Json = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ToolFailed(Exception):
    """Raised by a tool handler: becomes a result with `isError: true`.

    This is the error class written for the model to read and act on. An
    error may carry data too (`structured`): it is sent as the error result's
    `structuredContent`, which no outputSchema vouches for, so a client must
    never hand it to a program as the tool's answer.
    """

    def __init__(self, text: str, structured: Optional[Any] = None) -> None:
        super().__init__(text)
        self.structured = structured


@dataclass
class ToolOutput:
    """What a tool handler returns: its text, optionally structured data, and
    content blocks to follow the text (resource links, embedded resources)."""

    text: str
    structured: Optional[Any] = None
    blocks: List[Json] = field(default_factory=list)


def handle_request(message: Json, dispatch: Callable[[str, Any], Json]) -> Optional[Json]:
    """JSON-RPC around `dispatch(method, params)`: check the request, reply with its
    result or the RpcError it raised; None for notifications and stray responses."""
    has_id = "id" in message
    request_id = message.get("id")
    method = message.get("method")
    if not has_id and isinstance(method, str):
        return None  # a notification: the shell handles cancellation
    if method is None and ("result" in message or "error" in message):
        return None  # a response from the client: never expected, ignored
    if message.get("jsonrpc") != "2.0" or not isinstance(method, str) or \
            not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
        return error_reply(request_id if isinstance(request_id, (str, int)) else None,
                           RpcError(INVALID_REQUEST, "Invalid request"))
    try:
        return {"jsonrpc": "2.0", "id": request_id, "result": dispatch(method, message.get("params"))}
    except RpcError as exc:
        return error_reply(request_id, exc)
    except Exception as exc:  # a fixture bug still gets an answer, never silence
        return error_reply(request_id, RpcError(INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}"))


@dataclass
class Unreadable:
    """A line that is not a JSON object, with the error reply it earns."""

    reply: Json


def parse_request(line: bytes) -> Json | Unreadable:
    """A JSON-RPC object whose id (if any) can key a table, or the error it earns.
    Checked here, before any shell looks the id up: an object as an id is unhashable."""
    try:
        message = json.loads(line)
    except ValueError as exc:
        return Unreadable(error_reply(None, RpcError(PARSE_ERROR, "Parse error", str(exc))))
    except RecursionError:  # not a ValueError: json.loads recurses once per level
        return Unreadable(error_reply(None, RpcError(PARSE_ERROR, "Parse error: nested too deeply")))
    if not isinstance(message, dict):
        return Unreadable(error_reply(None, RpcError(INVALID_REQUEST, "Invalid request: not a JSON object")))
    if "id" in message and not usable_id(message["id"]):
        return Unreadable(error_reply(None, RpcError(INVALID_REQUEST,
                                                     "Invalid request: an id must be a string, a number or null")))
    return message


def usable_id(value: Any) -> bool:
    """An id JSON-RPC allows (string, number, null): never an object, a list or a bool."""
    return value is None or (isinstance(value, (str, int, float)) and not isinstance(value, bool))


def error_reply(request_id: Any, error: RpcError) -> Json:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}
