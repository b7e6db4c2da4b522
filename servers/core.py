"""The protocol half of the fixture servers: MCP 2026-07-28, strict, no I/O.

`Server.handle_line` takes one line from stdin and returns the reply to write
(or None). Everything here is pure so the tests can drive it without a
process; `servers.stdio` is the thin shell that reads, writes and journals.

Strictness is the point: a client that forgets `_meta`, names an unknown
version, invents a cursor or calls a tool that does not exist gets the error
code the specification names, so the lab's checks can tell right from lucky.

The JSON-RPC framing is in rpc.py, the request envelope in envelope.py and
questions during a call in asking.py.
"""

from __future__ import annotations

import binascii

from servers.asking import run_asking
from servers.envelope import (PROTOCOL_VERSION, SUPPORTED_VERSIONS, TASK_METHODS, TASKS_EXTENSION, check_envelope,
                              declares_form, declares_tasks, client_capabilities, missing_tasks_capability)
from servers.rpc import (INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_VERSION, RpcError,
                         ToolFailed, ToolOutput, handle_request, parse_request)

TYPE_CHECKING = False  # typing for the type checker only (see servers/rpc.py)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional

    from servers.rpc import Json

    Handler = Callable[..., ToolOutput]  # (arguments) or, with reports_progress, (arguments, report)
    Report = Callable[[float, Optional[float], str], None]  # progress, total, message

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

PAGING_MODES = ("normal", "empty-cursor", "endless")
ENDLESS_PAGES = 40  # an endless lister gives up here, so a client without a page limit still ends


def no_report(progress: float, total: Optional[float], message: str) -> None:
    """Where progress goes when the client did not ask for it."""


class Tool:
    def __init__(self, name: str, description: str, input_schema: Json, handler: Handler, *,
                 title: Optional[str] = None, annotations: Optional[Json] = None,
                 output_schema: Optional[Json] = None, reports_progress: bool = False,
                 asks_user: bool = False, job: Optional[Callable[..., ToolOutput]] = None,
                 task_support: str = "forbidden") -> None:
        self.name = name
        self.description = description
        self.input_schema = input_schema
        self.handler = handler
        self.title = title
        self.annotations = annotations
        self.output_schema = output_schema
        self.reports_progress = reports_progress
        self.asks_user = asks_user  # the handler takes (arguments, answers) and may raise asking.NeedInput
        # Long work run as a task (servers/tasks.py): (arguments, work) -> output.
        self.job = job
        # The handshake era's execution.taskSupport; in 2026-07-28 the server decides.
        self.task_support = task_support

    def to_json(self, *, legacy: bool = False) -> Json:
        tool: Json = {"name": self.name, "description": self.description,
                      "inputSchema": self.input_schema}
        if self.title is not None:
            tool["title"] = self.title
        if self.annotations is not None:
            tool["annotations"] = self.annotations
        if self.output_schema is not None:
            tool["outputSchema"] = self.output_schema
        if legacy and self.task_support != "forbidden":
            tool["execution"] = {"taskSupport": self.task_support}
        return tool


def page_plan(count: int, page_size: int) -> List[List[int]]:
    """Split tool indexes into pages, with an empty page after the first.

    The empty page is the trap: a loop that stops on a short or an empty page
    stops there and never sees the rest. Only a missing cursor ends the list.
    """
    chunks = [list(range(i, min(i + page_size, count))) for i in range(0, count, page_size)]
    if len(chunks) > 1:
        chunks.insert(1, [])
    return chunks or [[]]


class Server:
    def __init__(self, name: str, version: str, instructions: str, tools: List[Tool],
                 page_size: Optional[int] = None, list_changes: bool = False) -> None:
        self.name = name
        self.version = version
        self.instructions = instructions
        self.tools = tools
        self.page_size = page_size  # None: every tool on one page
        self.list_changes = list_changes  # whether its tool list can change (capability listChanged)
        # "empty-cursor": the cursor to the second page is "" (a real cursor, not an end);
        # "endless": every page has a nextCursor (the pages repeat) until ENDLESS_PAGES.
        self.paging = "normal"
        self.list_ttl_ms = 0  # how long a tools/list page may be reused (0: never)
        self.progress_steps = 5  # how often a tool that reports progress reports it
        self.progress_gap = 0.03  # seconds of simulated work before each report
        self.task_steps = 4  # how many steps a task's job works in
        self.task_gap = 0.05  # seconds of simulated work per step
        self.on_change: Callable[[], None] = lambda: None  # set by the shell
        self.tasks: Any = None  # a servers.tasks.TaskBoard when a tool has a job
        # The handshake era: send a request to the client and wait for its result (set by the shell).
        self.ask_client: Optional[Callable[[str, Json], Optional[Json]]] = None
        self._by_name: Dict[str, Tool] = {}
        self._pages: List[List[int]] = []
        self._paginate()
        # A fixed key per server keeps cursors stable across processes
        # (the revision is stateless) while still making edits detectable.
        self._cursor_key = binascii.crc32(("cursor:" + self.name).encode())

    def _paginate(self) -> None:
        self._by_name = {tool.name: tool for tool in self.tools}
        size = self.page_size or max(1, len(self.tools))
        self._pages = page_plan(len(self.tools), size)

    def set_page_size(self, size: Optional[int]) -> None:
        self.page_size = size
        self._paginate()

    def add_tool(self, tool: Tool) -> bool:
        """Add a tool (once) and tell the listeners; False if it was there already."""
        if tool.name in self._by_name:
            return False
        self.tools.append(tool)
        self._paginate()
        self.on_change()
        return True
    # -- cursors: opaque to the client, verifiable here -------------------

    def make_cursor(self, page: int) -> str:
        if self.paging == "empty-cursor" and page == 1:
            return ""
        body = page.to_bytes(2, "big")
        return (self._tag(body) + body).hex()

    def _tag(self, body: bytes) -> bytes:
        # A keyed checksum, not a MAC: it catches a cursor the client made up or
        # edited, which is all a fixture needs, without the ~4 ms that loading
        # hashlib's OpenSSL adds to every server start.
        return binascii.crc32(body, self._cursor_key).to_bytes(4, "big")

    def read_cursor(self, cursor: Any) -> int:
        if not isinstance(cursor, str):
            raise RpcError(INVALID_PARAMS, "Invalid cursor: must be a string")
        if cursor == "" and self.paging == "empty-cursor" and len(self._pages) > 1:
            return 1
        try:
            raw = bytes.fromhex(cursor)
        except ValueError:
            raw = b""
        tag, body = raw[:4], raw[4:]
        if len(body) != 2 or tag != self._tag(body):
            raise RpcError(INVALID_PARAMS, "Invalid cursor: pass back nextCursor exactly as received")
        page = int.from_bytes(body, "big")
        last = ENDLESS_PAGES if self.paging == "endless" else len(self._pages)
        if not 0 < page < last:
            raise RpcError(INVALID_PARAMS, "Invalid cursor: no such page")
        return page

    # -- messages ----------------------------------------------------------

    def handle_line(self, line: bytes) -> Optional[Json]:
        """Answer one line from the client; None when no reply is due."""
        message = parse_request(line)
        return self.handle_message(message) if isinstance(message, dict) else message.reply

    def handle_message(self, message: Json, report: Report = no_report) -> Optional[Json]:
        return handle_request(message, lambda method, params: self.dispatch(method, params, report))

    def dispatch(self, method: str, params: Any, report: Report = no_report) -> Json:
        if method == "initialize":
            requested = params.get("protocolVersion") if isinstance(params, dict) else None
            raise RpcError(UNSUPPORTED_VERSION,
                           f"This server speaks only {PROTOCOL_VERSION}; initialize is not supported",
                           {"supported": SUPPORTED_VERSIONS, "requested": requested})
        check_envelope(params)
        assert isinstance(params, dict)
        if method == "server/discover":
            capabilities: Json = {"tools": {"listChanged": self.list_changes}}
            if self.tasks is not None:
                capabilities["extensions"] = {TASKS_EXTENSION: {}}
            return self.stamp({"supportedVersions": SUPPORTED_VERSIONS, "capabilities": capabilities,
                               "instructions": self.instructions,
                               "ttlMs": 0, "cacheScope": "public"})
        if method == "tools/list":
            return self.stamp(self.list_tools(params))
        if method == "tools/call":
            return self.stamp(self.call_tool(params, report))
        if method in TASK_METHODS and self.tasks is not None:
            return self.stamp(self.task_request(method, params))
        raise RpcError(METHOD_NOT_FOUND, "Method not found", method)

    def task_request(self, method: str, params: Json) -> Json:
        """`tasks/get`, `tasks/update`, `tasks/cancel`: only for a request that declares the extension."""
        if not declares_tasks(params):
            raise missing_tasks_capability()
        if method == "tasks/get":
            task = self.tasks.find(params.get("taskId"))
            return dict(self.tasks.current_view(task, detailed=True))
        if method == "tasks/update":
            self.tasks.update(params.get("taskId"), params.get("inputResponses"))
        else:
            self.tasks.cancel(params.get("taskId"))
        return {}  # an empty acknowledgement

    def stamp(self, result: Json) -> Json:
        result.setdefault("resultType", "complete")
        result["_meta"] = {SERVER_INFO_KEY: {"name": self.name, "version": self.version}}
        return result

    def list_tools(self, params: Json, *, legacy: bool = False) -> Json:
        page = self.read_cursor(params["cursor"]) if "cursor" in params else 0
        if self.paging == "endless" and page + 1 >= ENDLESS_PAGES:
            raise RpcError(INTERNAL_ERROR, f"this server pages forever (fixture --paging endless); "
                                           f"a client should have given up long before page {page + 1}")
        result: Json = {"tools": [self.tools[i].to_json(legacy=legacy) for i in self._pages[page % len(self._pages)]],
                        "ttlMs": self.list_ttl_ms, "cacheScope": "public"}
        if page + 1 < len(self._pages) or self.paging == "endless":
            result["nextCursor"] = self.make_cursor(page + 1)
        return result

    def tool_named(self, params: Json) -> Tool:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "Invalid params: tools/call needs a string 'name'")
        tool = self._by_name.get(name)
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        return tool

    def call_tool(self, params: Json, report: Report = no_report, *, as_task: Optional[bool] = None,
                  can_ask: Optional[bool] = None) -> Json:
        """Run a tool. A tool with a job becomes a task when `as_task` says so
        (the handshake era: the client asked) or, when it is None (2026-07-28:
        the server decides), whenever the request declared the extension."""
        tool = self.tool_named(params)
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: 'arguments' must be an object")
        if tool.job is not None and self.tasks is not None:
            if as_task is None:
                as_task = declares_tasks(params)
                if not as_task:  # a job runs only as a task
                    raise missing_tasks_capability()
            if as_task:
                problem = argument_problem(tool.input_schema, arguments)
                if problem:
                    return {"content": [{"type": "text", "text": f"Invalid arguments for {tool.name}: {problem}"}],
                            "isError": True}
                return dict(self.tasks.start(tool.name, tool.job, arguments,
                                             can_ask=self.can_elicit(params) if can_ask is None else can_ask))
        try:
            problem = argument_problem(tool.input_schema, arguments)
            if problem:
                raise ToolFailed(f"Invalid arguments for {tool.name}: {problem}")
            if tool.asks_user:
                asked = run_asking(tool.name, tool.handler, arguments, params,
                                   self.can_elicit(params) if can_ask is None else can_ask,
                                   # only the handshake era passes as_task; it asks the client directly
                                   self.ask_client if as_task is not None else None)
                if isinstance(asked, dict):
                    return asked  # input_required: the client answers and calls again
                output = asked
            else:
                output = tool.handler(arguments, report) if tool.reports_progress else tool.handler(arguments)
        except ToolFailed as exc:
            failed: Json = {"content": [{"type": "text", "text": str(exc)}], "isError": True}
            if exc.structured is not None:
                failed["structuredContent"] = exc.structured
            return failed
        result: Json = {"content": [{"type": "text", "text": output.text}], "isError": False}
        if output.structured is not None:
            result["structuredContent"] = output.structured
        return result


    def can_elicit(self, params: Json) -> bool:
        """Whether this request's sender declared form elicitation (2026-07-28: per request)."""
        return declares_form(client_capabilities(params))


_JSON_TYPES = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list}


def argument_problem(schema: Json, arguments: Json) -> Optional[str]:
    """The first way `arguments` breaks the (flat) schema, or None.

    The fixtures use flat object schemas only, so this small check is enough
    and keeps `servers/` on the standard library.
    """
    properties: Json = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in arguments:
            return f"missing required argument '{key}'"
    for key, value in arguments.items():
        spec = properties.get(key)
        if spec is None:
            if schema.get("additionalProperties") is False:
                return f"unexpected argument '{key}'"
            continue
        expected = _JSON_TYPES.get(spec.get("type", ""))
        wrong_bool = expected is int and isinstance(value, bool)
        if expected is not None and (not isinstance(value, expected) or wrong_bool):
            return f"argument '{key}' must be of type {spec['type']}"
    return None
