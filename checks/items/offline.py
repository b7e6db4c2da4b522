"""Item 8: a broken server goes offline with a reason and the rest keep working; the
evidence says whether discovery overlapped.
"""

from __future__ import annotations

import textwrap
from typing import Any, Dict, Optional, Tuple

import anyio

from checks.exercises import EXERCISES
from checks.fixtures import Journal, Lab
from checks.harness import Fail, HarnessError
from checks.items.evidence import GENEROUS, aggregator_for, describe, edit, ms, refreshed, started
from checks.target import Target


SILENT_TIMEOUT = 0.1  # the silent server never answers: any timeout proves the point
SLOW_REPLY = 0.15  # each reply of the slow server: discovery needs two, so at least 0.3 s
SLOW_DISCOVERY_LIMIT = 0.2  # below two slow replies, so the whole discovery always exceeds it


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
            if mode != "never-answer":
                # A server that never answers may be given up on (and ended) before it
                # got going on a busy machine: it never answered all the same.
                started(tickets_journal)
            why = tools.offline.get("tickets") if isinstance(tools.offline, dict) else None
            if not why or not isinstance(why, str):
                raise Fail(f"expected: offline maps 'tickets' to a reason ({mode})\n"
                           f"got: offline is {tools.offline!r}{where}")
            if mode == "exit-at-start" and not ("3" in why or "ticket database" in why):
                raise Fail(f"expected: a reason that says how tickets failed (exit status 3, "
                           f"or its stderr)\ngot: {why!r}{where}")
            entry = tools.find(f"notes-{mode}", "search")
            if entry is None:
                notes = tools.offline.get(f"notes-{mode}") if isinstance(tools.offline, dict) else None
                state = f"went offline too ({notes!r:.100})" if notes else "is in neither table"
                raise Fail(f"expected: with tickets down ({mode}) the note library is still discovered and answers\n"
                           f"got: notes-{mode} {state}: one server's failure reached another's discovery (a "
                           f"try/except around the whole task group ends every discovery at the first failure; "
                           f"each server's own task needs its own){where}")
            result = await tools.call(entry.model_name, {"query": "paging"})
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
            table = tools.offline if isinstance(tools.offline, dict) else {}
            why = table.get("slow-tickets")
            if "slow-tickets" in table and not (isinstance(why, str) and why.strip()):
                raise Fail(f"expected: a server whose discovery takes longer than the per-server limit "
                           f"({SLOW_DISCOVERY_LIMIT:g} s here) goes to the offline table with a reason that "
                           f"says why\njournal: slow-tickets {tickets_state(journal)}\n"
                           f"got: it is in the offline table, and its reason is {why!r}: a TimeoutError has "
                           f"no text of its own, so str(exc) says nothing; reason(exc) does{where}")
            if not why and "slow-tickets" not in getattr(tools, "connections", {}):
                raise Fail(f"expected: a server whose discovery takes longer than the per-server limit "
                           f"({SLOW_DISCOVERY_LIMIT:g} s here, self.discovery_timeout) goes to the offline table "
                           f"with a reason\njournal: slow-tickets {tickets_state(journal)}\n"
                           f"got: it is neither connected nor in the offline table (offline: {tools.offline!r}); "
                           f"a time limit whose end is not written down (anyio.move_on_after gives up without "
                           f"raising; or one limit around the whole refresh) loses it without a word{where}")
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
    failures: Dict[str, Exception] = {}

    async def kept(key: str, run: Any, *args: Any) -> None:
        try:
            await run(*args)
        except (Fail, HarnessError) as exc:  # a scenario that failed outranks one that could not judge
            failures[key] = exc

    async with anyio.create_task_group() as group:
        group.start_soon(kept, "exit-at-start", scenario, "exit-at-start", GENEROUS)
        group.start_soon(kept, "never-answer", scenario, "never-answer", SILENT_TIMEOUT)
        group.start_soon(kept, "slow", slow)
    for kind in (Fail, HarnessError):
        for key in ("exit-at-start", "never-answer", "slow"):
            if isinstance(failures.get(key), kind):
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
