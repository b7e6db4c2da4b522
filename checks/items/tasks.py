"""Extension items E6 (tasks) and E7 (elicitation): long work, and questions back.

Both drive the tickets fixture's `export_tickets`, which runs only as a task
(in both eras) and asks which format to use when it is not given one. What
the client returned is held against the server's journal: the result the
server stored, the `tasks/*` requests it received, the answers that reached it.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

import anyio

from checks.exercises import EXTENSIONS
from checks.fixtures import Journal, Lab
from checks.harness import Fail
from checks.items.evidence import JOURNAL_POLL, aggregator_for, found, point, refreshed, sent, text
from checks.target import Target


EXPORT = "export_tickets"


# A failing task fails at once: a client that keeps polling it is stopped by
# this limit, far above the fraction of a second the right path takes.
FAILED_TASK_LIMIT = 5.0


# A task of 400 steps (20 s of work) under a 1 s limit: every client reaches
# the limit, and the item looks at what it did then.
CANCEL_LIMIT = 1.0


def last_snapshot(journal: Journal) -> Dict[str, Any]:
    """The last task state the server sent in reply to a tasks/get."""
    gets = {e.msg.get("id") for e in journal.requests("tasks/get")}
    replies = [e.msg.get("result") or {} for e in journal.entries()
               if e.kind == "out" and e.msg.get("id") in gets and "result" in e.msg]
    return dict(replies[-1]) if replies else {}


async def call_one(target: Target, lab: Lab, spec: Any, alias: str, arguments: Dict[str, Any], *,
                   tool: str = EXPORT, elicitor: Any = None, extension: str = "E6") -> Dict[str, Any]:
    """Call one tool of a server alone in its table (so no exercise 3 is needed)."""
    async with await aggregator_for(target, lab, [spec], reference=True) as tools:
        tools.elicitor = elicitor
        await refreshed(target, tools)
        entry = found(tools, alias, tool, EXTENSIONS[extension])
        result: Dict[str, Any] = await tools.call(entry.model_name, arguments)
        return result
TERMINAL = ("completed", "failed", "cancelled")


def polled_after_the_end(journal: Journal) -> Optional[Tuple[str, str]]:
    """The account of a tasks/get the server received after its answer to an
    earlier tasks/get said the task had ended, or None. Judged by the journal's
    own order: the server records its reply before the bytes leave."""
    entries = journal.entries()
    gets = {e.msg.get("id") for e in entries if e.kind == "in" and e.msg.get("method") == "tasks/get"}
    for index, entry in enumerate(entries):
        status = (entry.msg.get("result") or {}).get("status")
        if entry.kind == "out" and entry.msg.get("id") in gets and status in TERMINAL:
            later = [e for e in entries[index + 1:] if e.kind == "in" and e.msg.get("method") == "tasks/get"]
            if later:
                return status, (f"the server answered tasks/get with status {status} "
                                f"({str((entry.msg.get('result') or {}).get('statusMessage') or '')[:80]!r}), "
                                f"and the client asked tasks/get again")
    return None


async def call_until_ended(target: Target, lab: Lab, spec: Any, alias: str, journal: Journal,
                           arguments: Dict[str, Any], elicitor: Any = None) -> Dict[str, Any]:
    """`call_one` for a task: a client that polls on after the server said it
    ended (in `journal`, that server's) is stopped at its next poll and red,
    instead of being waited for until its task limit."""
    outcome: Dict[str, Any] = {}

    async def call() -> None:
        outcome["result"] = await call_one(target, lab, spec, alias, arguments, elicitor=elicitor)
        group.cancel_scope.cancel()

    async def watch() -> None:
        while True:
            late = polled_after_the_end(journal)
            if late is not None:
                outcome["late"] = late
                group.cancel_scope.cancel()
                return
            await anyio.sleep(JOURNAL_POLL)

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        group.start_soon(watch)
    if "late" in outcome:
        status, account = outcome["late"]
        raise Fail(f"expected: status {status} ends the wait (completed, failed and cancelled are final)\n"
                   f"journal: {account}\ngot: the wait went on past the end"
                   f"{point(target, EXTENSIONS['E6'])}")
    result: Dict[str, Any] = outcome["result"]
    return result


class Runs:
    """Calls to servers that are each alone in their own table, started at once
    and judged one by one in the order they were added: none waits on another,
    so the item takes as long as its longest call, not their sum. What a call
    raised is raised where it is judged, so the first broken duty is told first."""

    def __init__(self) -> None:
        self._calls: Dict[str, Callable[[], Awaitable[Dict[str, Any]]]] = {}
        self._done: Dict[str, Dict[str, Any]] = {}
        self._raised: Dict[str, Exception] = {}

    def add(self, key: str, call: Callable[[], Awaitable[Dict[str, Any]]]) -> None:
        self._calls[key] = call

    async def run(self) -> None:
        async def one(key: str) -> None:
            try:
                self._done[key] = await self._calls[key]()
            except Exception as raised:  # noqa: BLE001 - kept for its turn; cancellation is not caught
                self._raised[key] = raised

        async with anyio.create_task_group() as group:
            for key in self._calls:
                group.start_soon(one, key)

    def __getitem__(self, key: str) -> Dict[str, Any]:
        if key in self._raised:
            raise self._raised[key]
        return self._done[key]


async def tasks(target: Target, lab: Lab) -> str:
    where = point(target, EXTENSIONS["E6"])

    async def answer(question: Any) -> Dict[str, Any]:
        return {"action": "accept", "content": {"format": "json"}}

    runs = Runs()

    def until_ended(key: str, spec: Any, alias: str, arguments: Dict[str, Any], elicitor: Any = None) -> None:
        journal = lab.journals[-1]  # the one `lab.server` has just made for `spec`
        runs.add(key, lambda: call_until_ended(target, lab, spec, alias, journal, arguments, elicitor))

    # 1. A task that completes: the client's result is the one the server stored.
    until_ended("done", lab.server("tickets"), "tickets", {"format": "json"})
    # 2. A task that asks a question first: input_required is not the end.
    until_ended("asked", lab.server("tickets", "asking-tickets"), "asking-tickets", {}, answer)
    # 3. A task that fails: an error the model can read, with the server's reason.
    until_ended("failed", lab.server("tickets", "failing-tickets", task_timeout=FAILED_TASK_LIMIT),
                "failing-tickets", {"format": "csv", "queue": "archive"})
    # 3a. A task that fails with only a status message (no error object): the message is the reason.
    until_ended("lapsed", lab.server("tickets", "lapsing-tickets", task_timeout=FAILED_TASK_LIMIT),
                "lapsing-tickets", {"format": "csv", "queue": "lapsed"})
    # 3b. A task the server calls off: cancelled ends the wait too, though nobody asked.
    until_ended("withdrawn", lab.server("tickets", "withdrawn-tickets", task_timeout=FAILED_TASK_LIMIT),
                "withdrawn-tickets", {"format": "csv", "queue": "retired"})
    # 4. The handshake era: asked for with params.task, the result from tasks/result.
    old = lab.server("tickets", "old-tickets", "--era", "legacy")
    runs.add("legacy", lambda: call_one(target, lab, old, "old-tickets", {"format": "csv"}))
    # 5. A task past its limit is cancelled on the server, and the work stops.
    slow = lab.server("tickets", "slow-tickets", "--task-steps", "400", task_timeout=CANCEL_LIMIT)
    runs.add("slow", lambda: call_one(target, lab, slow, "slow-tickets", {"format": "csv"}))
    await runs.run()

    done = runs["done"]
    journal = lab.journal("tickets")
    stored = last_snapshot(journal)
    if stored.get("status") != "completed" or done != stored.get("result"):
        raise Fail(f"expected: the wait ends when tasks/get says completed, with the result inlined there\n"
                   f"journal: {len(journal.requests('tasks/get'))} tasks/get; the last answer said "
                   f"{stored.get('status')!r}\ngot: {json.dumps(done)[:160]}{where}")
    asked = runs["asked"]
    asking = lab.journal("asking-tickets")
    final = last_snapshot(asking)
    waited = any((e.msg.get("result") or {}).get("status") == "input_required" for e in sent(asking))
    if final.get("status") not in ("completed",) or asked != final.get("result"):
        raise Fail(f"expected: input_required means the task waits for an answer; keep polling to the end\n"
                   f"journal: the server said input_required: {waited}; its last state was "
                   f"{final.get('status')!r}\ngot: {json.dumps(asked)[:160]}{where}")
    failed = runs["failed"]
    error = (last_snapshot(lab.journal("failing-tickets")).get("error")) or {}
    reason, code = str(error.get("message", "")), str(error.get("code", ""))
    if not failed.get("isError") or not reason or reason not in text(failed) or code not in text(failed):
        raise Fail(f"expected: status failed ends the wait with an isError result naming the server's error, "
                   f"its code and message\njournal: the task failed with error {code} {reason!r}\n"
                   f"got: {text(failed)[:200]}{where}")
    lapsed = runs["lapsed"]
    dropped = str(last_snapshot(lab.journal("lapsing-tickets")).get("statusMessage") or "")
    if not lapsed.get("isError") or not dropped or dropped not in text(lapsed):
        raise Fail(f"expected: a failed task without an error object still ends the wait, with its status "
                   f"message as the reason\njournal: the task failed with no error and the message {dropped!r}\n"
                   f"got: {text(lapsed)[:200]}{where}")
    withdrawn = runs["withdrawn"]
    said = str(last_snapshot(lab.journal("withdrawn-tickets")).get("statusMessage") or "")
    if not withdrawn.get("isError") or not said or said not in text(withdrawn) \
            or "cancel" not in text(withdrawn).replace(said, "").lower():
        raise Fail(f"expected: status cancelled (the server called the task off) ends the wait with an isError "
                   f"result that says so, with the server's message\njournal: the task was cancelled by the "
                   f"server: {said!r}\ngot: {text(withdrawn)[:200]}{where}")
    legacy = runs["legacy"]
    old_journal = lab.journal("old-tickets")
    fetched = old_journal.requests("tasks/result")
    reply = old_journal.reply_to(fetched[-1]) if fetched else None
    stored_old = dict((reply.msg.get("result") or {}) if reply else {})
    stored_old.pop("_meta", None)
    if not fetched or not text(stored_old) or legacy.get("isError") or \
            legacy.get("content") != stored_old.get("content"):
        raise Fail(f"expected: in the handshake era the task's result comes from tasks/result, exactly as "
                   f"the server stored it\njournal: {len(fetched)} tasks/result"
                   f"{f'; the server answered {text(stored_old)[:100]!r}' if reply else ''}\n"
                   f"got: {json.dumps(legacy)[:160]}{where}")
    runs["slow"]
    slow_journal = lab.journal("slow-tickets")
    stopped = [e for e in slow_journal.entries() if e.kind == "work-stopped"]
    if not slow_journal.requests("tasks/cancel") or not stopped:
        raise Fail(f"expected: a task that outlives its limit ({CANCEL_LIMIT:g} s) is cancelled with tasks/cancel\n"
                   f"journal: {len(slow_journal.requests('tasks/cancel'))} tasks/cancel; the work "
                   f"{'stopped' if stopped else 'never stopped'}{where}")
    polls = len(journal.requests("tasks/get"))
    return (f"completed after {polls} tasks/get with the stored result; a question did not end the wait; "
            f"failed said {reason!r}; a task the server cancelled said so; the handshake era's result came "
            f"from tasks/result ({len(fetched)} request); a task past its limit was cancelled")


# A server's property schemas (parsed from JSON, as they arrive) and the field each must become:
# (kind, options, minimum, maximum, title, description, format, secret), or None for Unsupported.
FIELDS: Dict[str, Tuple[str, Optional[Tuple[Any, ...]]]] = {
    "copies": ('{"type": "integer", "title": "Copies", "description": "How many to print", "minimum": 1, '
               '"maximum": 5}', ("integer", [], 1, 5, "Copies", "How many to print", "", False)),
    "ratio": ('{"type": "number", "minimum": 0.5}', ("number", [], 0.5, None, "ratio", "", "", False)),
    "notify": ('{"type": "boolean", "title": "Notify the owner"}',
               ("boolean", [], None, None, "Notify the owner", "", "", False)),
    "labels": ('{"type": "array", "items": {"type": "string", "enum": ["bug", "ui"]}}',
               ("choices", ["bug", "ui"], None, None, "labels", "", "", False)),
    "contact": ('{"type": "string", "format": "email", "maxLength": 80}',
                ("text", [], None, 80, "contact", "", "email", False)),
    "api_token": ('{"type": "string", "title": "API token"}', ("text", [], None, None, "API token", "", "", True)),
    "where": ('{"type": "object", "properties": {}}', None),
    "untyped": ('{"description": "anything at all"}', None),
    "link": ('{"type": "url"}', None),
    "phone": ('{"type": "string", "format": "phone"}', None),
    "tags": ('{"type": "array", "items": {"type": "string"}}', None),
}


def field_problem(module: Any) -> Optional[str]:
    """The first property in FIELDS that does not become its field, said plainly."""
    for name, (schema, wanted) in FIELDS.items():
        try:
            made = module.field_from_schema(name, json.loads(schema), False)
        except module.Unsupported:
            if wanted is not None:
                return f"{name} {schema} was refused as Unsupported"
            continue
        if wanted is None:
            return f"{name} {schema} became a {made.kind!r} field; a form cannot show it (raise Unsupported)"
        got = (made.kind, [v for v, _ in made.options], made.minimum, made.maximum, made.title,
               made.description, made.format, made.secret)
        if got != wanted:
            fields = ("kind", "options", "minimum", "maximum", "title", "description", "format", "secret")
            wrong = [f"{f} {g!r} (want {w!r})" for f, g, w in zip(fields, got, wanted) if g != w]
            return f"{name} {schema} became a field with {', '.join(wrong)}"
    return None


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
            or fields["note"].maximum != 200 or fields["priority"].title != "Priority":
        got = {name: (*kinds, fields[name].title, fields[name].maximum) for name, kinds in form.items()}
        raise Fail(f"expected: the question becomes a form: priority as a choice of low/normal/high (titled "
                   f"'Priority'), note as text of at most 200 characters\ngot (kind, options, title, maximum): "
                   f"{got or 'no form (the question was declined)'}; "
                   f"the client said: {text(result)[:160]}{where}")
    retry = (calls[-1].msg.get("params") or {}) if len(calls) == 2 else {}
    sent_answer = (retry.get("inputResponses") or {}).get("priority")
    if sent_answer != {"action": "accept", "content": {"priority": "high", "note": "customer waiting"}} \
            or "priority high" not in text(result):
        raise Fail(f"expected: the accepted answer goes back in inputResponses on a second tools/call, "
                   f"and the ticket gets it\njournal: {len(calls)} call(s); the answer sent: {sent_answer!r}\n"
                   f"got: {text(result)[:160]}{where}")
    # 2. The handshake era: the server's own elicitation/create request, declined.
    shown_to_person: List[Any] = []

    async def decliner(question: Any) -> Dict[str, Any]:
        shown_to_person.append(question)  # the person saw the form, and said no
        return {"action": "decline"}
    declined = await call_one(target, lab, lab.server("tickets", "old-tickets", "--era", "legacy"),
                              "old-tickets", {"ticket_id": "T-101"}, tool="set_priority", elicitor=decliner,
                              extension="E7")
    old = lab.journal("old-tickets")
    asks = [e.msg.get("id") for e in sent(old, "elicitation/create")]
    replies = [e.msg.get("result") for e in old.entries() if e.kind == "in" and "method" not in e.msg
               and e.msg.get("id") in asks]
    if not replies or (replies[0] or {}).get("action") != "decline" or not declined.get("isError") \
            or len(shown_to_person) != len(asks):
        raise Fail(f"expected: the server's question is put to the person (the elicitor); their decline is "
                   f"answered with action decline, and the tool says so\njournal: the server asked "
                   f"{len(asks)} time(s); the client answered {replies!r}\ngot: the person was asked "
                   f"{len(shown_to_person)} time(s){where}")
    # 3. Fields as a server's JSON would bring them: kinds, bounds, words; what a form cannot show; secrets.
    problem = field_problem(module)
    if problem:
        raise Fail(f"expected: each requested property becomes the field its schema says, or raises "
                   f"Unsupported when a form cannot show it\ngot: {problem}{where}")
    return (f"priority became a choice of low/normal/high and note a text field; the answer went back in "
            f"inputResponses; a decline in the handshake era was put to the person and sent as decline; "
            f"{len(FIELDS)} property schemas became their fields or were refused, a token flagged")
