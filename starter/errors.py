"""What can go wrong talking to an MCP server, as distinct exception types.

A peer's JSON-RPC error (`McpError`) is kept apart from local failures
(`RequestTimeout`, `ServerGone`): the first is the server's word, the others
are what this client observed, and neither has a spec error code.
"""

from __future__ import annotations

from typing import Any


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


class AuditFailed(ClientError):
    """The audit log could not be written: the run stops, saying whether the call went out."""


class ModelApiError(ClientError):
    """A model API call failed; the message is one line saying why and what to check."""
