"""The MCP 2026-07-28 envelope: what every request carries and every result must have."""

from __future__ import annotations

from typing import Any, Dict, Optional

from .errors import ProtocolViolation

Json = Dict[str, Any]

PROTOCOL_VERSION = "2026-07-28"
# The handshake era, for servers that predate 2026-07-28 (most of those running today).
LEGACY_VERSION = "2025-11-25"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
UNSUPPORTED_VERSION = -32022
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"  # opts one request in to `notifications/message`
CLIENT_INFO: Json = {"name": "mcp-client-lab", "version": "1.0.0"}

# Built once: the envelope is the same on every request that declares nothing.
_META: Json = {
    VERSION_KEY: PROTOCOL_VERSION,
    CAPABILITIES_KEY: {},
    CLIENT_INFO_KEY: CLIENT_INFO,
}


def with_envelope(params: Optional[Json], capabilities: Optional[Json] = None,
                  log_level: Optional[str] = None) -> Json:
    """`params` plus the `_meta` keys every 2026-07-28 request must carry;
    `capabilities` are this client's, declared on each request (none by default);
    `log_level`: the server's log messages at or above it are wanted for this request."""
    meta = _META if not capabilities else {**_META, CAPABILITIES_KEY: capabilities}
    if log_level:
        meta = {**meta, LOG_LEVEL_KEY: log_level}
    if not params:
        return {"_meta": meta}  # shared, never mutated: it is only serialised
    own = params.get("_meta")
    return {**params, "_meta": {**own, **meta} if own else meta}


def complete_result(method: str, result: Any, *, allow_input_required: bool = False,
                    allow_task: bool = False) -> Json:
    """Check a result's `resultType`: a missing one means complete.

    `input_required` and `task` are only expected where the caller can handle
    them (a tool call; a task handle on `tasks/get` is a known slip of the
    extension's own examples); any other value is unknown, and reported
    rather than guessed at.
    """
    if not isinstance(result, dict):
        raise ProtocolViolation(f"{method}: the result is not a JSON object")
    kind = result.get("resultType", "complete")
    if kind == "complete" or (kind == "input_required" and allow_input_required) or \
            (kind == "task" and allow_task):
        return result
    raise ProtocolViolation(f"{method}: unsupported resultType {kind!r}")
