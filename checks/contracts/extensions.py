"""E1, E3, E4, E5: consent (`runs_without_asking`), progress
(`StdioClient._on_progress`), ranking (`rank`) and structured results
(`structured_data`), each a function of what a server listed or sent.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

import anyio

from checks.contracts.clause import ON_TRIO, TRIO_SOURCE, Clause, Contract, Told, brief
from checks.contracts.wire import json_values
from checks.target import Target

ABSENT = "<absent>"


def entry(package: Target, tool: Dict[str, Any], alias: str = "srv") -> Any:
    name = str(tool.get("name", "tool"))
    return package.module("translate").ToolEntry(alias, name, f"mcp__{alias}__{name}", tool)


LEDGER = ("Exports the ledger of the month as a printable document, one row per line item, for the "
          "accountants; invoice")  # the word asked for past the first hundred characters

# -- E1: consent --------------------------------------------------------------------


def tool_with(annotations: Any) -> Dict[str, Any]:
    tool: Dict[str, Any] = {"name": "read", "inputSchema": {"type": "object"}}
    if annotations != ABSENT:
        tool["annotations"] = annotations
    return tool


def asks(package: Target, case: Dict[str, Any]) -> Told:
    tool = tool_with(case["annotations"])
    if case.get("beside"):  # a hint written on the tool itself, beside its annotations: not an annotation
        tool["readOnlyHint"] = True
    if "meta" in case:  # the server's own _meta: a claim of trust there is the server's word, no more
        tool["_meta"] = case["meta"]
    listed = json.loads(json.dumps(tool))
    free = package.consent.runs_without_asking(entry(package, tool), case["trusted"])
    if tool != listed:  # the tool as the server listed it is its fingerprint, in the audit log too
        return Told("changed the tool's definition (the server's words, as listed)")
    if not isinstance(free, bool):
        return Told(f"returned {free!r:.40}, not a bool")
    return Told("let the call run without asking" if free else "asked first")


def show_consent(case: Dict[str, Any]) -> str:
    shown = "no annotations" if case["annotations"] == ABSENT else f"annotations {case['annotations']!r:.100}"
    meta = f" and _meta {case['meta']!r:.60}" if "meta" in case else ""
    return f"a tool with {shown}{meta} on a {'trusted' if case['trusted'] else 'untrusted'} server"


def hints(st: Any) -> Any:
    flag = st.sampled_from([True, False, None, 1, 0, "true", "yes", [], {}, 1.0])
    keys = st.sampled_from(["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint", "title"])
    return st.one_of(st.just(ABSENT), st.dictionaries(keys, flag, max_size=4), json_values(st))


def consent_cases(st: Any, trusted: Optional[bool] = None) -> Any:
    trust = st.booleans() if trusted is None else st.just(trusted)
    # Now and then a _meta of the server's own that claims trust or approval.
    meta = st.sampled_from([{"trusted": True}, {"approved": True}, {"readOnlyHint": True}, {"consent": "granted"}])
    return st.fixed_dictionaries({"annotations": hints(st), "trusted": trust}, optional={"meta": meta})


# -- E3: progress -------------------------------------------------------------------


def progress_seen(package: Target, case: Dict[str, Any]) -> Told:
    """Hand the reports to `_on_progress` with two requests waiting on tokens
    of their own, and say what reached each."""
    client = package.stdio_client.StdioClient(package.config.ServerSpec("judge", "python"))
    reached: Dict[str, List[Any]] = {}
    for token in case["tokens"]:
        reached[repr(token)] = []
        client._progress[token] = (lambda key: lambda p, t, m: reached[key].append([number(p), number(t), m]))(
            repr(token))
    for params in case["reports"]:
        client._on_progress(params)
    parts = [f"request {key} was told {calls}" if len(calls) <= 20 else
             f"request {key} was told {len(calls)} reports, the last {calls[-1]}" for key, calls in reached.items()]
    return Told("; ".join(parts))


def number(value: Any) -> Any:
    """A number as the handler's float: 3 is 3.0 to it (and to Python), so handing
    on the int a server sent is as right as converting it; true stays true. An int
    past a float's range stays what it is (no float equals it), said by its size."""
    if type(value) is not int:
        return value
    try:
        return float(value)
    except OverflowError:
        return f"an int of {len(str(abs(value)))} digits"


def progress_clock(package: Target, case: Dict[str, Any]) -> Told:
    """Which waiting requests had a report's time noted, and on which clock: only
    a real report (a finite progress, for a waiting request) extends a wait.
    Judged on a loop of its own whose clock is not time.monotonic() (as on trio),
    so a time noted on another clock than the loop's shows."""
    client = package.stdio_client.StdioClient(package.config.ServerSpec("judge", "python"))
    for token in case["tokens"]:
        client._progress[token] = lambda p, t, m: None
    before = anyio.current_time()
    for params in case["reports"]:
        client._on_progress(params)
    after = anyio.current_time()
    noted = []
    strays = [token for token in client._progress_at if token not in client._progress]
    if strays:  # a time kept for a token no request has: the table only ever grows
        noted.append(f"noted a time for {len(strays)} token(s) no request had")
    for token in case["tokens"]:
        at = client._progress_at.get(token)
        if at is None:
            noted.append(f"{token!r}: no time noted")
        elif isinstance(at, (int, float)) and before <= at <= after:
            noted.append(f"{token!r}: noted on the event loop's clock")
        elif isinstance(at, (int, float)) and not isinstance(at, bool):
            # Not the time itself: another clock's reading differs from run to run.
            noted.append(f"{token!r}: noted a time {'ahead of' if at > after else 'behind'} the event loop's "
                         "clock (anyio.current_time(), here not time.monotonic(), as on trio), which is what "
                         "the wait compares it with")
        else:
            noted.append(f"{token!r}: noted {at!r:.40}, not a time on the event loop's clock "
                         "(anyio.current_time()), which is what the wait compares it with")
    return Told("; ".join(noted))


def show_progress(case: Dict[str, Any]) -> str:
    reports = brief(repr(case["reports"]))
    return (f"requests waiting on progress tokens {', '.join(repr(t) for t in case['tokens'])} and the "
            f"reports {reports:.200}")


# Tokens no request can have: a bool (true == 1 to Python), a float, a list or
# an object (unhashable: a lookup would raise), null.
ODD_TOKENS: Dict[str, Any] = {"true": True, "false": False, "float": 1.0, "list": [1], "object": {"t": 1},
                              "null": None}


# Whole numbers past a float's range (about 1.8e308): JSON has no limit, and math.isfinite or
# float() of one raises OverflowError, in the reader, where it would end the connection.
HUGE = 10 ** 400


def numberish(st: Any) -> Any:
    return st.one_of(st.integers(-5, 100), st.floats(allow_nan=True, allow_infinity=True),
                     st.sampled_from([None, True, False, "5", "", [], {}, HUGE, -HUGE, 2 ** 1024, 10 ** 20]))


def reports(st: Any) -> Any:
    def build(tokens: List[Any], steps: List[Dict[str, Any]]) -> Dict[str, Any]:
        made = []
        for step in steps:
            params = {k: v for k, v in step.items() if v != ABSENT and k != "pick"}
            pick = step["pick"]
            if isinstance(pick, int):
                params["progressToken"] = tokens[pick] if pick < len(tokens) else pick
            elif pick != ABSENT:
                params["progressToken"] = ODD_TOKENS[pick]
            made.append(params)
        return {"tokens": tokens, "reports": made}
    tokens = st.lists(st.one_of(st.integers(0, 3), st.sampled_from(["1", "0", "a", ""])), min_size=2,
                      max_size=2, unique_by=lambda t: (type(t).__name__, t))
    step = st.fixed_dictionaries({"pick": st.sampled_from([0, 1, 0, 1, 7, ABSENT, *ODD_TOKENS]),
                                  "progress": st.one_of(st.just(ABSENT), numberish(st)),
                                  "total": st.one_of(st.just(ABSENT), numberish(st)),
                                  "message": st.one_of(st.just(ABSENT), st.text(max_size=6), st.none(),
                                                       st.integers(0, 3))})
    return st.builds(build, tokens, st.lists(step, max_size=6))


# -- E4: ranking --------------------------------------------------------------------


def ranked(package: Target, case: Dict[str, Any]) -> Any:
    """The names rank returned, or that it changed the list it was given (E4.2's duty)."""
    found, changed = ranking(package, case)
    if changed:  # the caller's catalogue, searched again next time
        return Told("changed the list of entries it was given (sorted or cut it in place): the next search "
                    "would start from this one's order")
    return found


def ranking(package: Target, case: Dict[str, Any]) -> Tuple[List[Any], bool]:
    """What rank returned, by name, and whether it changed the list it was given."""
    # "annotations title": the older place for a display name (ToolEntry.title falls back to it): not the title.
    entries = [entry(package, {"name": t["name"], "inputSchema": {"type": "object"},
                               **{k: t[k] for k in ("title", "description") if t[k] != ABSENT},
                               **({"annotations": {"title": t["annotations title"]}} if "annotations title" in t else {})})
               for t in case["tools"]]
    given = list(entries)
    found = package.meta_tools.rank(case["query"], entries, case["limit"])
    return [getattr(e, "original_name", e) for e in found], [id(e) for e in entries] != [id(e) for e in given]


def ranked_set(package: Target, case: Dict[str, Any]) -> Told:
    found, _ = ranking(package, case)  # a list changed in place is E4.2's to say
    return Told(f"returned {sorted(map(str, found))}")


def show_rank(case: Dict[str, Any]) -> str:
    def text(tool: Dict[str, Any], key: str) -> str:
        return f"no {key}" if tool[key] == ABSENT else f"{key} {tool[key]!r}"

    def annotated(tool: Dict[str, Any]) -> str:
        return f", annotations.title {tool['annotations title']!r}" if "annotations title" in tool else ""
    tools = "; ".join(f"{t['name']} ({text(t, 'title')}, {text(t, 'description')}{annotated(t)})" for t in case["tools"])
    return f"the query {case['query']!r} with limit {case['limit']} over [{tools}]"


# "srv" and "mcp" are in every model-facing name here (mcp__srv__...), "from" in every
# description the model sees ("[from srv] ..."), "port" inside "export": none is a word of the tool's.
VOCABULARY = ["note", "notes", "search", "ticket", "Ticket", "read", "open", "queue", "stats", "résumé",
              "export", "2", "a", "srv", "mcp", "from", "port"]


def catalogues(st: Any, cut: bool) -> Any:
    word = st.sampled_from(VOCABULARY)
    text = st.lists(word, max_size=4).map(" ".join)
    name = st.lists(word, min_size=1, max_size=3).map(lambda ws: "_".join(w.lower() for w in ws))
    # A title or description a server sent as no string (a number, a list) is none: words() of it would raise.
    odd = st.sampled_from([42, True, None, ["note"], {"note": 1}, 1.5])
    tool = st.fixed_dictionaries({"name": name, "title": st.one_of(text, text, st.just(ABSENT), odd),
                                  "description": st.one_of(text, text, odd)},
                                 optional={"annotations title": text})

    def build(query: str, tools: List[Dict[str, str]], limit: int) -> Dict[str, Any]:
        for number, tool in enumerate(tools):  # names unique, as one server's are
            tool["name"] = f"{tool['name']}.{number}"
        return {"query": query, "tools": tools, "limit": limit if cut else len(tools) + 1}
    query = st.one_of(text, st.sampled_from(["", "  ", "NOTE", "note.search", "read_note", "ticket?", "srv",
                                             "mcp srv", "from", "port"]))
    return st.builds(build, query, st.lists(tool, max_size=6), st.integers(-2, 3))


# -- E5: structured results ---------------------------------------------------------


# An outputSchema that is no schema ("objekt" is no type): call_tool checks nothing against it
# (checked_output), so any structuredContent reaches structured_data, and checking it there raises.
BROKEN_SCHEMA = {"type": "objekt"}


def data(package: Target, case: Dict[str, Any]) -> Any:
    tool: Optional[Dict[str, Any]] = None
    if case["entry"] != "none":
        tool = {"name": "t", "inputSchema": {"type": "object"}}
        if case["entry"] == "with outputSchema":
            tool["outputSchema"] = {"type": "object"}
        if case["entry"] == "with a broken outputSchema":
            tool["outputSchema"] = BROKEN_SCHEMA
    result = {k: v for k, v in case["result"].items() if v != ABSENT}
    made = entry(package, tool) if tool else None
    if "before" in case:  # an earlier call of the same tool, with its own data: each result stands alone
        package.module("tool_calls").structured_data(made, dict(case["before"]))
    return package.module("tool_calls").structured_data(made, result)


def show_data(case: Dict[str, Any]) -> str:
    result = {k: v for k, v in case["result"].items() if v != ABSENT}
    where = "no entry (not a known tool)" if case["entry"] == "none" else f"a tool {case['entry']}" + \
        (f" ({BROKEN_SCHEMA})" if case["entry"] == "with a broken outputSchema" else "")
    before = f", after a call that returned {case['before']!r:.80}" if "before" in case else ""
    return f"{where} and the result {result!r:.160}{before}"


def results(st: Any, entries: List[str], errors: List[Any]) -> Any:
    result = st.fixed_dictionaries({
        "content": st.just([{"type": "text", "text": "ok"}]),
        "isError": st.sampled_from(errors),
        "structuredContent": st.one_of(st.just(ABSENT), json_values(st))})
    return st.fixed_dictionaries({"entry": st.sampled_from(entries), "result": result}).map(reachable)


def reachable(case: Dict[str, Any]) -> Dict[str, Any]:
    """The result as call_tool can hand it on: for a tool with a sound outputSchema (an
    object), a successful result's structuredContent fits it, since checked_output turned
    any other into an error. An input no call can bring would judge a check that is harmless."""
    result = case["result"]
    if case["entry"] == "with outputSchema" and not is_error(result):
        content = result["structuredContent"]
        result["structuredContent"] = {} if content == ABSENT else content if isinstance(content, dict) \
            else {"value": content}
    return case


def is_error(result: Dict[str, Any]) -> bool:
    """Whether checked_output passes the result on unchecked, as an error (any true isError)."""
    return result.get("isError") != ABSENT and bool(result.get("isError"))


def case_of(entry_kind: str, **result: Any) -> Dict[str, Any]:
    return {"entry": entry_kind, "result": {"content": [{"type": "text", "text": "ok"}], **result}}


CONTRACTS = (
    Contract("E1", "runs_without_asking", (
        Clause("E1.1", "must let a call run without asking only when the server is trusted and the "
                       "tool's readOnlyHint is the JSON boolean true; missing, null, 1 or \"true\" ask",
               "MCP: annotations are hints from the server, and the spec's default for readOnlyHint is "
               "false; the lab counts only true", asks, show_consent,
               edges=({"annotations": {"readOnlyHint": True}, "trusted": True},
                      {"annotations": ABSENT, "trusted": True}, {"annotations": {"readOnlyHint": 1}, "trusted": True},
                      {"annotations": {"readOnlyHint": "true"}, "trusted": True},
                      {"annotations": None, "trusted": True}, {"annotations": {"readOnlyHint": None}, "trusted": True},
                      {"annotations": {"readonlyhint": True}, "trusted": True},
                      {"annotations": ABSENT, "trusted": True, "beside": True}),
               inputs=lambda st: consent_cases(st, True), count=60),
        Clause("E1.2", "must ask for every tool of an untrusted server, whatever its annotations or its _meta claim",
               "lab rule: an untrusted server's claims count for nothing", asks, show_consent,
               edges=({"annotations": {"readOnlyHint": True}, "trusted": False},
                      # the server's own _meta claiming trust: an untrusted server's claim, wherever it is written
                      {"annotations": {"readOnlyHint": True}, "trusted": False, "meta": {"trusted": True}},
                      {"annotations": ABSENT, "trusted": False, "meta": {"trusted": True}}),
               inputs=lambda st: consent_cases(st, False), count=40),
    )),
    Contract("E3", "StdioClient._on_progress", (
        Clause("E3.1", "must hand each report to the request whose progressToken it carries (1 and \"1\" "
                       "are different tokens; true, 1.0, a list or an object are none), with progress, total "
                       "(None unless a finite number) and message (\"\" when absent or not a string); must "
                       "ignore a report for no waiting request and one whose progress is not a finite number "
                       "(null, \"5\", true, NaN, or a whole number past a float's range, such as 10**400: "
                       "math.isfinite raises on it), never raising",
               "MCP progress: the token is the request's own; the lab ignores malformed reports",
               progress_seen, show_progress,
               edges=({"tokens": [1, 2], "reports": [{"progressToken": 2, "progress": 1, "total": 4},
                                                     {"progressToken": 1, "progress": 3}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": "1", "progress": 1}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": None}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": True}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": 2, "total": "4"}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": 0, "message": "half"}]},
                      {"tokens": [1, 0], "reports": [{"progressToken": True, "progress": 1}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": [1], "progress": 1}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": 1, "total": "4"}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": float("inf")}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": 1, "total": float("-inf")}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": 0, "total": 0}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": 1,
                                                      "message": "rebuilding the index: " + "shard 7 of 9, " * 20}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": n} for n in range(1002)]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": HUGE},
                                                     {"progressToken": 2, "progress": 1, "total": HUGE}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": -HUGE, "total": 2 ** 1024}]}),
               inputs=reports, count=150),
        Clause("E3.2", "must note when a report came, on the event loop's clock (anyio.current_time()) that "
                       "the request's wait compares it with, for a real report only: a malformed one (no "
                       "finite progress) must not extend the wait",
               "lab rule: a progress report extends the timeout; another clock, or a report that is none, "
               "would hold the request open for ever", progress_clock, show_progress,
               edges=({"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": 1}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 9, "progress": 1}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": "still alive"}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 2, "message": "no progress"}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": HUGE}]}),
               inputs=reports, count=100, loop="own"),
        Clause("E3.3", ON_TRIO.format(calls="asyncio.get_running_loop().time() for the time of a report"),
               TRIO_SOURCE, progress_clock, show_progress,
               edges=({"tokens": [1, 2], "reports": [{"progressToken": 1, "progress": 1}]},
                      {"tokens": [1, 2], "reports": [{"progressToken": 2, "progress": 3, "total": 4}]}),
               inputs=reports, count=20, loop="own", backend="trio"),
    )),
    Contract("E4", "rank", (
        Clause("E4.1", "must return exactly the entries that match at least one query word (a word as "
                       "words() reads it, in the tool's own name with '_' and '.' read as spaces, its title or "
                       "its description: the server's, not the model-facing name or ToolEntry.description, "
                       "which adds '[from alias]'; the title is the tool's own 'title', not annotations.title, "
                       "and a title or description that is not a string is none) and leave out the rest",
               "lab rule: search_tools returns only matches", ranked_set, show_rank,
               edges=({"query": "ticket", "limit": 9, "tools": [
                   {"name": "read_note", "title": "Read a note", "description": "by id"},
                   {"name": "open_ticket", "title": "", "description": ""}]},
                   {"query": "", "limit": 9, "tools": [{"name": "a", "title": "a", "description": "a"}]},
                   {"query": "note", "limit": 9, "tools": [{"name": "note", "title": None, "description": None}]},
                   # words() cuts a name at every character outside [a-z0-9], as it cuts the query
                   {"query": "export résumé", "limit": 9, "tools": [
                       {"name": "export-invoice", "title": ABSENT, "description": ABSENT},
                       {"name": "résumé_0", "title": ABSENT, "description": ABSENT}]},
                   # the whole description, not its first line or hundred characters
                   {"query": "invoice", "limit": 9, "tools": [
                       {"name": "ledger_pdf", "title": ABSENT, "description": LEDGER}]},
                   # a title or description that is no string is none, and annotations.title is not the title
                   {"query": "note", "limit": 9, "tools": [
                       {"name": "read", "title": 42, "description": ["note"]},
                       {"name": "open", "title": {"note": 1}, "description": True},
                       {"name": "tag", "title": ABSENT, "description": "", "annotations title": "Note"}]}),
               inputs=lambda st: catalogues(st, False), count=120),
        Clause("E4.2", "must order them by score, 3 per query word in the name, 2 in the title, 1 in the "
                       "description, best first, and keep the catalogue's order among equal scores (leaving the list it "
                       "was given as it was: sort a copy); the title is the tool's own (a tool without one has none: ToolEntry.title, which falls "
                       "back to the name, would count the name's words twice)",
               "lab rule (guide section 11.4)", ranked, show_rank,
               edges=({"query": "search search note", "limit": 9, "tools": [  # a word counts once
                   {"name": "read_note", "title": "", "description": ""},
                   {"name": "search", "title": "", "description": ""}]},
                   {"query": "note search", "limit": 9, "tools": [
                   {"name": "list_tags", "title": "", "description": "note search"},
                   {"name": "search", "title": "note", "description": ""},
                   {"name": "search_note", "title": "", "description": ""}]},
                   {"query": "export", "limit": 9, "tools": [
                   {"name": "export_a", "title": ABSENT, "description": ""},
                   {"name": "export_b", "title": "export", "description": ""}]},
                   {"query": "export", "limit": 9, "tools": [
                   {"name": "export_a", "title": "", "description": ""},
                   {"name": "export_b", "title": "Export", "description": ""}]}),
               inputs=lambda st: catalogues(st, False), count=120),
        Clause("E4.3", "must return at most `limit` entries, the best ones (none for a limit of 0 or "
                       "below: a slice [:-1] would keep all but the last)",
               "lab rule: the model asked for that many", ranked, show_rank,
               edges=({"query": "note", "limit": 0, "tools": [{"name": "note", "title": "", "description": ""}]},
                      {"query": "note", "limit": -1, "tools": [{"name": f"note_{n}", "title": "", "description": ""}
                                                               for n in range(3)]}),
               inputs=lambda st: catalogues(st, True), count=80),
    )),
    Contract("E5", "structured_data", (
        Clause("E5.1", "must give the program nothing (None) for an error result, even one carrying "
                       "structuredContent; an isError of any true value (1, \"yes\") is an error: the "
                       "cautious reading of a careless server, as E1 trusts a hint only when it is true",
               "MCP: an isError result is the tool's failure; no schema vouches for its data", data, show_data,
               edges=(case_of("with outputSchema", isError=True, structuredContent={"id": "n-9"}),
                      case_of("with outputSchema", isError=1, structuredContent={"id": "n-9"}),
                      case_of("with outputSchema", isError="YES", structuredContent={"id": "n-9"}),
                      case_of("with outputSchema", isError="false", structuredContent={"id": "n-9"}),
                      case_of("with outputSchema", isError=[1], structuredContent={"id": "n-9"})),
               inputs=lambda st: results(st, ["with outputSchema", "without outputSchema"], [True]), count=30),
        Clause("E5.2", "must give None, and not raise, when there is no entry (a call that reached no "
                       "known tool)",
               "lab rule: the agent loop passes None for an unknown or meta tool", data, show_data,
               edges=(case_of("none", isError=False, structuredContent={"id": 1}),
                      case_of("none", isError=ABSENT, structuredContent=ABSENT)),
               inputs=lambda st: results(st, ["none"], [False, True, ABSENT]), count=30),
        Clause("E5.3", "must give a successful result's structuredContent as it came (None when it has "
                       "none, whatever an earlier call returned), for a tool with or without an outputSchema: call_tool has already turned a "
                       "result that breaks a sound schema into an error, and checked nothing against one that is "
                       "no schema (checking it again there raises)",
               "MCP: structuredContent is the tool's data; the lab hands it over unchanged", data, show_data,
               edges=(case_of("with outputSchema", isError=False, structuredContent={"id": "n-1"}),
                      case_of("with outputSchema", isError=None, structuredContent={"id": "n-1"}),
                      case_of("with outputSchema", isError=0, structuredContent={"id": "n-1"}),
                      case_of("with outputSchema", isError="", structuredContent={"id": "n-1"}),
                      case_of("with outputSchema", isError=ABSENT, structuredContent={}),
                      case_of("without outputSchema", isError=False, structuredContent=[1, 2]),
                      case_of("with a broken outputSchema", isError=False, structuredContent=[1, 2]),
                      case_of("with a broken outputSchema", isError=ABSENT, structuredContent={"id": "n-1"}),
                      {"entry": "without outputSchema", "result": {"content": [{"type": "text", "text": '{"n": 3}'}]}},
                      # each result stands alone: an earlier call's data is not this one's
                      {**case_of("with outputSchema", isError=False),
                       "before": {"content": [], "structuredContent": {"id": "n-1"}}},
                      {**case_of("without outputSchema", isError=False),
                       "before": {"content": [], "structuredContent": [1]}}),
               inputs=lambda st: results(st, ["with outputSchema", "without outputSchema",
                                              "with a broken outputSchema"], [False, ABSENT]),
               count=60),
    )),
)


