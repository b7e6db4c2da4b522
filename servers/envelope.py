"""What a 2026-07-28 request carries in `params._meta`, checked strictly: the
protocol version, the client's capabilities for this one request, and what
follows from them (form elicitation, the tasks extension, and the rest a
server may only use when declared).

Apart from `core` so that both eras' fronts and the shells can ask what a
client declared without importing the whole protocol.
"""

from __future__ import annotations

from typing import Any

from servers.rpc import INVALID_PARAMS, UNSUPPORTED_VERSION, Json, RpcError

PROTOCOL_VERSION = "2026-07-28"
SUPPORTED_VERSIONS = [PROTOCOL_VERSION]
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
MISSING_CAPABILITY = -32021


def client_capabilities(params: Json) -> Json:
    meta = params.get("_meta")
    capabilities = meta.get(CAPABILITIES_KEY) if isinstance(meta, dict) else None
    return capabilities if isinstance(capabilities, dict) else {}


def declares_form(capabilities: Any) -> bool:
    """Whether declared capabilities include form elicitation (either era)."""
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    # `{}` means form support too, for clients written before modes existed.
    return isinstance(elicitation, dict) and (not elicitation or "form" in elicitation)


def declares(method: str, capabilities: Any) -> bool:
    """Whether declared capabilities let a server send `method` to the client (either era):
    a server must not ask for what the client did not declare."""
    if method == "elicitation/create":
        return declares_form(capabilities)
    wanted = {"sampling/createMessage": "sampling", "roots/list": "roots"}.get(method)
    return wanted is not None and isinstance(capabilities, dict) and isinstance(capabilities.get(wanted), dict)


def declares_tasks(params: Json) -> bool:
    extensions = client_capabilities(params).get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


def missing_tasks_capability() -> RpcError:
    return RpcError(MISSING_CAPABILITY, f"Client did not declare required extension '{TASKS_EXTENSION}'",
                    {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})


def check_envelope(params: Any) -> None:
    """Every 2026-07-28 request carries version and capabilities in `_meta`."""
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: 'params' with '_meta' is required")
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: missing '_meta'")
    if VERSION_KEY not in meta:
        raise RpcError(INVALID_PARAMS, f"Invalid params: missing _meta key {VERSION_KEY}")
    if CAPABILITIES_KEY not in meta:
        raise RpcError(INVALID_PARAMS, f"Invalid params: missing _meta key {CAPABILITIES_KEY}")
    version = meta[VERSION_KEY]
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {VERSION_KEY} must be a string")
    if not isinstance(meta[CAPABILITIES_KEY], dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {CAPABILITIES_KEY} must be an object")
    if version not in SUPPORTED_VERSIONS:
        raise RpcError(UNSUPPORTED_VERSION, "Unsupported protocol version",
                       {"supported": SUPPORTED_VERSIONS, "requested": version})
