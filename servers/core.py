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

from dataclasses import KW_ONLY, dataclass
from typing import Any, Callable, Dict, List, Optional

from servers.asking import Asker, run_asking
from servers.content import Content
from servers.envelope import (PROTOCOL_VERSION, SUPPORTED_VERSIONS, TASK_METHODS, TASKS_EXTENSION, check_envelope,
                              client_capabilities, declares, declares_tasks, missing_tasks_capability)
from servers.logs import LOG_LEVEL_KEY, LogGate, checked_level
from servers.paging import ENDLESS_PAGES, Cursors, page_plan
from servers.rpc import (INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_VERSION, Json, RpcError,
                         ToolFailed, ToolOutput, handle_request, parse_request)

Handler = Callable[..., ToolOutput]  # (arguments) or, with reports_progress, (arguments, report)
Report = Callable[[float, Optional[float], str], None]  # progress, total, message

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
CACHE_HINTS: Json = {"ttlMs": 0, "cacheScope": "public"}  # on every list and read result (2026-07-28)
CONTENT_METHODS = ("resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get",
                   "completion/complete")
CACHED_METHODS = ("resources/list", "resources/templates/list", "resources/read", "prompts/list")  # the spec's list


def no_report(progress: float, total: Optional[float], message: str) -> None:
    """Where progress goes when the client did not ask for it."""


@dataclass
class Tool:
    """One tool as a fixture serves it: what tools/list shows of it, and how a call runs."""

    name: str
    description: str
    input_schema: Json
    handler: Handler
    _: KW_ONLY
    title: Optional[str] = None
    annotations: Optional[Json] = None
    output_schema: Optional[Json] = None
    reports_progress: bool = False
    asks_user: bool = False  # the handler takes (arguments, answers) and may raise asking.NeedInput
    asks: str = "elicitation/create"  # what it asks the client: elicitation/create, sampling/createMessage or roots/list
    # Long work run as a task (servers/tasks.py): (arguments, work) -> output.
    job: Optional[Callable[..., ToolOutput]] = None
    # The handshake era's execution.taskSupport; in 2026-07-28 the server decides.
    task_support: str = "forbidden"

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
        self.ask_client: Optional[Asker] = None
        # Resources, templates and prompts (content.py), for a fixture that has them.
        self.content: Optional[Content] = None
        self.on_resources: Callable[[Optional[str]], None] = lambda uri: None  # set by the shell: uri, or None: the list
        self.logs = LogGate(name)  # notifications/message, filtered by the level in force (logs.py)
        self.record: Callable[..., None] = lambda kind, **fields: None  # the journal, set by the shell
        # What a switch adds (`--lifecycle-tools`, `--conformance-names`): switch name -> how.
        self.switchable: Dict[str, Callable[[], None]] = {}
        self._by_name: Dict[str, Tool] = {}
        self._pages: List[List[int]] = []
        self._paginate()
        self.cursors = Cursors(name)

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
    # -- cursors: opaque to the client, verifiable here (paging.py) -------

    def make_cursor(self, page: int) -> str:
        return self.cursors.make(page, paging=self.paging)

    def read_cursor(self, cursor: Any) -> int:
        return self.cursors.read(cursor, len(self._pages), paging=self.paging)

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
        meta = params["_meta"]
        # Per request: the level this request asked to hear (none: no messages for it).
        self.logs.set(checked_level(meta[LOG_LEVEL_KEY]) if LOG_LEVEL_KEY in meta else None)
        if method == "server/discover":
            capabilities = self.capabilities()
            if self.tasks is not None:
                capabilities["extensions"] = {TASKS_EXTENSION: {}}
            return self.stamp({"supportedVersions": SUPPORTED_VERSIONS, "capabilities": capabilities,
                               "instructions": self.instructions, **CACHE_HINTS})
        if method in CONTENT_METHODS and self.content is not None:
            answer = self.content_request(method, params, legacy=False)
            return self.stamp({**answer, **CACHE_HINTS} if method in CACHED_METHODS else answer)
        if method == "tools/list":
            return self.stamp(self.list_tools(params))
        if method == "tools/call":
            return self.stamp(self.call_tool(params, report))
        if method in TASK_METHODS and self.tasks is not None:
            return self.stamp(self.task_request(method, params))
        raise RpcError(METHOD_NOT_FOUND, "Method not found", method)

    def capabilities(self) -> Json:
        """What this server offers, in the shape both eras share."""
        offered: Json = {"tools": {"listChanged": self.list_changes}}
        if self.content is not None:
            offered.update({"resources": {"subscribe": True, "listChanged": True},
                            "prompts": {"listChanged": False}, "completions": {}, "logging": {}})
        return offered

    def content_request(self, method: str, params: Json, *, legacy: bool) -> Json:
        """Resources, prompts and completion: the same answers in both eras, bar the envelope."""
        content = self.content
        assert content is not None
        if method == "resources/list":
            return self.list_resources(params)
        if method == "resources/templates/list":
            return {"resourceTemplates": [t.to_json() for t in content.templates]}
        if method == "resources/read":
            read = content.read(params, legacy=legacy)
            self.logs.log("debug", f"read {params.get('uri')}")
            return read
        if method == "prompts/list":
            return {"prompts": [p.to_json() for p in content.prompts]}
        if method == "prompts/get":
            got = content.get_prompt(params)
            self.logs.log("debug", f"prompt {params.get('name')} rendered")
            return got
        return content.complete(params)

    def list_resources(self, params: Json) -> Json:
        """Paged as the tools are (the server's page size, an empty page after the first)."""
        assert self.content is not None
        resources = self.content.resources()
        pages = page_plan(len(resources), self.page_size or max(1, len(resources)))
        page = self.cursors.read(params["cursor"], len(pages), kind=b"r") if "cursor" in params else 0
        result: Json = {"resources": [resources[i].to_json() for i in pages[page]]}
        if page + 1 < len(pages):
            result["nextCursor"] = self.cursors.make(page + 1, kind=b"r")
        return result

    def resources_changed(self, uri: Optional[str] = None) -> None:
        """A resource changed (`uri`) or the list did (None): the shell tells whoever listens."""
        self.on_resources(uri)

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
                  can_ask: Optional[bool] = None, asker: Optional[Asker] = None) -> Json:
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
                declared = declares(tool.asks, client_capabilities(params)) if can_ask is None else can_ask
                # Only the handshake era passes as_task (and its own asker): it asks the client directly.
                asked = run_asking(tool.name, tool.handler, arguments, params, declared,
                                   asker or (self.ask_client if as_task is not None else None), tool.asks)
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
        result: Json = {"content": [{"type": "text", "text": output.text}, *output.blocks], "isError": False}
        if output.structured is not None:
            result["structuredContent"] = output.structured
        return result


    def can_elicit(self, params: Json) -> bool:
        """Whether this request's sender declared form elicitation (2026-07-28: per request)."""
        return declares("elicitation/create", client_capabilities(params))


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
