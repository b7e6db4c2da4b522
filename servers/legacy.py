"""The 2025-11-25 era in front of a fixture server (`--era legacy`).

Most MCP servers running today still speak the `initialize` handshake. This
front makes a fixture behave like one: nothing but `initialize` (and `ping`)
is served before the handshake, requests carry no `_meta` envelope (one that
does is refused, as the official SDK refuses it), and results carry no
`resultType`, cache hints or identity stamp. The tools themselves, paging and
cursors included, are the same as in the current era.
"""

from __future__ import annotations

from servers.core import Server, no_report
from servers.envelope import VERSION_KEY, declares_form
from servers.rpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, RpcError, handle_request, parse_request
from servers.tasks import TaskBoard

TYPE_CHECKING = False  # typing for the type checker only (see servers/rpc.py)
if TYPE_CHECKING:
    from typing import Any, Optional

    from servers.core import Report
    from servers.rpc import Json

LEGACY_VERSION = "2025-11-25"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class LegacyFront:
    """A stateful legacy session around a `Server` (one per process, as on stdio)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.name = server.name
        self.initialized = False
        self.can_elicit = False  # what the client declared in initialize

    def handle_line(self, line: bytes) -> Optional[Json]:
        message = parse_request(line)
        if isinstance(message, dict):
            return self.handle_message(message)
        return message.reply  # a line that is not a JSON object: same answer in both eras

    def handle_message(self, message: Json, report: Report = no_report) -> Optional[Json]:
        return handle_request(message, lambda method, params: self.dispatch(method, params, report))

    def dispatch(self, method: str, params: Any, report: Report = no_report) -> Json:
        params = params if isinstance(params, dict) else {}
        meta = params.get("_meta")
        if isinstance(meta, dict) and VERSION_KEY in meta:
            raise RpcError(INVALID_REQUEST, "This server speaks the 2025-11-25 handshake era; requests "
                                            "carrying the 2026-07-28 envelope are not accepted")
        if method == "initialize":
            return self.initialize(params)
        if method == "ping":
            return {}
        if not self.initialized:
            if method == "server/discover":
                raise RpcError(METHOD_NOT_FOUND, "Method not found", method)
            raise RpcError(INVALID_PARAMS, "Server not initialized: send initialize first")
        if method == "tools/list":
            return self.server.list_tools(params, legacy=True)
        if method == "tools/call":
            return self.call_tool(params, report)
        board = self.server.tasks
        if isinstance(board, TaskBoard) and method.startswith("tasks/"):
            return self.task_request(board, method, params)
        raise RpcError(METHOD_NOT_FOUND, "Method not found", method)

    def call_tool(self, params: Json, report: Report) -> Json:
        """The client decides: `params.task` asks for a task, which the tool's
        taskSupport must allow; a `required` tool refuses to run without one."""
        tool = self.server.tool_named(params)
        wants_task = isinstance(params.get("task"), dict)
        if wants_task and tool.task_support == "forbidden":
            raise RpcError(METHOD_NOT_FOUND, f"Tool {tool.name} does not support task augmentation")
        if not wants_task and tool.task_support == "required":
            raise RpcError(METHOD_NOT_FOUND,
                           f"Tool {tool.name} requires task augmentation (taskSupport: 'required')")
        return self.server.call_tool(params, report, as_task=wants_task, can_ask=self.can_elicit)

    def task_request(self, board: TaskBoard, method: str, params: Json) -> Json:
        task_id = params.get("taskId")
        if method == "tasks/get":
            return board.legacy_view(board.find(task_id))
        if method == "tasks/result":
            return board.wait_result(task_id)
        if method == "tasks/cancel":
            return board.legacy_view(board.cancel(task_id))
        if method == "tasks/list":
            return {"tasks": board.legacy_list()}
        raise RpcError(METHOD_NOT_FOUND, "Method not found", method)

    def initialize(self, params: Json) -> Json:
        requested = params.get("protocolVersion")
        # Echo a version we speak; otherwise offer our newest, as the handshake says.
        version = requested if requested in HANDSHAKE_VERSIONS else LEGACY_VERSION
        self.initialized = True
        self.can_elicit = declares_form(params.get("capabilities"))
        capabilities: Json = {"tools": {"listChanged": self.server.list_changes}}
        # Tasks only from a board that speaks this era's shapes: a current-era fixture's
        # handshake sessions (over HTTP) offer none rather than answer in the other era's.
        if self.server.tasks is not None and self.server.tasks.legacy:
            capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return {"protocolVersion": version,
                "capabilities": capabilities,
                "serverInfo": {"name": self.server.name, "version": self.server.version},
                "instructions": self.server.instructions}
