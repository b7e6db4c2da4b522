"""The nine items. Each starts its own fixture servers and proves one claim
from their journals and the process table.

An item returns a one-line account when the claim holds and raises `Fail`
with expected / actual / where-to-edit when it does not.
"""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any, Dict, List, Optional, Sequence, Tuple

import anyio

from checks.exercises import EXERCISES, Exercise
from checks.fixtures import Journal, Lab
from checks.harness import Fail, HarnessError, Item, leaves
from checks.target import Target

MODEL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
LONG = "summarize_open_tickets_by_queue_priority_and_assignee_for_weekly_review"
TWIN_CSV = "export_ticket_history_including_comments_and_attachments_for_audit_as_csv"
TWIN_JSON = "export_ticket_history_including_comments_and_attachments_for_audit_as_json"
DOTTED = "queue.stats"
UNDERSCORED = "queue_stats"  # the dotted name's twin once the dot is replaced
# Names the spec does not forbid but no model API takes: a space, '/', ':', '@'
# and a letter beyond ASCII (which \w would let through). Added for item 6 only.
ODD_NAMES = ("weekly report", "queue/open", "ticket:export", "owner@team", "résumé")
# Exactly 64 characters once prefixed: legal as it is, so it must stay as it is.
EXACT_FIT = "count_open_tickets_per_owner_and_queue_for_review_"
PREFIX = "mcp__tickets__"
# Limits only a wrong path ever reaches: a correct client never waits for them,
# however busy the machine, so they can be generous.
GENEROUS = 30.0
SILENT_TIMEOUT = 0.1  # the silent server never answers: any timeout proves the point
SLOW_REPLY = 0.15  # each reply of the slow server: discovery needs two, so at least 0.3 s
SLOW_DISCOVERY_LIMIT = 0.2  # below two slow replies, so the whole discovery always exceeds it
HEALING_QUESTION = "Schedule a follow-up for T-101 next friday"
ENDLESS_LIMIT = 5  # max_pages given to list_all_tools for the server that never stops paging
ERROR_METHOD, BARE_METHOD, LATER_METHOD = "notes/reindex", "notes/status", "tools/list"
EMPTY_METHOD = "notes/flush"  # answered with an empty result, {}: still a result
FIRST_METHODS = (ERROR_METHOD, BARE_METHOD, EMPTY_METHOD)
JOURNAL_POLL = 0.005
SETTLE_TURNS = 100
PENDING = object()
ABSENT = object()


def edit(target: Target, exercise: Exercise) -> str:
    return (f"\nedit: {target.display_path(exercise.file)}, {exercise.function} "
            f"(exercise {exercise.number}: {exercise.summary})")


def started(journal: Journal) -> None:
    if journal.pid is None:
        raise HarnessError(f"the fixture server '{journal.alias}' never started "
                           f"(no journal at {journal.path})")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def aggregator_for(target: Target, lab: Lab, specs: List[Any], *, timeout: float = GENEROUS,
                         discovery_timeout: float = GENEROUS) -> Any:
    config = target.config.config_of(specs, "<checks>")
    return target.aggregator.Aggregator(config, request_timeout=timeout,
                                        discovery_timeout=discovery_timeout)


async def refreshed(target: Target, tools: Any) -> None:
    """Refresh, then check the one learner value every table depends on."""
    await tools.refresh()
    for name, entry in tools.entries.items():
        if not isinstance(name, str):
            raise Fail(f"expected: model_tool_name() returns a str\n"
                       f"got: {name!r} ({type(name).__name__}) for {entry.alias}/{entry.original_name}"
                       f"{edit(target, EXERCISES[3])}")


def result_of(journal: Journal, tool: str) -> Dict[str, Any]:
    """What the server answered to its last call of `tool`."""
    calls = journal.calls(tool)
    reply = journal.reply_to(calls[-1]) if calls else None
    return dict(reply.msg.get("result") or {}) if reply else {}


# -- 1 ------------------------------------------------------------------------

async def connects(target: Target, lab: Lab) -> str:
    notes_spec = lab.server("notes", None, "--hold", "read_note")  # its reply waits for another
    tickets_spec = lab.server("tickets")
    Client = target.stdio_client.StdioClient
    notes, tickets = Client(notes_spec, request_timeout=GENEROUS), Client(tickets_spec, request_timeout=GENEROUS)
    answers: Dict[str, Any] = {}
    async with anyio.create_task_group() as group:
        try:
            await notes.start(group)
            await tickets.start(group)
            for alias, client in (("notes", notes), ("tickets", tickets)):
                info = await target.discovery.discover(client)
                if getattr(info, "name", None) != alias:
                    raise Fail(f"discover() on {alias} returned {info!r}; the server said its name "
                               f"is {alias!r} (journal)")

            async def call(key: str, name: str, arguments: Dict[str, Any]) -> None:
                answers[key] = await notes.request("tools/call", {"name": name, "arguments": arguments})

            async with anyio.create_task_group() as calls:  # slow one first, fast one second
                calls.start_soon(call, "slow", "read_note", {"id": "n-1"})
                calls.start_soon(call, "fast", "search", {"query": "naming"})
        finally:
            await notes.aclose()
            await tickets.aclose()
    journal = lab.journal("notes")
    slow_in, fast_in = journal.calls("read_note")[-1], journal.calls("search")[-1]
    slow_out, fast_out = journal.reply_to(slow_in), journal.reply_to(fast_in)
    if slow_out is None or fast_out is None:
        raise HarnessError("the notes server did not answer both calls")
    if not fast_out.t < slow_out.t:
        raise HarnessError("the notes server did not hold read_note's reply back (--hold)")
    for key, reply in (("slow", slow_out), ("fast", fast_out)):
        if answers.get(key) != reply.msg.get("result"):
            raise Fail(f"the {key} call (id {reply.msg.get('id')}) returned {answers.get(key)!r:.120}, "
                       f"but the server's reply to that id was {reply.msg.get('result')!r:.120}: "
                       "replies must be matched to requests by id")
    left = lab.survivors()
    if left:
        raise Fail("after aclose() these servers are still in the process table: " + ", ".join(left))
    return ("discovered notes and tickets; the fast reply overtook the slow one "
            f"by {ms(slow_out.t - fast_out.t)} and each went to its own request; no process left")


# -- 2 ------------------------------------------------------------------------

async def protocol_error(target: Target, lab: Lab) -> str:
    """Judged by order, not by a stopwatch. The notes server answers in the order
    it reads (--inline). Three requests go out whose replies are an error, a reply
    with neither member and an empty result; once the journal shows those replies
    written, a fourth request goes out. Its reply comes after theirs on the same
    pipe, so when it has been handled the first three must already have ended: a
    request still waiting then had its reply read and dropped."""
    spec = lab.server("notes", None, "--inline", "--bare-reply", BARE_METHOD, "--empty-reply", EMPTY_METHOD)
    client = target.stdio_client.StdioClient(spec, request_timeout=GENEROUS)
    journal = lab.journal("notes")
    outcomes: Dict[str, Any] = {}

    async def ask(method: str) -> None:
        try:
            outcomes[method] = await client.request(method)
        except Exception as exc:
            outcomes[method] = exc

    async with anyio.create_task_group() as group:
        try:
            await client.start(group)
            async with anyio.create_task_group() as asks:
                for method in FIRST_METHODS:
                    asks.start_soon(ask, method)
                if not await replies_written(journal, FIRST_METHODS):
                    raise Fail(f"expected: {', '.join(FIRST_METHODS)} reach the server\n"
                               f"journal: the server received {[r.msg.get('method') for r in journal.requests()]}"
                               f"{edit(target, EXERCISES[1])}")
                await ask(LATER_METHOD)
                await settled(outcomes, FIRST_METHODS)
                asks.cancel_scope.cancel()  # a request still waiting is abandoned, not waited for
        finally:
            await client.aclose()
    started(journal)
    error_reply, bare_reply = (journal.reply_to(journal.requests(m)[-1]) for m in (ERROR_METHOD, BARE_METHOD))
    error = error_reply.msg.get("error") if error_reply else None
    if not isinstance(error, dict) or bare_reply is None:
        raise HarnessError("the notes server did not answer notes/reindex with an error")
    served = f"the server answered {error['code']} {error['message']!r}"
    where = edit(target, EXERCISES[1])
    later = outcomes.get(LATER_METHOD)
    if isinstance(later, BaseException):
        raise Fail(f"expected: {LATER_METHOD}, sent last, returns its result\n"
                   f"got: {describe(later)}{where}")
    McpError, ProtocolViolation = target.errors.McpError, target.errors.ProtocolViolation
    first = outcomes.get(ERROR_METHOD, PENDING)
    if first is PENDING:
        raise Fail(f"expected: the request fails at once with McpError {error['code']}\n"
                   f"journal: {served}; a later request was answered after it\n"
                   f"got: the later request returned while {ERROR_METHOD} was still waiting: its "
                   f"error reply was read and dropped, so it would have waited for its whole "
                   f"timeout{where}")
    if not isinstance(first, McpError) or first.code != error["code"]:
        raise Fail(f"expected: McpError with the server's code {error['code']}\njournal: {served}\n"
                   f"got: {describe(first) if isinstance(first, BaseException) else f'a result {first!r:.80}'}"
                   f"{where}")
    bare = outcomes.get(BARE_METHOD, PENDING)
    bare_served = f"the server answered {BARE_METHOD} with {json.dumps(bare_reply.msg)}"
    if bare is PENDING:
        raise Fail(f"expected: a reply with neither 'result' nor 'error' fails its request "
                   f"(ProtocolViolation)\njournal: {bare_served}; a later request was answered after it\n"
                   f"got: the later request returned while {BARE_METHOD} was still waiting: that reply "
                   f"was dropped{where}")
    if not isinstance(bare, ProtocolViolation):
        raise Fail(f"expected: ProtocolViolation for a reply with neither 'result' nor 'error'\n"
                   f"journal: {bare_served}\n"
                   f"got: {describe(bare) if isinstance(bare, BaseException) else f'a result {bare!r:.80}'}"
                   f"{where}")
    empty = outcomes.get(EMPTY_METHOD, PENDING)
    empty_reply = journal.reply_to(journal.requests(EMPTY_METHOD)[-1])
    empty_served = f"the server answered {EMPTY_METHOD} with {json.dumps(empty_reply.msg) if empty_reply else 'nothing'}"
    if empty is PENDING:
        raise Fail(f"expected: an empty result {{}} is a result (what an acknowledgement carries): "
                   f"the request returns {{}}\njournal: {empty_served}; a later request was answered after it\n"
                   f"got: the later request returned while {EMPTY_METHOD} was still waiting: its reply "
                   f"was dropped{where}")
    if empty != {}:
        raise Fail(f"expected: an empty result {{}} is a result (what an acknowledgement carries): the "
                   f"request returns {{}}; test for the key (\"result\" in message), not for a truthy "
                   f"value\njournal: {empty_served}\n"
                   f"got: {describe(empty) if isinstance(empty, BaseException) else f'a result {empty!r:.80}'}"
                   f"{where}")
    return (f"McpError {first.code} {first.message!r}, ProtocolViolation (a reply with neither "
            f"member) and the empty result {{}}, all before a later request's reply was handled")


async def replies_written(journal: Journal, methods: Sequence[str]) -> bool:
    """Wait (bounded) until the journal shows a reply to each of `methods`."""
    with anyio.move_on_after(GENEROUS):
        while True:
            requests = [journal.requests(m) for m in methods]
            if all(found and journal.reply_to(found[-1]) for found in requests):
                return True
            await anyio.sleep(JOURNAL_POLL)
    return False


async def settled(outcomes: Dict[str, Any], keys: Sequence[str]) -> None:
    """Let requests whose replies were already handled finish. Counted in turns
    of the event loop, not seconds: a woken request needs a few turns at most."""
    for _ in range(SETTLE_TURNS):
        if all(k in outcomes for k in keys):
            return
        await anyio.sleep(0)


# -- 3 ------------------------------------------------------------------------

async def paging(target: Target, lab: Lab) -> str:
    spec = lab.server("notes", None, "--paging", "empty-cursor")
    endless_spec = lab.server("notes", "endless", "--paging", "endless")
    Client = target.stdio_client.StdioClient
    client, endless = Client(spec, request_timeout=GENEROUS), Client(endless_spec, request_timeout=GENEROUS)
    where = edit(target, EXERCISES[2])
    stopped: Any = None
    async with anyio.create_task_group() as group:
        try:
            await client.start(group)
            await endless.start(group)
            tools = await target.discovery.list_all_tools(client)
            try:
                await target.discovery.list_all_tools(endless, max_pages=ENDLESS_LIMIT)
            except Exception as exc:
                stopped = exc
        finally:
            await client.aclose()
            await endless.aclose()
    journal = lab.journal("notes")
    pages = [(r, journal.reply_to(r)) for r in journal.requests("tools/list")]
    results = [(reply.msg.get("result") or {}) if reply else {} for _, reply in pages]
    issued = [r["nextCursor"] for r in results if "nextCursor" in r]
    sent = [(r.msg.get("params") or {}).get("cursor", ABSENT) for r, _ in pages]
    names = [t.get("name") if isinstance(t, dict) else t for t in tools] if isinstance(tools, list) else []
    served = [[t.get("name") for t in r.get("tools", [])] for r in results]
    if sent[1:] != issued[:len(sent) - 1] or sent[:1] != [ABSENT]:
        raise Fail(f"expected: the first request without a cursor, then each nextCursor sent back "
                   f"exactly as received (\"\" is a cursor too)\n"
                   f"journal: the server issued {issued}; the client sent "
                   f"{['(none)' if c is ABSENT else c for c in sent]}{where}")
    if not results or "nextCursor" in results[-1]:
        tail = results[-1] if results else {}
        raise Fail(f"expected: pages requested until one comes without nextCursor\n"
                   f"journal: {len(pages)} tools/list request(s); the last reply had "
                   f"{len(tail.get('tools', []))} tool(s) and nextCursor {tail.get('nextCursor')!r}, which "
                   f"never came back\ngot: {len(names)}: {', '.join(map(str, names)) or 'none'}; only a "
                   f"missing nextCursor ends the list (not a short page, an empty one, or \"\"){where}")
    listed = [name for page in served for name in page]
    if names != listed:
        raise Fail(f"expected: exactly the tools the pages held, in order: {listed}\n"
                   f"got: {names}{where}")
    endless_pages = len(lab.journal("endless").requests("tools/list"))
    if endless_pages != ENDLESS_LIMIT or not isinstance(stopped, target.errors.ProtocolViolation):
        ended = describe(stopped) if stopped is not None else "it returned a list"
        raise Fail(f"expected: a server that never stops paging is stopped after max_pages="
                   f"{ENDLESS_LIMIT} pages with ProtocolViolation\n"
                   f"journal: the endless server received {endless_pages} tools/list requests\n"
                   f"got: {ended}{where}")
    shown = "; ".join(f"page {i + 1}: {', '.join(page) or '(empty)'}" for i, page in enumerate(served))
    return (f"{shown}; cursors {', '.join(repr(c) for c in issued)} sent back verbatim; "
            f"an endless lister stopped after {ENDLESS_LIMIT} pages")


# -- 4 ------------------------------------------------------------------------

async def translation(target: Target, lab: Lab) -> str:
    async with await aggregator_for(target, lab, [lab.server("tickets")]) as tools:
        await refreshed(target, tools)
        anthropic = {t["name"]: t for t in tools.model_tools()}
        openai = {t["function"]["name"]: t for t in tools.model_tools("openai")}
        listed = [t for _, reply in [(r, lab.journal("tickets").reply_to(r))
                                     for r in lab.journal("tickets").requests("tools/list")]
                  if reply for t in (reply.msg.get("result") or {}).get("tools", [])]
        for tool in listed:
            entry = tools.find("tickets", tool["name"])
            if entry is None:
                raise Fail(f"the server listed {tool['name']!r} but the registry has no entry for it")
            model_tool = anthropic.get(entry.model_name)
            if model_tool is None or set(model_tool) != {"name", "description", "input_schema"}:
                raise Fail(f"model tool for {tool['name']!r} should have exactly name, description "
                           f"and input_schema; got {sorted(model_tool or {})}")
            if model_tool["input_schema"] != tool["inputSchema"]:
                raise Fail(f"{entry.model_name}: input_schema differs from the server's inputSchema")
            if "tickets" not in model_tool["description"] or \
                    tool["description"] not in model_tool["description"]:
                raise Fail(f"{entry.model_name}: the description should keep the server's text and say "
                           f"where it comes from; got {model_tool['description']!r}")
            function = openai.get(entry.model_name, {}).get("function", {})
            if function.get("parameters") != tool["inputSchema"]:
                raise Fail(f"{entry.model_name}: the OpenAI-style tool needs 'parameters'")
            if entry.title != tool.get("title", tool["name"]):
                raise Fail(f"{entry.model_name}: registry title {entry.title!r}, server said "
                           f"{tool.get('title')!r}")
            if any(entry.annotations.get(k) != v for k, v in tool.get("annotations", {}).items()):
                raise Fail(f"{entry.model_name}: the registry lost the server's annotations")
            if entry.output_schema != tool.get("outputSchema"):
                raise Fail(f"{entry.model_name}: the registry lost the outputSchema")
        if not listed:
            raise HarnessError("the tickets server listed no tools")
    return (f"{len(listed)} tools translated for both API shapes with provenance; "
            "title, annotations and outputSchema kept in the registry")


# -- 5 and 6 --------------------------------------------------------------------

async def collision(target: Target, lab: Lab) -> str:
    specs = [lab.server("notes"), lab.server("tickets")]
    async with await aggregator_for(target, lab, specs) as tools:
        await refreshed(target, tools)
        entries = {alias: tools.find(alias, "search") for alias in ("notes", "tickets")}
        names = {alias: entry.model_name if entry else None for alias, entry in entries.items()}
        where = edit(target, EXERCISES[3])
        if None in names.values() or names["notes"] == names["tickets"]:
            dropped = "; ".join(getattr(tools, "dropped", [])) or "nothing recorded"
            raise Fail(f"expected: both 'search' tools under distinct model-facing names\n"
                       f"got: {names}; one search shadows the other (left out: {dropped}){where}")
        for alias, name in names.items():
            result = await tools.call(name, {"query": "timeouts"})
            received = [c.msg["params"]["name"] for c in lab.journal(alias).calls()]
            if received != ["search"]:
                raise Fail(f"expected: calling {name} sends 'search' to {alias}\n"
                           f"journal: {alias} received {received}\ngot: {result!r:.100}{where}")
    return f"{names['notes']} -> notes/search and {names['tickets']} -> tickets/search, each as 'search'"


async def names_fit(target: Target, lab: Lab) -> str:
    odd = [arg for name in (*ODD_NAMES, EXACT_FIT) for arg in ("--add-tool", name)]
    specs = [lab.server("notes"), lab.server("tickets", None, *odd)]
    where = edit(target, EXERCISES[3])
    async with await aggregator_for(target, lab, specs) as tools:
        await refreshed(target, tools)
        bad = [n for n in tools.entries if not MODEL_NAME.match(n)]
        if bad:
            shown = ", ".join(f"{n!r} ({why_illegal(n)})" for n in bad)
            raise Fail(f"expected: every model-facing name matches {MODEL_NAME.pattern}: every character "
                       f"outside it replaced, not only dots\ngot: {shown}{where}")
        originals = (LONG, TWIN_CSV, TWIN_JSON, DOTTED, UNDERSCORED, *ODD_NAMES, EXACT_FIT)
        picked = {original: tools.find("tickets", original) for original in originals}
        missing = [o for o, e in picked.items() if e is None]
        if missing:
            raise Fail(f"expected: a model-facing name for each of {missing}\n"
                       f"got: left out: {'; '.join(tools.dropped) or 'nothing recorded'}{where}")
        if len({e.model_name for e in picked.values()}) != len(picked):
            raise Fail(f"expected: long, twin and dotted names stay unique (append a hash)\n"
                       f"got: {[e.model_name for e in picked.values()]}{where}")
        kept = [e for e in tools.entries.values() if e.alias == "tickets"
                and MODEL_NAME.match(f"{PREFIX}{e.original_name}") and e.model_name != f"{PREFIX}{e.original_name}"]
        if kept:
            raise Fail(f"expected: a name that is legal and fits ({MODEL_NAME.pattern}) stays exactly "
                       f"mcp__<alias>__<tool>\ngot: {kept[0].original_name!r} "
                       f"({len(PREFIX + kept[0].original_name)} chars once prefixed) became {kept[0].model_name!r}"
                       f"{where}")
        cut = [e for e in picked.values() if len(PREFIX + e.original_name) > 64]
        short = [e for e in cut if len(e.model_name) != 64 or not e.model_name.startswith(PREFIX)]
        if short:
            raise Fail(f"expected: a name that is too long is cut only as far as it must be: it keeps the prefix "
                       f"{PREFIX!r} and, with its hash, is exactly 64 characters\ngot: "
                       f"{short[0].original_name!r} became {short[0].model_name!r} ({len(short[0].model_name)} "
                       f"chars){where}")
        for original, entry in picked.items():
            plain = f"{PREFIX}{original}"
            suffix = "_" + target.naming.short_hash("tickets", original)
            if entry.model_name != plain and not entry.model_name.endswith(suffix):
                raise Fail(f"expected: whenever the name had to change (cut, or a character "
                           f"replaced), it ends with \"_\" + short_hash(alias, tool)\n"
                           f"got: {original!r} became {entry.model_name!r}, without {suffix!r}"
                           f"{clash_of(original, entry.model_name, tools)}{where}")
        for original, entry in picked.items():
            await tools.call(entry.model_name, {})
            received = lab.journal("tickets").calls()[-1].msg["params"]["name"]
            if received != original:
                raise Fail(f"expected: {entry.model_name} reaches tickets as {original!r}\n"
                           f"journal: tickets received {received!r}{where}")
    return (f"{len(tools.entries)} legal names; {DOTTED} -> {picked[DOTTED].model_name} and {UNDERSCORED} -> "
            f"{picked[UNDERSCORED].model_name}; long and twin names cut and hashed; all reached tickets as named")


def why_illegal(name: str) -> str:
    """What makes a model-facing name illegal, in a few words."""
    odd = sorted({c for c in name if not MODEL_NAME.match(c)})
    said = [f"{len(name)} chars"] + ([f"{', '.join(repr(c) for c in odd)} not allowed"] if odd else [])
    return "; ".join(said)


def clash_of(original: str, model_name: str, tools: Any) -> str:
    """Why a changed name needs the hash, when another tool shows it: the tool
    whose name would come out the same without one."""
    for entry in tools.entries.values():
        other = entry.original_name
        if other != original and entry.alias == "tickets" and \
                re.sub(r"[^A-Za-z0-9_-]", "_", other) == re.sub(r"[^A-Za-z0-9_-]", "_", original):
            return f"; {original!r} and {other!r} would then share a name"
    return "; a name that was changed needs the hash, or two tools may share it"


# -- 7 ------------------------------------------------------------------------

async def error_classes(target: Target, lab: Lab) -> str:
    async with await aggregator_for(target, lab, [lab.server("tickets")]) as tools:
        await refreshed(target, tools)
        entry = tools.find("tickets", "schedule_followup")
        if entry is None:
            raise Fail("schedule_followup from tickets is missing from the registry")
        journal = lab.journal("tickets")
        fixable = await tools.call(entry.model_name, {"ticket_id": "T-101", "date": "next friday"})
        served = result_of(journal, "schedule_followup")
        if not served.get("isError"):
            raise HarnessError("the tickets server did not return its date error")
        if not isinstance(fixable, dict) or fixable.get("content") != served.get("content") \
                or fixable.get("isError") is not True:
            raise Fail(f"the server's isError result must come back verbatim so the model can fix its "
                       f"call; server sent {served.get('content')!r:.120}, call() returned {fixable!r:.120}")
        unknown = await tools.call("mcp__nowhere__nothing", {})
        calls_before = len(journal.calls())
        invalid = await tools.call(entry.model_name, {"ticket_id": "T-101"})
        for label, result in (("an unknown tool name", unknown), ("arguments missing 'date'", invalid)):
            if not isinstance(result, dict) or result.get("isError") is not True or not result.get("content"):
                raise Fail(f"{label} should give an isError result with a text the model can read; "
                           f"got {result!r:.120}")
        if len(journal.calls()) != calls_before:
            raise Fail("arguments that fail the inputSchema reached the server; check them locally "
                       "before sending")
    return "the date error came back verbatim; unknown name and bad arguments became isError results, " \
           "the latter without reaching the server"


# -- 8 ------------------------------------------------------------------------

async def offline(target: Target, lab: Lab) -> str:
    accounts: Dict[str, str] = {}
    where = edit(target, EXERCISES[4])

    async def scenario(mode: str, timeout: float) -> None:
        # Only the broken server gets a short limit, and only where any limit
        # proves the point: a server that exits is judged by its exit, however
        # long a busy machine takes to start it.
        specs = [lab.server("notes", f"notes-{mode}"),
                 lab.server("tickets", "tickets", "--fail", mode, timeout=timeout, label=f"tickets-{mode}")]
        tickets_journal = lab.journals[-1]
        async with await aggregator_for(target, lab, specs) as tools:
            await survive_refresh(target, lab, tools, mode, tickets_journal)
            started(tickets_journal)
            why = tools.offline.get("tickets") if isinstance(tools.offline, dict) else None
            if not why or not isinstance(why, str):
                raise Fail(f"expected: offline maps 'tickets' to a reason ({mode})\n"
                           f"got: offline is {tools.offline!r}{where}")
            if mode == "exit-at-start" and not ("3" in why or "ticket database" in why):
                raise Fail(f"expected: a reason that says how tickets failed (exit status 3, "
                           f"or its stderr)\ngot: {why!r}{where}")
            entry = tools.find(f"notes-{mode}", "search")
            result = await tools.call(entry.model_name, {"query": "paging"}) if entry else None
            if not lab.journal(f"notes-{mode}").calls("search") or not result or result.get("isError"):
                raise Fail(f"with tickets down ({mode}) the note library should still answer; "
                           f"call returned {result!r:.100}")
            name = target.naming.model_tool_name("tickets", "close_ticket")
            closed = await tools.call(name, {"ticket_id": "T-101"})
            if not isinstance(closed, dict) or closed.get("isError") is not True:
                raise Fail(f"calling {name} on the offline server should return an isError result; "
                           f"got {closed!r:.100}")
            accounts[mode] = f"tickets ({mode}: {textwrap.shorten(why, 60, placeholder='...')})"
            accounts["answered"] = f"{entry.model_name} still answered" if entry else ""

    async def slow() -> None:
        # Every reply arrives well within the request timeout, but discovery
        # needs two of them: only a limit on the whole discovery catches it.
        spec = lab.server("tickets", "slow-tickets", "--delay", str(SLOW_REPLY))
        journal = lab.journals[-1]
        async with await aggregator_for(target, lab, [spec], discovery_timeout=SLOW_DISCOVERY_LIMIT) as tools:
            await survive_refresh(target, lab, tools, "slow", journal)
            why = tools.offline.get("slow-tickets") if isinstance(tools.offline, dict) else None
            if not why and "slow-tickets" not in getattr(tools, "connections", {}):
                raise Fail(f"expected: a server whose discovery takes longer than the per-server limit "
                           f"({SLOW_DISCOVERY_LIMIT:g} s here, self.discovery_timeout) goes to the offline table "
                           f"with a reason\njournal: slow-tickets {tickets_state(journal)}\n"
                           f"got: it is neither connected nor in the offline table (offline: {tools.offline!r}); "
                           f"a limit around the whole refresh loses it without a word{where}")
            if not why:
                answered = [e.msg.get("id") for e in journal.entries() if e.kind == "out" and "id" in e.msg]
                raise Fail(f"expected: a server whose discovery takes longer than the per-server limit "
                           f"({SLOW_DISCOVERY_LIMIT:g} s here, self.discovery_timeout) goes offline\n"
                           f"journal: slow-tickets answered {len(answered)} request(s), each "
                           f"{SLOW_REPLY:g} s late, within the {GENEROUS:g} s request timeout\n"
                           f"got: it came online; without a limit on the whole discovery a server "
                           f"that is merely slow at every step holds up the refresh{where}")
            accounts["slow"] = f"slow-tickets (slow discovery: {textwrap.shorten(why, 40, placeholder='...')})"

    # The three run at once; when several fail, the report names the first in
    # this order, whichever failed first: the same words on every machine.
    failures: Dict[str, Fail] = {}

    async def kept(key: str, run: Any, *args: Any) -> None:
        try:
            await run(*args)
        except Fail as exc:
            failures[key] = exc

    async with anyio.create_task_group() as group:
        group.start_soon(kept, "exit-at-start", scenario, "exit-at-start", GENEROUS)
        group.start_soon(kept, "never-answer", scenario, "never-answer", SILENT_TIMEOUT)
        group.start_soon(kept, "slow", slow)
    for key in ("exit-at-start", "never-answer", "slow"):
        if key in failures:
            raise failures[key]
    overlap = discovery_overlap(lab.journal("notes-never-answer"), lab.journal("tickets-never-answer"))
    return (f"offline: {', '.join(accounts[k] for k in ('exit-at-start', 'never-answer', 'slow'))}; "
            f"{accounts['answered']}; a call to an offline tool gave isError; {overlap}")


def discovery_span(journal: Journal) -> Optional[Tuple[float, float]]:
    """When a server's discovery began (its process was started) and ended, from its
    own journal: the reply to its last tools/list before any call or, for a server
    given up on, the client's last cancel (or the end of its input)."""
    entries = journal.entries()
    # When the client had started it (the kernel's record), not when Python got going.
    start = next((float(e.raw.get("forked") or e.t) for e in entries if e.kind == "start"), None)
    first_call = next((e.t for e in entries if e.kind == "in" and e.msg.get("method") == "tools/call"), None)
    if start is None:
        return None
    if first_call is not None:
        replies = [journal.reply_to(r) for r in journal.requests("tools/list") if r.t < first_call]
        return (start, max(r.t for r in replies if r is not None)) if any(replies) else None
    cancels = [e.t for e in entries if e.kind == "in" and e.msg.get("method") == "notifications/cancelled"]
    ends = cancels or [e.t for e in entries if e.kind == "exit"]
    return (start, ends[-1]) if ends else None


def discovery_overlap(first: Journal, second: Journal) -> str:
    """Evidence, not a verdict: whether the two servers were discovered at the
    same time (each began before the other ended), and what that cost."""
    spans = [discovery_span(first), discovery_span(second)]
    if spans[0] is None or spans[1] is None:
        return "whether discovery overlapped could not be read from the journals"
    (a_start, a_end), (b_start, b_end) = spans[0], spans[1]
    at_once, in_turn = max(a_end - a_start, b_end - b_start), (a_end - a_start) + (b_end - b_start)
    if a_start < b_end and b_start < a_end:
        return (f"discovery overlapped ({first.alias} and {second.alias} were discovered at once: about "
                f"{ms(at_once)}, not the {ms(in_turn)} of one after another)")
    return (f"discovery did not overlap: one server waited for the other ({ms(in_turn)} in all; at once it "
            f"would have been about {ms(at_once)}: start them together, labs/GUIDE.md section 6)")


async def survive_refresh(target: Target, lab: Lab, tools: Any, mode: str, broken: Journal) -> None:
    try:
        await refreshed(target, tools)
    except Fail:
        raise
    except Exception as exc:
        healthy = [j for j in lab.journals if j.alias == f"notes-{mode}"]
        said = ""
        if healthy:
            answered = any(healthy[-1].reply_to(r) for r in healthy[-1].requests("server/discover"))
            said = f"notes {'answered' if answered else 'never answered'} server/discover; "
        raise Fail(f"expected: with {broken.alias} broken ({mode}), it goes to the offline table "
                   "with a reason and the other servers stay usable\n"
                   f"journal: {said}{broken.alias} {tickets_state(broken)}\n"
                   f"got: refresh() raised {describe(exc)}: one broken server sank the "
                   f"whole refresh{edit(target, EXERCISES[4])}") from None


def tickets_state(journal: Journal) -> str:
    """What the broken server's journal says happened to it, in its own terms."""
    ends = [e for e in journal.entries() if e.kind == "exit"]
    received = len(journal.requests())
    answered = len([e for e in journal.entries() if e.kind == "out" and "id" in e.msg])
    if ends and ends[-1].raw.get("reason") == "stdin closed":
        return (f"received {received} request(s), answered {answered}, and was closed by the client "
                f"(its input ended)")
    if ends:
        return f"exited with status {ends[-1].raw.get('status')} at start"
    return f"received {received} request(s) and answered {answered}"


def describe(exc: BaseException) -> str:
    return " + ".join(f"{type(leaf).__name__} ({leaf})" for leaf in leaves(exc))


# -- 9 ------------------------------------------------------------------------

async def agent_loop(target: Target, lab: Lab) -> str:
    specs = [lab.server("notes"), lab.server("tickets")]
    ModelTurn, ToolCall = target.model.ModelTurn, target.model.ToolCall

    class Looping:
        """A model that never stops calling tools."""
        name = "looping"
        api = "anthropic"

        def __init__(self, tool: str) -> None:
            self.tool = tool

        async def next_turn(self, system: str, tools: Any, messages: Any) -> Any:
            return ModelTurn("", [ToolCall(f"loop-{len(messages)}", self.tool, {"id": "n-1"})])

    async with await aggregator_for(target, lab, specs) as tools:
        await refreshed(target, tools)
        table = {t["name"] for t in tools.model_tools()}
        # The configured model (the mock under MOCK=1 or when none is set up).
        model = target.models.choose_model()[0]
        mock = isinstance(model, target.mock_model.MockModel)
        run = await target.agent.run_agent("Read note n-2", tools, model, max_steps=4)
        if not run.steps:
            raise Fail(f"the mock model made no tool call; answer: {run.answer!r}")
        step = run.steps[0]
        if step.model_name not in table:
            raise Fail(f"the model chose {step.model_name!r}, which is not in the tool table")
        entry = tools.entries[step.model_name]
        calls = lab.journal(entry.alias).calls()
        if not calls or calls[0].msg["params"]["name"] != entry.original_name:
            raise Fail(f"{entry.alias} should have received {entry.original_name!r}; journal shows "
                       f"{[c.msg['params']['name'] for c in calls]}")
        served = result_of(lab.journal(entry.alias), entry.original_name)
        text = " ".join(b.get("text", "") for b in served.get("content", []))
        if run.stopped_at_limit or not run.answer:
            raise Fail(f"the loop should end with an answer within its 4 steps; got {run.answer!r:.120}")
        if mock and text.split("\n")[0] not in run.answer:
            raise Fail(f"the result should be fed back and answered from; answer was {run.answer!r:.120}")
        healed = await self_healing(target, lab, tools, model) if mock else ""
        before = len(lab.journal("notes").calls())
        loop = await target.agent.run_agent("Loop", tools, Looping(step.model_name), max_steps=3)
        looped = len(lab.journal("notes").calls()) - before
        if not loop.stopped_at_limit or loop.model_turns != 3 or looped != 3:
            raise Fail(f"a model that keeps calling tools must stop at max_steps=3; it made "
                       f"{loop.model_turns} turns and the server got {looped} calls")
    return (f"the model chose {step.model_name}; {entry.alias} received {entry.original_name!r}; "
            f"answered from the result; {healed}a looping model stopped after 3 turns")


async def self_healing(target: Target, lab: Lab, tools: Any, model: Any) -> str:
    """The lesson of tool execution errors: the error's text goes back to the model,
    which fixes its own call. Judged from the journal: the second call carries a
    date that only the first reply's text could have given."""
    run = await target.agent.run_agent(HEALING_QUESTION, tools, model, max_steps=4)
    journal = lab.journal("tickets")
    calls = journal.calls("schedule_followup")
    replies = [journal.reply_to(c) for c in calls]
    results = [(r.msg.get("result") or {}) if r else {} for r in replies]
    if len(calls) != 2 or not results[0].get("isError") or results[1].get("isError"):
        said = [" ".join(b.get("text", "") for b in r.get("content", []))[:80] for r in results]
        raise Fail(f"expected: the date error goes back to the model as a tool result, and the model's "
                   f"second call fixes the date from its text\njournal: tickets received "
                   f"{len(calls)} schedule_followup call(s), answered {said}\n"
                   f"got: answer {run.answer!r:.120}")
    return (f"the date error reached the model, whose second call sent "
            f"{calls[1].msg['params']['arguments'].get('date')!r}; ")


ITEMS = [
    Item(1, "connect", "connects over stdio; replies matched by id; close leaves no process",
         connects, "stdio_client.py", "StdioClient"),
    Item(2, "protocol-error", "a protocol error rejects its request at once with the server's code",
         protocol_error, "stdio_client.py", "StdioClient.on_line", EXERCISES[1]),
    Item(3, "paging", "all three note tools found across pages; cursors sent back verbatim",
         paging, "discovery.py", "list_all_tools", EXERCISES[2]),
    Item(4, "translation", "MCP tools become model tools; title, annotations, outputSchema stay client-side",
         translation, "translate.py", "to_anthropic_tool"),
    Item(5, "collision", "both search tools under distinct names, each reaching its own server",
         collision, "naming.py", "model_tool_name", EXERCISES[3]),
    Item(6, "model-names", "every model-facing name is legal; long, twin and dotted names stay unique",
         names_fit, "naming.py", "model_tool_name", EXERCISES[3]),
    Item(7, "error-classes", "isError results come back verbatim; unknown names and bad arguments too",
         error_classes, "aggregator.py", "Aggregator.call"),
    Item(8, "offline", "a broken server goes to the offline table with a reason; the rest keep working",
         offline, "aggregator.py", "Aggregator.refresh", EXERCISES[4],
         waits=f"a silent server ({SILENT_TIMEOUT:g} s per request) and a slow one "
               f"({SLOW_DISCOVERY_LIMIT:g} s for its whole discovery)"),
    Item(9, "agent-loop", "the agent loop: model picks a name, server gets the original, a step limit",
         agent_loop, "agent.py", "run_agent"),
]

