"""Exercises 1 and 2: a reply to a waiting request (`StdioClient.on_line`), and
paging through `tools/list` (`list_all_tools`), each judged in memory: a reply
handed to `on_line` for a request that is waiting, and a scripted server that
answers pages and writes down what it was sent.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional

import anyio

from checks.contracts.clause import ON_TRIO, TRIO_SOURCE, Clause, Contract, Raised, Told, brief, raised
from checks.target import Target

ABSENT = "<absent>"  # in a scripted page: no nextCursor member at all
MANY = 50  # tools past which a list is told by its count and ends
BEYOND = 50  # requests past a script's last page before the scripted server gives up on the client


# -- exercise 1: one reply, one waiting request ------------------------------------


async def outcome(package: Target, reply: Dict[str, Any]) -> Any:
    """How the waiting request ends when `reply` comes in for its id: as on_line
    returns (at once), with the client's task group in place as a running client has
    it, for a request of the lab's own and for a tools/call (a client that turns a
    call's error into a result there hides it from the program)."""
    seen = [await ending(package, reply, method) for method in ("notes/judge", "tools/call")]
    return Told(seen[0] if seen[0] == seen[1] else f"{seen[0]}; for a tools/call it {seen[1]}")


async def ending(package: Target, reply: Dict[str, Any], method: str) -> str:
    client = package.stdio_client.StdioClient(package.config.ServerSpec("judge", "python"))
    async with anyio.create_task_group() as group:
        client._task_group = group
        request_id, slot = client._pending.open(method)
        client.on_line(json.dumps({"jsonrpc": "2.0", "id": request_id, **reply}).encode())
        done = slot.done.is_set()  # before anything else may run: "at once"
        group.cancel_scope.cancel()
    if not done:
        return "left the request waiting (it would wait for its whole timeout)"
    if slot.error is None:
        return f"resolved it with {slot.result!r:.100}"
    error = slot.error
    if isinstance(error, type):
        return f"rejected it with the class {error.__name__}, not an exception made of it"
    if type(error).__name__ == "McpError":
        # The message and data whole: a learner who cuts or strips the server's words loses them.
        return (f"rejected it with McpError(code={getattr(error, 'code', None)!r}, "
                f"message={getattr(error, 'message', None)!r}, data={getattr(error, 'data', None)!r})")
    return f"rejected it with {type(error).__name__}"


def show_reply(reply: Dict[str, Any]) -> str:
    return f"the reply {brief(json.dumps({'jsonrpc': '2.0', 'id': 1, **reply}))[:140]}"


def json_values(st: Any) -> Any:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.text(max_size=8),
                        st.floats(allow_nan=False, allow_infinity=False))
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                        max_leaves=6)


def results(st: Any) -> Any:
    return st.builds(lambda value: {"result": value}, json_values(st))


def errors(st: Any) -> Any:
    codes = st.one_of(st.integers(-40000, 40000), st.booleans(), st.text(max_size=6), st.none(),
                      st.sampled_from([10 ** 400, -(2 ** 1024), 1.5, -32601.0]),
                      # JSON-RPC's named codes and its range for a server's own errors: an answer still
                      st.sampled_from([-32700, -32600, -32601, -32602, -32603, -32000, -32001, -32050, -32099]))
    shaped = st.fixed_dictionaries({"code": codes}, optional={"message": st.one_of(st.text(max_size=30),
                                                                                   json_values(st)),
                                                              "data": json_values(st)})
    return st.builds(lambda error: {"error": error}, st.one_of(shaped, json_values(st)))


def neither(st: Any) -> Any:
    return st.dictionaries(st.sampled_from(["_meta", "jsonrpc2", "results", "errors", "method_"]),
                           json_values(st), max_size=2)


# -- exercise 2: a scripted server's pages ------------------------------------------


FAILS = ("error", "timeout", "gone", "no method", "not a list", "nameless", "bad cursor")  # how a page may fail
SLOW = 20.0  # seconds a slow page takes (on a loop of the clause's own): within any server's timeout


def served(name: str) -> Dict[str, Any]:
    """A tool as the scripted server lists it: every member a tool may carry, so a
    client that keeps only some of them (the name, the schema) is seen doing so."""
    return {"name": name, "title": name.title(), "description": f"the {name} tool",
            "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": name.startswith("read")}}


class ScriptedPages:
    """Answers tools/list from a script of pages and writes down every params it got.
    Past the script it answers a last, empty page: a client that asks again is
    seen asking, not stopped by an error of ours. A page's "fails" says how it
    fails instead: an error reply (-32603, -32601, or -32602 for a cursor it no longer
    takes), the request timing out, the server gone, or a page whose tools are not a
    list, or hold one without a name. A page may also hold "many" more tools, or be
    "slow" to come (a timeout the client passes is kept, as a real server's is)."""

    era = "current"
    alias = "notes"  # as a connection names its server: a client that keeps lists by alias shows it

    def __init__(self, pages: List[Dict[str, Any]], errors: Any) -> None:
        self.pages = pages
        self.errors = errors  # the package's errors module: what a client's request raises
        self.sent: List[Any] = []

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                      timeout: Optional[float] = None) -> Dict[str, Any]:
        # A turn of the event loop per request, as a real one takes: a client that
        # pages without end is then stopped by its item's limit, not left holding the loop.
        await anyio.sleep(0)
        self.sent.append(params)
        if len(self.sent) > len(self.pages) + BEYOND:
            raise RuntimeError(f"the client asked for {len(self.sent)} pages of a list of {len(self.pages)}")
        step = len(self.sent) - 1
        page: Dict[str, Any] = self.pages[step] if step < len(self.pages) else {"tools": [], "nextCursor": ABSENT}
        fails = failing(page)
        if page.get("slow"):
            if timeout is not None and timeout < SLOW:
                await anyio.sleep(timeout)
                raise self.errors.RequestTimeout("tools/list", timeout)
            await anyio.sleep(SLOW)
        if fails in ("error", "no method", "bad cursor"):
            code = {"error": -32603, "no method": -32601, "bad cursor": -32602}[fails]
            raise self.errors.McpError(code, "the page could not be read")
        if fails == "timeout":
            raise self.errors.RequestTimeout("tools/list", 5.0)
        if fails == "gone":
            raise self.errors.ServerGone("server exited with status 1 while paging")
        many = page.get("many") or 0
        tools: Any = [served(name) for name in [*page["tools"], *(f"bulk{n}" for n in range(many))]]
        if fails == "nameless":
            tools.append({"description": "a tool without a name", "inputSchema": {"type": "object"}})
        reply: Dict[str, Any] = {"tools": "not a list" if fails == "not a list" else tools}
        if page["nextCursor"] != ABSENT:
            reply["nextCursor"] = page["nextCursor"]
        return reply

    async def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        return None


def failing(page: Dict[str, Any]) -> Optional[str]:
    """How a scripted page fails (FAILS), or None; "fails": true, as first written, is an error reply."""
    fails = page.get("fails")
    return "error" if fails is True else fails if isinstance(fails, str) else None


CANCELLED = "was cancelled by its caller, and let the cancel out"


async def listed(package: Target, case: Dict[str, Any]) -> Dict[str, Any]:
    server = ScriptedPages(case["pages"], package.errors)
    try:
        # "cancel": the caller gives up after so many seconds (a limit around the listing, as
        # exercise 4's is): the cancel must go out, not be caught nor shielded against.
        with anyio.move_on_after(case.get("cancel", math.inf)) as caller:
            tools = await package.discovery.list_all_tools(server, max_pages=case["max_pages"])
        if caller.cancelled_caught:
            return {"server": server, "ended": Told(CANCELLED)}
        if "then" in case:  # the same server lists again, its tools changed since: this listing is judged
            server.pages, server.sent = case["then"], []
            tools = await package.discovery.list_all_tools(server, max_pages=case["max_pages"])
        # Each tool by its name when it came back whole, as the server listed it.
        ended: Any = [(t.get("name") if t == served(str(t.get("name"))) else f"{t.get('name')} (changed)")
                      if isinstance(t, dict) else t for t in tools]
        if len(ended) > MANY:
            ended = f"{len(ended)} tools: {ended[:3]} ... {ended[-3:]}" + (" (some changed)" if any(
                "(changed)" in str(t) for t in ended) else "")
    except Exception as exc:
        ended = raised(exc, package)
    return {"server": server, "ended": ended}


async def cursors(package: Target, case: Dict[str, Any]) -> Told:
    seen = await listed(package, case)
    sent, pages = seen["server"].sent, case["pages"]
    for number, params in enumerate(sent):
        # No params at all is what {} is on the wire (the envelope alone): no cursor.
        cursor = params.get("cursor", ABSENT) if isinstance(params, dict) else ABSENT if params is None else params
        before = pages[number - 1]["nextCursor"] if 0 < number <= len(pages) else ABSENT
        if number == 0 and cursor != ABSENT:
            return Told(f"sent cursor {cursor!r} with the first request, where the first has none")
        if number > 0 and cursor is None:
            return Told(f"sent \"cursor\": null with request {number + 1}")
        if number > 0 and before in (None, ABSENT):
            continue  # a request after the last page: clause 2.2's to judge
        if number > 0 and (cursor != before or type(cursor) is not type(before)):
            shown_cursor = "no cursor" if cursor == ABSENT else f"cursor {cursor!r}"
            return Told(f"sent {shown_cursor} with request {number + 1}, after a page whose "
                        f"nextCursor was {'absent' if before == ABSENT else repr(before)}")
    return Told("sent every cursor back as it came")


async def pages_asked(package: Target, case: Dict[str, Any]) -> Told:
    seen = await listed(package, case)
    ended = seen["ended"]
    # A listing that raised says so: "asked for 1 page(s)" alone reads as a loop that stopped.
    then = f", then raised {ended.kind}" if isinstance(ended, Raised) else ""
    return Told(f"asked for {len(seen['server'].sent)} page(s){then}", ended.at if isinstance(ended, Raised) else "")


async def tools_returned(package: Target, case: Dict[str, Any]) -> Any:
    return (await listed(package, case))["ended"]


def as_cursor(value: Any) -> str:
    return repr(value) if isinstance(value, str) else json.dumps(value)  # a cursor that is not a string, as JSON


def show_pages(case: Dict[str, Any]) -> str:
    shown = []
    for page in case["pages"]:
        cursor = "no nextCursor" if page["nextCursor"] == ABSENT else f"nextCursor {as_cursor(page['nextCursor'])}"
        fails = failing(page)
        if fails:
            cursor = {"error": "answered with error -32603 instead", "no method": "answered with error -32601 "
                      "instead", "timeout": "timed out instead", "gone": "the server gone instead",
                      "not a list": "tools not a list", "nameless": "and a tool without a name",
                      "bad cursor": "answered with error -32602 (cursor refused) instead"}[fails]
        more = f" and {page['many']} more" if page.get("many") else ""
        slow = f", after {SLOW:g} s" if page.get("slow") else ""
        shown.append(f"[{', '.join(page['tools']) or 'no tools'}{more}; {cursor}{slow}]")
    cancel = f", the listing cancelled by its caller after {case['cancel']:g} s" if "cancel" in case else ""
    if "then" in case:
        cancel += f"; then the same server listed again, with {show_pages({'pages': case['then'], 'max_pages': case['max_pages']})}"
    return f"pages {' '.join(shown)} with max_pages={case['max_pages']}{cancel}"


def cursor_values(st: Any) -> Any:
    # Cursors are opaque strings: "", NUL, quotes, spaces, non-ASCII, and strings
    # that look like the end ("null", "None", "0").
    return st.one_of(st.sampled_from(["", "0", "null", "None", " ", "\0", '"', "end"]), st.text(max_size=12))


def scripts(st: Any) -> Any:
    """A server's pages: some tools each (maybe none), cursors in between, and a
    last page whose nextCursor is absent or null."""
    def build(middle: List[Any], last_tools: List[str], last: str, max_pages: int) -> Dict[str, Any]:
        pages = [{"tools": tools, "nextCursor": cursor} for tools, cursor in middle]
        pages.append({"tools": last_tools, "nextCursor": None if last == "null" else ABSENT})
        for number, page in enumerate(pages):  # names unique across the list, as a server's are
            page["tools"] = [f"{name}{number}_{i}" for i, name in enumerate(page["tools"])]
        return {"pages": pages, "max_pages": max_pages}
    tools = st.lists(st.sampled_from(["read", "search", "add", "tag"]), max_size=3)
    return st.builds(build, st.lists(st.tuples(tools, cursor_values(st)), max_size=5), tools,
                     st.sampled_from(["absent", "null"]), st.integers(1, 8))


def page(tools: List[str], cursor: Any, fails: "bool | str" = False) -> Dict[str, Any]:
    return {"tools": tools, "nextCursor": cursor, **({"fails": fails} if fails else {})}


def failing_scripts(st: Any) -> Any:
    """A script whose page at some step fails, one of the ways a page can (FAILS)."""
    def fail_one(case: Dict[str, Any], at: int, how: str) -> Dict[str, Any]:
        pages = case["pages"]
        pages[at % len(pages)]["fails"] = how
        return case
    return st.builds(fail_one, scripts(st), st.integers(0, 5), st.sampled_from(FAILS))


FAILING = {"pages": [page(["read_note", "search"], "p2"), page([], ABSENT, fails=True)], "max_pages": 5}
# A page in the middle that fails each other way: the listing fails with it, never short.
FAILING_EACH_WAY = tuple({"pages": [page(["read_note", "search"], "p2"), page(["add_note"], "p3", fails=how),
                                    page(["tag"], ABSENT)], "max_pages": 5} for how in FAILS[1:])
# A page that takes long, within the server's own timeout: a client's own, shorter limit cuts the list short.
SLOW_PAGE = {"pages": [page(["read_note"], "p2"), {**page(["add_note"], ABSENT), "slow": True}], "max_pages": 5}
BULK = {"pages": [{**page(["read_note"], "p2"), "many": 1200}, page(["add_note"], ABSENT)], "max_pages": 5}
TWICE = {"pages": [page(["read", "search"], "p2"), page(["read"], ABSENT)], "max_pages": 5}  # a server's own repeat
ODD_CURSOR = {"pages": [page(["read"], 7), page(["search"], ABSENT)], "max_pages": 5}  # not a string: sent back as is
FALSY_CURSORS = {"pages": [page(["read"], 0), page(["search"], False), page(["add"], ABSENT)], "max_pages": 5}
PAGED = {"pages": [page(["read_note", "search"], "p2"), page([], ""), page(["add_note"], ABSENT)], "max_pages": 5}
NULL_END = {"pages": [page(["read_note"], "p2"), page(["search"], None)], "max_pages": 5}
ENDLESS = {"pages": [page(["again"], "same")] * 6, "max_pages": 3}

CONTRACTS = (
    Contract("1", "StdioClient.on_line", (
        Clause("1.1", "must resolve the waiting request with the reply's result, whatever the result "
                      "is ({}, null, 0, false, \"\", [])",
               "JSON-RPC 2.0: a reply with 'result' is a success; the lab tests for the key", outcome,
               show_reply, edges=({"result": {}}, {"result": None}, {"result": 0}, {"result": False},
                                  {"result": ""}, {"result": []}, {"result": {"tools": []}},
                                  {"result": {"content": [], "isError": True}}),
               inputs=results, count=60),
        Clause("1.2", "must reject the waiting request at once with McpError carrying the server's code, "
                      "message and data, for an 'error' member of any shape (McpError.from_reply reads "
                      "malformed ones), and must not raise out of on_line",
               "JSON-RPC 2.0 error object; MCP: the server's error is for the caller", outcome, show_reply,
               edges=({"error": {"code": -32601, "message": "Method not found"}},
                      {"error": {"code": -32602, "message": "bad", "data": {"field": "id"}}},
                      {"error": {"code": 0, "message": ""}}, {"error": None}, {"error": "boom"},
                      {"error": {"message": "no code"}}, {"error": {"code": True, "message": "x"}},
                      {"error": {"code": "-32601", "message": "x"}}, {"error": {}},
                      {"error": {"code": -32602, "message": "Unknown tool 'x'\n"}},
                      {"error": {"code": -32603, "message": " indented, " + "and long " * 25}},
                      {"error": {"code": 10 ** 400, "message": "a code past a float's range"}},
                      {"error": {"code": 1.5, "message": "a code that is no integer"}},
                      # the range JSON-RPC keeps for a server's own errors: the server answered all the same
                      {"error": {"code": -32000, "message": "Server error"}},
                      {"error": {"code": -32099, "message": "Server error"}}),
               inputs=errors, count=80),
        Clause("1.3", "must reject a reply with neither 'result' nor 'error' with ProtocolViolation (a reply "
                      "with both breaks the same rule; which way a client takes that one is not judged)",
               "JSON-RPC 2.0: a response has exactly one of the two", outcome, show_reply,
               edges=({}, {"_meta": {}}), inputs=neither, count=30),
    )),
    Contract("2", "list_all_tools", (
        Clause("2.1", "must send the first request without a cursor and each later one with the "
                      "previous page's nextCursor exactly as it came (\"\", NUL, quotes and all), and "
                      "never a cursor the server did not give (no \"cursor\": null)",
               "MCP pagination: cursors are opaque strings, sent back unchanged", cursors, show_pages,
               edges=(PAGED, NULL_END, ENDLESS, ODD_CURSOR), inputs=scripts),
        Clause("2.2", "must ask for pages until one comes whose nextCursor is absent or null, and no "
                      "further: a short page, an empty page, a cursor of \"\" or one that is not a string "
                      "(0, false) does not end the list",
               "MCP pagination: only a missing nextCursor ends the results; the lab reads null as missing, "
               "and sends any other value back as it came (lab rule)",
               pages_asked, show_pages, edges=(PAGED, NULL_END, FALSY_CURSORS, ODD_CURSOR), inputs=scripts),
        Clause("2.3", "must return every tool of every page, whole (every member as listed: title, "
                      "annotations and outputSchema are the client's to use), in the order the pages gave "
                      "them, and raise ProtocolViolation after max_pages requests when the server has not ended",
               "lab rule: a server that pages forever is a broken server", tools_returned, show_pages,
               edges=(PAGED, NULL_END, ENDLESS, TWICE, BULK,
                      # each listing asks the server anew: nothing kept from an earlier one
                      {**PAGED, "then": [page(["search"], ABSENT)]}),
               inputs=scripts, raises=("ProtocolViolation",)),
        Clause("2.4", "must let a page that fails (an error reply of any code, a cursor refused included, a "
                      "timeout, the server gone, a page page_tools refuses) fail the whole listing: never return "
                      "the tools of the other pages as if they were all, nor cut a slow page short with a limit "
                      "of its own (the server's timeout is the request's); and a cancel from its caller goes out as "
                      "it came (never caught, nor shielded against)",
               "lab rule (guide section 2): a list that is quietly short is the bug to avoid", tools_returned,
               show_pages, edges=(FAILING, *FAILING_EACH_WAY, SLOW_PAGE, {**SLOW_PAGE, "cancel": 1.0}),
               inputs=failing_scripts, count=60,
               raises=("McpError", "ProtocolViolation", "RequestTimeout", "ServerGone"), loop="own"),
        Clause("2.5", ON_TRIO.format(calls="asyncio.wait_for around a page's request"), TRIO_SOURCE,
               tools_returned, show_pages, edges=(PAGED, FAILING, SLOW_PAGE, ENDLESS),
               inputs=lambda st: st.one_of(scripts(st), failing_scripts(st)), count=20,
               raises=("McpError", "ProtocolViolation", "RequestTimeout", "ServerGone"), loop="own", backend="trio"),
    )),
)
