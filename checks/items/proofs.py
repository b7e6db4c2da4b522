"""What each item's pass needs the servers' own accounts to show.

The worker judges an item in the process where the code under test runs, so
its word alone proves nothing against a submission that tampers with the
judge. The runner therefore counts a pass only when the accounts the servers
sent *it* (checks.accounts) show what that pass rests on: the requests each
claim needs, received and answered, in the order it needs them. A proof is a
necessary condition, never the whole verdict: what happens only inside the
client (a value returned, an exception raised in time) leaves no trace on a
server, and is as trustworthy as the worker's process (labs/INSTRUCTORS.md).

Each proof takes the item's journals and returns what they do not show
(nothing, when the pass stands). The honest reference passes every proof on
every run: they ask only for what a passing item always leaves behind.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from checks.fixtures import Entry, Journal
from checks.items.names import DOTTED, EXACT_FIT, LONG, ODD_NAMES, TWIN_CSV, TWIN_JSON, UNDERSCORED
from checks.items.tasks import last_snapshot
from checks.items.wire import ENDLESS_LIMIT, FIRST_METHODS, LATER_METHOD, cursor_fault

Proof = Callable[[Sequence[Journal]], List[str]]


class Told:
    """The accounts of one item's servers, looked up by the alias the item gave them."""

    def __init__(self, journals: Sequence[Journal]) -> None:
        self.journals = list(journals)

    def of(self, alias: str) -> List[Journal]:
        return [j for j in self.journals if j.alias == alias]

    def answered(self, alias: str, method: str, tool: Optional[str] = None) -> List[Entry]:
        """Requests `alias` received of `method` (and `tool`) and answered."""
        return [r for j in self.of(alias) for r in j.requests(method)
                if (tool is None or params(r).get("name") == tool) and j.reply_to(r) is not None]

    def received(self, alias: str, method: str, tool: Optional[str] = None) -> List[Entry]:
        return [r for j in self.of(alias) for r in j.requests(method) if tool is None or params(r).get("name") == tool]

    def called(self, alias: str) -> List[str]:
        """The tools `alias` was called with, in order."""
        return [str(params(r).get("name")) for r in self.received(alias, "tools/call")]

    def sent(self, alias: str, method: str) -> List[Entry]:
        return [e for j in self.of(alias) for e in j.entries() if e.kind == "out" and e.msg.get("method") == method]

    def logged(self, alias: str, kind: str) -> List[Entry]:
        return [e for j in self.of(alias) for e in j.entries() if e.kind == kind]


def params(entry: Entry) -> Dict[str, Any]:
    found = entry.msg.get("params")
    return found if isinstance(found, dict) else {}


def needs(*pairs: "tuple[bool, str]") -> List[str]:
    """The description of each claim whose condition does not hold."""
    return [said for holds, said in pairs if not holds]


def connects(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    discovered = told.answered("tickets", "server/discover") or told.answered("tickets", "initialize")
    return needs((bool(told.answered("notes", "tools/call", "read_note")), "notes answered read_note"),
                 (bool(told.answered("notes", "tools/call", "search")), "notes answered search"),
                 (bool(discovered), "tickets was discovered"))


def protocol_error(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    firsts = [told.answered("notes", method) for method in FIRST_METHODS]
    later = told.answered("notes", LATER_METHOD)
    replied = [reply.t for journal in told.of("notes") for found in firsts for r in found[-1:]
               for reply in [journal.reply_to(r)] if reply is not None]
    return needs((all(firsts), f"notes answered {', '.join(FIRST_METHODS)}"),
                 (bool(later) and len(replied) == len(FIRST_METHODS) and later[-1].t > max(replied, default=0.0),
                  f"notes received {LATER_METHOD} after it had answered those"))


def paging(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    notes = told.of("notes")
    endless = len(told.received("endless", "tools/list"))
    return needs((bool(notes) and cursor_fault(notes[-1]) is None,
                  "notes received every nextCursor back, verbatim, to the last page"),
                 (endless == ENDLESS_LIMIT, f"the endless server received exactly {ENDLESS_LIMIT} tools/list "
                                           f"(it received {endless})"))


def translation(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    replies = [reply for r in told.answered("tickets", "tools/list") for j in told.of("tickets")
               for reply in [j.reply_to(r)] if reply is not None]
    listed = [t for reply in replies for t in (reply.msg.get("result") or {}).get("tools", [])]
    return needs((bool(listed), "tickets listed its tools"))


def collision(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    return needs(*((told.called(alias) == ["search"], f"{alias} was called once, with 'search'")
                   for alias in ("notes", "tickets")))


def names_fit(journals: Sequence[Journal]) -> List[str]:
    wanted = {LONG, TWIN_CSV, TWIN_JSON, DOTTED, UNDERSCORED, *ODD_NAMES, EXACT_FIT}
    missing = sorted(wanted - set(Told(journals).called("tickets")))
    return needs((not missing, f"tickets was called with every tool by its own name (never: {missing})"))


def error_classes(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    calls = told.answered("tickets", "tools/call", "schedule_followup")
    replies = [j.reply_to(c) for j in told.of("tickets") for c in calls]
    failed = [r for r in replies if r is not None and (r.msg.get("result") or {}).get("isError")]
    return needs((len(told.received("tickets", "tools/call", "schedule_followup")) == 1 and len(failed) == 1,
                  "tickets received schedule_followup once (its date error), never the call without a date"))


def offline(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    exits = [e.raw.get("status") for e in told.logged("tickets-exit-at-start", "exit")]
    return needs(*((bool(told.answered(f"notes-{mode}", "tools/call", "search")),
                    f"notes-{mode} answered search with tickets down") for mode in ("exit-at-start", "never-answer")),
                 (3 in exits, "tickets-exit-at-start exited with status 3"))


def agent_loop(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    calls = len(told.answered("notes", "tools/call")) + len(told.answered("tickets", "tools/call"))
    return needs((calls >= 4, f"the servers answered the question's call and the looping model's three "
                              f"({calls} call(s) in all)"))


def consent(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    notes, tickets = told.called("notes"), told.called("tickets")
    return needs((all(t in notes for t in ("list_tags", "add_note", "search", "read_note")),
                  "notes ran list_tags, add_note, search and read_note"),
                 ("close_ticket" not in tickets, "tickets never received the declined close_ticket"),
                 (tickets.count("schedule_followup") == 2 and "queue.stats" in tickets,
                  "tickets ran queue.stats and both schedule_followup calls"))


def list_changes(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    called = told.called("tickets")
    return needs((bool(told.sent("tickets", "notifications/tools/list_changed")), "tickets announced a change"),
                 (len(told.answered("tickets", "tools/list")) >= 2, "tickets was listed again"),
                 ("install_plugin" in called and "plugin.weekly_report" in called,
                  "tickets ran install_plugin, then the new plugin.weekly_report"))


def progress(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    asked = [c for c in told.answered("tickets", "tools/call", "rebuild_index")
             if (params(c).get("_meta") or {}).get("progressToken") is not None]
    last = Told(told.of("long-tickets")[-1:])  # the long call is made again after a stall: the last run counts
    long_calls = last.answered("long-tickets", "tools/call", "rebuild_index")
    ids = {c.msg.get("id") for c in long_calls}
    cancels = [e for e in last.logged("long-tickets", "in") if e.msg.get("method") == "notifications/cancelled"
               and params(e).get("requestId") in ids]
    return needs((bool(asked), "tickets answered rebuild_index, asked with a progressToken"),
                 (bool(long_calls) and not cancels, "long-tickets answered its long rebuild_index, never cancelled"))


def many_tools(journals: Sequence[Journal]) -> List[str]:
    return needs((Told(journals).called("shop") == ["export_invoice"], "shop was called once, with export_invoice"))


def structured(journals: Sequence[Journal]) -> List[str]:
    return needs((len(Told(journals).answered("notes", "tools/call", "read_note")) >= 2,
                  "notes answered read_note for n-2 and for n-9"))


def tasks(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    tickets = told.of("tickets")
    return needs((bool(tickets) and last_snapshot(tickets[-1]).get("status") == "completed",
                  "tickets said its task completed, in answer to tasks/get"),
                 (bool(told.received("slow-tickets", "tasks/cancel") and told.logged("slow-tickets", "work-stopped")),
                  "slow-tickets received tasks/cancel and stopped the work"),
                 (bool(told.answered("old-tickets", "tasks/result")), "old-tickets answered tasks/result"))


def elicitation(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    calls = told.received("tickets", "tools/call", "set_priority")
    answer = (params(calls[-1]).get("inputResponses") or {}).get("priority") if len(calls) == 2 else None
    return needs((isinstance(answer, dict) and answer.get("action") == "accept",
                  "tickets received set_priority again, with the accepted answer in inputResponses"),
                 (bool(told.sent("old-tickets", "elicitation/create")), "old-tickets asked its question"))


def code_mode(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    sent = [params(c).get("arguments") for c in told.received("tickets", "tools/call", "set_priority")]
    called = told.called("tickets")
    return needs((sent == [{"ticket_id": "T-102", "priority": "high"}], "tickets received set_priority 'high' once"),
                 ("search" not in called and "close_ticket" not in called,
                  "tickets never received the refused script's search, nor the declined close_ticket"),
                 (len(told.answered("notes", "tools/call", "read_note")) >= 3, "notes answered the script's reads"))


def remote(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    ended, resumed = told.logged("archive", "stream-closed"), told.logged("archive", "resume")
    waited = bool(ended and resumed) and resumed[0].t - ended[-1].t >= float(ended[-1].raw.get("retry_ms", 0)) / 1000
    return needs((bool(told.answered("remote", "tools/call", "search")), "remote answered search"),
                 (bool(ended and resumed) and resumed[0].raw.get("last_event_id") == ended[-1].raw.get("last_event_id")
                  and waited, "archive's ended stream was resumed after its last event, once its retry had passed"))


def resources(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    read = [params(r).get("uri") for r in told.answered("archive", "resources/read")]
    return needs((len(told.answered("notes", "resources/list")) >= 2, "notes answered every page of resources/list"),
                 ("note://n-2" in [params(r).get("uri") for r in told.answered("notes", "resources/read")],
                  "notes answered the read of note://n-2"),
                 ("note://n-2" in read, "archive answered the read of the note://n-2 it linked"))


def sampling(journals: Sequence[Journal]) -> List[str]:
    told = Told(journals)
    asked = told.sent("tickets-1", "sampling/createMessage")
    return needs((bool(asked), "tickets-1 asked for a sampling"),
                 (bool(told.received("tickets-1", "tools/call", "draft_reply")), "tickets-1 received draft_reply"))
