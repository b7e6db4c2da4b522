"""Items 1-3: the wire. Replies matched by id, a protocol error rejecting its request at
once (judged by order, not a stopwatch), and paging to the last page.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

import anyio

from checks.exercises import EXERCISES
from checks.fixtures import Journal, Lab
from checks.harness import Fail, HarnessError
from checks.items.evidence import GENEROUS, JOURNAL_POLL, describe, edit, ms, started
from checks.target import Target


ENDLESS_LIMIT = 5  # max_pages given to list_all_tools for the server that never stops paging
ERROR_METHOD, BARE_METHOD, LATER_METHOD = "notes/reindex", "notes/status", "tools/list"
EMPTY_METHOD = "notes/flush"  # answered with an empty result, {}: still a result
FIRST_METHODS = (ERROR_METHOD, BARE_METHOD, EMPTY_METHOD)
SETTLE_TURNS = 100
PENDING = object()
ABSENT = object()


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
    for method in (BARE_METHOD, EMPTY_METHOD):  # another request failed with this reply's error
        other = outcomes.get(method, PENDING)
        if isinstance(other, McpError) and other.code == error["code"] and \
                getattr(other, "message", None) == error["message"]:
            raise Fail(f"expected: an error reply rejects only the request whose id it carries\n"
                       f"journal: {served} to {ERROR_METHOD}; {method} was "
                       f"answered on its own\ngot: {method} failed with {ERROR_METHOD}'s error too{where}")
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
    if empty is bare:  # the very exception the reply with neither member made: it failed this one too
        raise Fail(f"expected: a reply with neither member rejects only the request whose id it carries\n"
                   f"journal: {bare_served}; {empty_served}\n"
                   f"got: {EMPTY_METHOD} failed with {BARE_METHOD}'s ProtocolViolation too{where}")
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


def pages_of(journal: Journal) -> Tuple[List[Dict[str, Any]], List[Any], List[Any]]:
    """From a journal: each tools/list result, the cursors it issued, and the
    cursor each request sent back (ABSENT for none)."""
    pages = [(r, journal.reply_to(r)) for r in journal.requests("tools/list")]
    results = [(reply.msg.get("result") or {}) if reply else {} for _, reply in pages]
    issued = [r["nextCursor"] for r in results if "nextCursor" in r]
    sent = [(r.msg.get("params") or {}).get("cursor", ABSENT) for r, _ in pages]
    return results, issued, sent


def cursor_fault(journal: Journal) -> Optional[str]:
    """What the journal says went wrong with paging: "cursors" (one not sent back
    as issued, or a first request with one), "unfinished" (the last page had a
    nextCursor), or None. The item and the runner's proof (checks.items.proofs) both ask."""
    results, issued, sent = pages_of(journal)
    if sent[1:] != issued[:len(sent) - 1] or sent[:1] != [ABSENT]:
        return "cursors"
    if not results or "nextCursor" in results[-1]:
        return "unfinished"
    return None


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
    results, issued, sent = pages_of(journal)
    names = [t.get("name") if isinstance(t, dict) else t for t in tools] if isinstance(tools, list) else []
    served = [[t.get("name") for t in r.get("tools", [])] for r in results]
    fault = cursor_fault(journal)
    if fault == "cursors":
        raise Fail(f"expected: the first request without a cursor, then each nextCursor sent back "
                   f"exactly as received (\"\" is a cursor too)\n"
                   f"journal: the server issued {issued}; the client sent "
                   f"{['(none)' if c is ABSENT else c for c in sent]}{where}")
    if fault == "unfinished":
        tail = results[-1] if results else {}
        raise Fail(f"expected: pages requested until one comes without nextCursor\n"
                   f"journal: {len(results)} tools/list request(s); the last reply had "
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
