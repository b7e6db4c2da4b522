"""The 2025-11-25 era in front of a fixture server (`--era legacy`).

Most MCP servers running today still speak the `initialize` handshake. This
front makes a fixture behave like one: nothing but `initialize` (and `ping`)
is served before the handshake, requests carry no `_meta` envelope (one that
does is refused, as the official SDK refuses it), and results carry no
`resultType`, cache hints or identity stamp. The tools themselves, paging and
cursors included, are the same as in the current era, and so are resources,
prompts and completion (content.py).

A session here has state the current era keeps per request: what the client
declared in `initialize` (so what it may be asked: elicitation, sampling,
roots), the `logging/setLevel` threshold, the resources it subscribed to, and
the roots it gave, kept until it says `notifications/roots/list_changed`.
"""

from __future__ import annotations

from typing import Any, Optional, Set

from servers.content import resource_not_found
from servers.core import CONTENT_METHODS, Report, Server, no_report
from servers.envelope import VERSION_KEY, declares
from servers.logs import checked_level
from servers.rpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Json, RpcError, handle_request, parse_request
from servers.tasks import TaskBoard

LEGACY_VERSION = "2025-11-25"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class LegacyFront:
    """A stateful legacy session around a `Server` (one per process, as on stdio)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.name = server.name
        self.initialized = False
        self.client_capabilities: Json = {}  # what the client declared in initialize
        self.session: Optional[str] = None  # over HTTP, the Mcp-Session-Id this front serves
        self.log_level: Optional[str] = None  # logging/setLevel's; None: no messages
        self.subscriptions: Set[str] = set()  # resources/subscribe's URIs
        self.roots: Optional[Json] = None  # the client's last roots/list result, until it says they changed

    def handle_line(self, line: bytes) -> Optional[Json]:
        message = parse_request(line)
        if isinstance(message, dict):
            return self.handle_message(message)
        return message.reply  # a line that is not a JSON object: same answer in both eras

    def handle_message(self, message: Json, report: Report = no_report) -> Optional[Json]:
        if message.get("method") == "notifications/roots/list_changed" and "id" not in message:
            self.roots = None  # asked again the next time a tool needs them
            self.server.record("roots-changed", session=self.session)
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
        self.server.logs.set(self.log_level)  # this session's threshold, for whatever this request logs
        if method == "logging/setLevel" and self.server.content is not None:
            self.log_level = checked_level(params.get("level"))
            self.server.record("log-level", level=self.log_level, session=self.session)
            return {}
        if method in ("resources/subscribe", "resources/unsubscribe") and self.server.content is not None:
            return self.subscription(method, params.get("uri"))
        if method in CONTENT_METHODS and self.server.content is not None:
            return self.server.content_request(method, params, legacy=True)
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
        return self.server.call_tool(params, report, as_task=wants_task,
                                     can_ask=declares(tool.asks, self.client_capabilities), asker=self.ask)

    def ask(self, method: str, params: Json) -> Optional[Json]:
        """A request to the client; the roots come from the session's copy while it holds."""
        if method == "roots/list" and self.roots is not None:
            return self.roots
        ask_client = self.server.ask_client
        answer = ask_client(method, params) if ask_client is not None else None
        if method == "roots/list" and answer is not None:
            self.roots = answer
        return answer

    def subscription(self, method: str, uri: Any) -> Json:
        content = self.server.content
        assert content is not None
        if not content.accepts(uri):
            raise resource_not_found(uri, legacy=True)
        assert isinstance(uri, str)
        if method == "resources/subscribe":
            self.subscriptions.add(uri)
        else:
            self.subscriptions.discard(uri)
        self.server.record("subscribed" if method == "resources/subscribe" else "unsubscribed",
                           uri=uri, session=self.session)
        return {}

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
        declared = params.get("capabilities")
        self.client_capabilities = declared if isinstance(declared, dict) else {}
        capabilities = self.server.capabilities()
        # Tasks only from a board that speaks this era's shapes: a current-era fixture's
        # handshake sessions (over HTTP) offer none rather than answer in the other era's.
        if self.server.tasks is not None and self.server.tasks.legacy:
            capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return {"protocolVersion": version,
                "capabilities": capabilities,
                "serverInfo": {"name": self.server.name, "version": self.server.version},
                "instructions": self.server.instructions}
