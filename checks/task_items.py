"""Extension items E6 (tasks) and E7 (elicitation): long work, and questions back.

Both drive the tickets fixture's `export_tickets`, which runs only as a task
(in both eras) and asks which format to use when it is not given one. What
the client returned is held against the server's journal: the result the
server stored, the `tasks/*` requests it received, the answers that reached it.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from checks.exercises import EXTENSIONS
from checks.extensions import found, point
from checks.fixtures import Entry, Journal, Lab
from checks.harness import Fail
from checks.items import aggregator_for, refreshed
from checks.target import Target

EXPORT = "export_tickets"
# A failing task fails at once: a client that keeps polling it is stopped by
# this limit, far above the fraction of a second the right path takes.
FAILED_TASK_LIMIT = 5.0
# A task of 400 steps (20 s of work) under a 1 s limit: every client reaches
# the limit, and the item looks at what it did then.
CANCEL_LIMIT = 1.0


def text(result: Dict[str, Any]) -> str:
    return " ".join(str(b.get("text", "")) for b in result.get("content") or [] if isinstance(b, dict))


def sent(journal: Journal, method: Optional[str] = None) -> List[Entry]:
    return [e for e in journal.entries() if e.kind == "out" and (method is None or e.msg.get("method") == method)]


def last_snapshot(journal: Journal) -> Dict[str, Any]:
    """The last task state the server sent in reply to a tasks/get."""
    gets = {e.msg.get("id") for e in journal.requests("tasks/get")}
    replies = [e.msg.get("result") or {} for e in journal.entries()
               if e.kind == "out" and e.msg.get("id") in gets and "result" in e.msg]
    return dict(replies[-1]) if replies else {}


async def call_one(target: Target, lab: Lab, spec: Any, alias: str, arguments: Dict[str, Any], *,
                   tool: str = EXPORT, elicitor: Any = None, extension: str = "E6") -> Dict[str, Any]:
    """Call one tool of a server alone in its table (so no exercise 3 is needed)."""
    async with await aggregator_for(target, lab, [spec]) as tools:
        tools.elicitor = elicitor
        await refreshed(target, tools)
        entry = found(tools, alias, tool, EXTENSIONS[extension])
        result: Dict[str, Any] = await tools.call(entry.model_name, arguments)
        return result


# -- E6 -------------------------------------------------------------------------

async def tasks(target: Target, lab: Lab) -> str:
    where = point(target, EXTENSIONS["E6"])
    # 1. A task that completes: the client's result is the one the server stored.
    done = await call_one(target, lab, lab.server("tickets"), "tickets", {"format": "json"})
    journal = lab.journal("tickets")
    stored = last_snapshot(journal)
    if stored.get("status") != "completed" or done != stored.get("result"):
        raise Fail(f"expected: the wait ends when tasks/get says completed, with the result inlined there\n"
                   f"journal: {len(journal.requests('tasks/get'))} tasks/get; the last answer said "
                   f"{stored.get('status')!r}\ngot: {json.dumps(done)[:160]}{where}")
    # 2. A task that asks a question first: input_required is not the end.
    async def answer(question: Any) -> Dict[str, Any]:
        return {"action": "accept", "content": {"format": "json"}}
    asked_spec = lab.server("tickets", "asking-tickets")
    asked = await call_one(target, lab, asked_spec, "asking-tickets", {}, elicitor=answer)
    asking = lab.journal("asking-tickets")
    final = last_snapshot(asking)
    waited = any((e.msg.get("result") or {}).get("status") == "input_required" for e in sent(asking))
    if final.get("status") not in ("completed",) or asked != final.get("result"):
        raise Fail(f"expected: input_required means the task waits for an answer; keep polling to the end\n"
                   f"journal: the server said input_required: {waited}; its last state was "
                   f"{final.get('status')!r}\ngot: {json.dumps(asked)[:160]}{where}")
    # 3. A task that fails: an error the model can read, with the server's reason.
    failing = lab.server("tickets", "failing-tickets", task_timeout=FAILED_TASK_LIMIT)
    failed = await call_one(target, lab, failing, "failing-tickets", {"format": "csv", "queue": "archive"})
    reason = ((last_snapshot(lab.journal("failing-tickets")).get("error")) or {}).get("message", "")
    if not failed.get("isError") or not reason or reason not in text(failed):
        raise Fail(f"expected: status failed ends the wait with an isError result naming the server's error\n"
                   f"journal: the task failed with {reason!r}\ngot: {text(failed)[:200]}{where}")
    # 4. The handshake era: asked for with params.task, the result from tasks/result.
    old = lab.server("tickets", "old-tickets", "--era", "legacy")
    legacy = await call_one(target, lab, old, "old-tickets", {"format": "csv"})
    old_journal = lab.journal("old-tickets")
    fetched = old_journal.requests("tasks/result")
    reply = old_journal.reply_to(fetched[-1]) if fetched else None
    stored_old = dict((reply.msg.get("result") or {}) if reply else {})
    stored_old.pop("_meta", None)
    if legacy.get("isError") or text(legacy) != text(stored_old):
        raise Fail(f"expected: in the handshake era the task's result comes from tasks/result\n"
                   f"journal: {len(fetched)} tasks/result\ngot: {text(legacy)[:160]}{where}")
    # 5. A task past its limit is cancelled on the server, and the work stops.
    slow = lab.server("tickets", "slow-tickets", "--task-steps", "400", task_timeout=CANCEL_LIMIT)
    await call_one(target, lab, slow, "slow-tickets", {"format": "csv"})
    slow_journal = lab.journal("slow-tickets")
    stopped = [e for e in slow_journal.entries() if e.kind == "work-stopped"]
    if not slow_journal.requests("tasks/cancel") or not stopped:
        raise Fail(f"expected: a task that outlives its limit ({CANCEL_LIMIT:g} s) is cancelled with tasks/cancel\n"
                   f"journal: {len(slow_journal.requests('tasks/cancel'))} tasks/cancel; the work "
                   f"{'stopped' if stopped else 'never stopped'}{where}")
    polls = len(journal.requests("tasks/get"))
    return (f"completed after {polls} tasks/get with the stored result; a question did not end the wait; "
            f"failed said {reason!r}; the handshake era used tasks/result; a task past its limit was cancelled")


# -- E7 -------------------------------------------------------------------------

async def elicitation(target: Target, lab: Lab) -> str:
    """`set_priority` asks for the priority when none is given: by an
    input_required round in 2026-07-28, by a request of its own in the
    handshake era. No task is involved, so E7 stands apart from E6."""
    where = point(target, EXTENSIONS["E7"])
    module = target.elicitation
    # 1. The form: what the server's schema became, and the answer sent back.
    questions: List[Any] = []

    async def person(question: Any) -> Dict[str, Any]:
        questions.append(question)
        return {"action": "accept", "content": {"priority": "high", "note": "customer waiting"}}
    result = await call_one(target, lab, lab.server("tickets"), "tickets", {"ticket_id": "T-102"},
                            tool="set_priority", elicitor=person, extension="E7")
    calls = lab.journal("tickets").calls("set_priority")
    fields = {f.name: f for f in questions[0].fields} if questions else {}
    form = {name: (f.kind, [v for v, _ in f.options]) for name, f in fields.items()}
    if form != {"priority": ("choice", ["low", "normal", "high"]), "note": ("text", [])} \
            or fields["note"].maximum != 200:
        raise Fail(f"expected: the question becomes a form: priority as a choice of low/normal/high, note as "
                   f"text of at most 200 characters\ngot: {form or 'no form (the question was declined)'}; "
                   f"the client said: {text(result)[:160]}{where}")
    retry = (calls[-1].msg.get("params") or {}) if len(calls) == 2 else {}
    sent_answer = (retry.get("inputResponses") or {}).get("priority")
    if sent_answer != {"action": "accept", "content": {"priority": "high", "note": "customer waiting"}} \
            or "priority high" not in text(result):
        raise Fail(f"expected: the accepted answer goes back in inputResponses on a second tools/call, "
                   f"and the ticket gets it\njournal: {len(calls)} call(s); the answer sent: {sent_answer!r}\n"
                   f"got: {text(result)[:160]}{where}")
    # 2. The handshake era: the server's own elicitation/create request, declined.
    async def decliner(question: Any) -> Dict[str, Any]:
        return {"action": "decline"}
    declined = await call_one(target, lab, lab.server("tickets", "old-tickets", "--era", "legacy"),
                              "old-tickets", {"ticket_id": "T-101"}, tool="set_priority", elicitor=decliner,
                              extension="E7")
    old = lab.journal("old-tickets")
    asks = [e.msg.get("id") for e in sent(old, "elicitation/create")]
    replies = [e.msg.get("result") for e in old.entries() if e.kind == "in" and "method" not in e.msg
               and e.msg.get("id") in asks]
    if not replies or (replies[0] or {}).get("action") != "decline" or not declined.get("isError"):
        raise Fail(f"expected: a declined question is answered with action decline, and the tool says so\n"
                   f"journal: the server asked {len(asks)} time(s); the client answered {replies!r}{where}")
    # 3. Fields a form cannot show, and one that must not be asked for.
    try:
        module.field_from_schema("where", {"type": "object", "properties": {}}, False)
        raise Fail(f"expected: an object field cannot be shown in a form: raise Unsupported{where}")
    except module.Unsupported:
        pass
    copies = module.field_from_schema("copies", {"type": "integer", "minimum": 1, "maximum": 5}, True)
    token = module.field_from_schema("api_token", {"type": "string", "title": "API token"}, True)
    if (copies.kind, copies.minimum, copies.maximum) != ("integer", 1, 5) or not token.secret:
        raise Fail(f"expected: an integer keeps its bounds (1..5); a field asking for a token is flagged secret\n"
                   f"got: {copies.kind} {copies.minimum}..{copies.maximum}, secret={token.secret}{where}")
    return ("priority became a choice of low/normal/high and note a text field; the answer went back in "
            "inputResponses; a decline in the handshake era was sent as decline; an object field was "
            "refused and a token flagged")
