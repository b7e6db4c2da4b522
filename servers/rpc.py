"""The JSON-RPC words every fixture module shares: error codes, `Json`, the
error a handler raises to answer with one, and what a tool handler returns.

Defined here once so that `core` (the protocol) and `asking` (questions during
a call) both build on it without importing each other. Plain classes, not
dataclasses: every fixture process would otherwise import `inspect` at start,
about 10 ms of CPU each, and a self-check starts some twenty of them.
"""

from __future__ import annotations

# The fixtures import typing for the type checker only (mypy reads any name
# TYPE_CHECKING as true): importing it would cost every server start about 4 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

    Json = Dict[str, Any]

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


class ToolOutput:
    """What a tool handler returns: its text, and optionally structured data."""

    def __init__(self, text: str, structured: Optional[Any] = None) -> None:
        self.text = text
        self.structured = structured
