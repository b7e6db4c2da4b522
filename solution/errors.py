"""What can go wrong talking to an MCP server, and the one place it becomes words.

A peer's JSON-RPC error (`McpError`) is kept apart from local failures
(`RequestTimeout`, `ServerGone`): the first is the server's word, the others
are what this client observed, and neither has a spec error code.

`reason` turns any exception into one line (the offline table uses it) and
`error_result` wraps a line as the `isError` result a model reads. Both must
say what happened and where, with no traceback: the model and the person
reading the tool table act on this text.
"""

from __future__ import annotations

from typing import Any, List

from .jsonrpc import Json


class ClientError(Exception):
    """Base class for every failure this client reports."""


class McpError(ClientError):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def from_reply(cls, error: Any) -> "McpError":
        """Build from a reply's `error` member, tolerating malformed ones."""
        if not isinstance(error, dict):
            return cls(-32603, f"malformed error object: {error!r}")
        code = error.get("code")
        message = error.get("message")
        return cls(code if isinstance(code, int) and not isinstance(code, bool) else -32603,
                   message if isinstance(message, str) else repr(message), error.get("data"))


class RequestTimeout(ClientError):
    """No reply arrived within the request's timeout."""

    def __init__(self, method: str, timeout: float, detail: str = "") -> None:
        super().__init__(f"no reply to {method} within {timeout:g} s" + (f"; {detail}" if detail else ""))
        self.method = method
        self.timeout = timeout


class ServerGone(ClientError):
    """The server process exited or closed its output; the reason says how."""


class ProtocolViolation(ClientError):
    """The server sent something the protocol does not allow."""


class ConfigError(ClientError):
    """The servers config cannot be used; the message names the problem."""


class ModelApiError(ClientError):
    """A model API call failed; the message is one line saying why and what to check."""

def leaves(exc: BaseException) -> List[BaseException]:
    """The innermost exceptions of (possibly nested) exception groups."""
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, (list, tuple)) and inner:
        return [leaf for child in inner for leaf in leaves(child)]
    return [exc]


def reason(exc: BaseException) -> str:
    """One line saying what went wrong."""
    parts = []
    for leaf in leaves(exc):
        if isinstance(leaf, McpError):
            parts.append(f"the server answered error {leaf.code}: {leaf.message}")
        elif isinstance(leaf, (RequestTimeout, ServerGone, ClientError)):
            parts.append(str(leaf))
        elif isinstance(leaf, TimeoutError):
            parts.append("timed out" + (f": {leaf}" if str(leaf) else ""))
        else:
            parts.append(f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__)
    return "; ".join(parts)


def error_result(text: str) -> Json:
    """A tool result the model can read: MCP's shape for a tool execution error."""
    return {"content": [{"type": "text", "text": text}], "isError": True}
