"""Extension items E10 (resources) and E11 (sampling): the rest of a client's lifecycle.

E10 drives two note libraries with their lifecycle tools (`--lifecycle-tools`):
the resources a client lists across pages, a resource link in a tool result
read through the model's `read_resource` tool from the server that offered
it (and from no other), and a list change. E11 drives the ticketing
system's `draft_reply`, which asks the client for a sampling: the person at
a scripted terminal approves (or not) the request and then the reply, and
the server's journal shows what it received.
"""

from __future__ import annotations

import io
import json
from typing import Any, Callable, Dict, List, Tuple

import anyio

from checks.contracts.lifecycle import ASKS, Looped
from checks.exercises import EXTENSIONS
from checks.fixtures import Journal, Lab
from checks.harness import Fail, HarnessError, leaves
from checks.items.evidence import JOURNAL_POLL, aggregator_for, found, point, refreshed, text
from checks.target import Target

READ = "read_resource"
RELIST_WAIT = 10.0  # seconds for the re-list after a change notice: a client re-lists at once


def reads_of(journal: Journal, uri: str) -> List[Any]:
    return [e for e in journal.requests("resources/read") if (e.msg.get("params") or {}).get("uri") == uri]


def listed_pages(journal: Journal) -> Tuple[int, List[str]]:
    """How many resources/list requests the server answered, and the URIs all its answers held."""
    uris: List[str] = []
    requests = journal.requests("resources/list")
    for request in requests:
        reply = journal.reply_to(request)
        for resource in ((reply.msg.get("result") or {}).get("resources") or []) if reply else []:
            if isinstance(resource, dict) and isinstance(resource.get("uri"), str):
                uris.append(resource["uri"])
    return len(requests), uris


async def resources(target: Target, lab: Lab) -> str:
    where = point(target, EXTENSIONS["E10"])
    specs = [lab.server("notes", None, "--lifecycle-tools"), lab.server("notes", "archive", "--lifecycle-tools")]
    async with await aggregator_for(target, lab, specs, reference=True) as tools:
        await refreshed(target, tools)
        notes, archive = lab.journal("notes"), lab.journal("archive")
        # 1. Every page of the resource list.
        listed = [r.get("uri") for r in await tools.listing("notes", "resources/list")]
        pages, sent = listed_pages(notes)
        if listed != sent or pages < 2:
            raise Fail(f"expected: every resource of every page, in order\njournal: notes answered {pages} "
                       f"resources/list with {sent}\ngot: {listed}{where}")
        # 2. A listed URI is read from the server that listed it.
        read = await tools.call(READ, {"uri": "note://n-2"})
        if read.get("isError") or not reads_of(notes, "note://n-2") or reads_of(archive, "note://n-2"):
            raise Fail(f"expected: read_resource for note://n-2, which only notes listed, reads it from notes\n"
                       f"journal: notes received {len(reads_of(notes, 'note://n-2'))} resources/read of it, archive "
                       f"{len(reads_of(archive, 'note://n-2'))}\ngot: {text(read)[:200]}{where}")
        # 3. A resource link in archive's result: now two servers offered note://n-2.
        linked = await tools.call(found(tools, "archive", "link_notes", EXTENSIONS["E10"]).model_name,
                                  {"tag": "timeouts"})
        links = [b.get("uri") for b in linked.get("content") or [] if isinstance(b, dict)
                 and b.get("type") == "resource_link"]
        if "note://n-2" not in links:
            raise HarnessError(f"archive's link_notes gave no link to note://n-2: {json.dumps(linked)[:200]}")
        before = (len(reads_of(notes, "note://n-2")), len(reads_of(archive, "note://n-2")))
        either = await tools.call(READ, {"uri": "note://n-2"})
        after = (len(reads_of(notes, "note://n-2")), len(reads_of(archive, "note://n-2")))
        if not either.get("isError") or after != before:
            raise Fail(f"expected: a URI two servers offered is not read until the model names the server\n"
                       f"journal: resources/read of note://n-2 went to notes {after[0] - before[0]} and archive "
                       f"{after[1] - before[1]} more time(s)\ngot: {text(either)[:200]}{where}")
        chosen = await tools.call(READ, {"uri": "note://n-2", "server": "archive"})
        if chosen.get("isError") or len(reads_of(archive, "note://n-2")) != after[1] + 1 \
                or len(reads_of(notes, "note://n-2")) != after[0]:
            raise Fail(f"expected: with server 'archive' named, the link is read from archive, the server that "
                       f"offered it\ngot: {text(chosen)[:200]}{where}")
        # 4. A URI nobody offered is refused without a request.
        for uri, named in (("file:///etc/passwd", None), ("note://n-3", "tickets"), ("note://n-3", "ARCHIVE")):
            asked = {"uri": uri, **({"server": named} if named else {})}
            refused = await tools.call(READ, asked)
            if not refused.get("isError") or reads_of(notes, uri) or reads_of(archive, uri):
                raise Fail(f"expected: read_resource {json.dumps(asked)} is refused, and nothing is sent: "
                           f"{'no server offered it' if named is None else 'the server named did not offer it'}\n"
                           f"journal: resources/read of {uri}: notes {len(reads_of(notes, uri))}, archive "
                           f"{len(reads_of(archive, uri))}\ngot: {text(refused)[:200]}{where}")
        # 5. A list change: the list is fetched again, and the new note can be read.
        lists = len(notes.requests("resources/list"))
        await tools.call(found(tools, "notes", "add_note", EXTENSIONS["E10"]).model_name,
                         {"title": "Resources", "body": "A link is read from the server that offered it."})
        with anyio.move_on_after(RELIST_WAIT):
            while len(notes.requests("resources/list")) <= lists or "note://n-5" not in tools.offers:
                await anyio.sleep(JOURNAL_POLL)
        announced = [e for e in notes.entries() if e.kind == "out"
                     and e.msg.get("method") == "notifications/resources/list_changed"]
        if not announced:
            raise HarnessError("the notes server did not announce its resource list change")
        fresh = await tools.call(READ, {"uri": "note://n-5", "server": "notes"})
        if fresh.get("isError") or not reads_of(notes, "note://n-5"):
            raise Fail(f"expected: after notes announced a resource list change, the list is fetched again and "
                       f"its new note://n-5 can be read\njournal: {len(notes.requests('resources/list')) - lists} "
                       f"new resources/list\ngot: {text(fresh)[:200]}{where}")
    return (f"{len(listed)} resources over {pages} pages; a listed URI read from its server; a URI two servers "
            "offered read only once the model named one, from that one; unoffered URIs refused unsent; re-listed "
            "after a list change")


class Shown(io.StringIO):
    """The terminal's output, each write recorded as something said."""

    def __init__(self, events: List[Tuple[str, str]]) -> None:
        super().__init__()
        self.events = events

    def write(self, text: str) -> int:
        self.events.append(("said", text))
        return len(text)


class Screen:
    """A terminal the person types on, scripted: what was shown and asked, in order."""

    def __init__(self, target: Target, answers: List[str]) -> None:
        self.events: List[Tuple[str, str]] = []  # ("said" | "asked", text)
        self.answers = list(answers)
        self.terminal = target.module("commands.terminal").Terminal(read=self._read, out=Shown(self.events))

    def _read(self, prompt: str) -> str:
        self.events.append(("asked", prompt))
        if self.looped:
            raise Looped()  # the person is not asked again: a loop that never ends is told as one
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)

    @property
    def looped(self) -> bool:
        return sum(kind == "asked" for kind, _ in self.events) > ASKS

    def said_before(self, words: str, question: int) -> bool:
        """Whether `words` were shown before question number `question` (0-based) was asked."""
        asked = [i for i, (kind, _) in enumerate(self.events) if kind == "asked"]
        if len(asked) <= question:
            return False
        return any(kind == "said" and words in shown for kind, shown in self.events[:asked[question]])


class Writer:
    """A model that answers a sampling with a fixed reply, and counts how often it was asked."""

    name = "scripted-writer"

    def __init__(self, target: Target, reply: str) -> None:
        self.target = target
        self.reply = reply
        self.asked: List[Any] = []

    async def next_turn(self, system: str, tools: Any, messages: Any) -> Any:
        self.asked.append(messages)
        return self.target.module("model").ModelTurn(text=self.reply)


REPLY = "Thanks for the report; the login fix ships on Friday."


def answers_to_sampling(journal: Journal) -> List[Dict[str, Any]]:
    """What the client sent back for each sampling/createMessage the server asked (handshake era),
    or, in 2026-07-28, what the retried call carried in its inputResponses."""
    asked = {e.msg.get("id") for e in journal.entries() if e.kind == "out"
             and e.msg.get("method") == "sampling/createMessage"}
    answered: List[Dict[str, Any]] = [e.msg for e in journal.entries() if e.kind == "in" and "method" not in e.msg
                                    and e.msg.get("id") in asked]
    for call in journal.calls("draft_reply"):
        responses = (call.msg.get("params") or {}).get("inputResponses")
        if isinstance(responses, dict):
            answered += [r for r in responses.values() if isinstance(r, dict)]
    return answered


def reached(answer: Dict[str, Any]) -> str:
    """The reply text a server received in one answer, "" for a refusal."""
    result = answer.get("result", answer)
    content = result.get("content") if isinstance(result, dict) else None
    return str(content.get("text", "")) if isinstance(content, dict) else ""


async def sampling(target: Target, lab: Lab) -> str:
    where = point(target, EXTENSIONS["E11"])
    told: List[str] = []
    cases: List[Tuple[str, List[str], Callable[[Screen, Writer, List[Dict[str, Any]]], str]]] = [
        ("legacy", ["y", "yes"], approved_twice), ("current", ["y", "n"], reply_declined),
        ("current", ["n"], request_declined), ("legacy", [], no_answer)]
    for index, (era, answers, judge) in enumerate(cases):
        alias = f"tickets-{index + 1}"
        spec = lab.server("tickets", alias, "--lifecycle-tools", *(["--era", "legacy"] if era == "legacy" else []))
        screen, writer = Screen(target, answers), Writer(target, REPLY)
        try:
            async with await aggregator_for(target, lab, [spec], reference=True) as tools:
                tools.sampler = target.module("sampler").TerminalSampler(writer, screen.terminal)
                await refreshed(target, tools)
                result = await tools.call(found(tools, alias, "draft_reply", EXTENSIONS["E11"]).model_name,
                                          {"ticket_id": "T-101"})
        except BaseException as exc:
            if not any(isinstance(leaf, Looped) for leaf in leaves(exc)):
                raise
        if screen.looped:
            raise Fail(f"expected: one question, one answer: an empty answer or the end of input is a no (clause "
                       f"E11.2)\ngot: the person was asked {ASKS} times for one sampling request and would have "
                       f"been asked again: a loop that never ends\n(era {era}; the person typed "
                       f"{answers or 'nothing (end of input)'}){where}")
        problem = judge(screen, writer, answers_to_sampling(lab.journal(alias)))
        if problem:
            raise Fail(f"{problem}\n(era {era}; the person typed {answers or 'nothing (end of input)'}; the call "
                       f"returned {text(result)[:160]!r}){where}")
        told.append(f"{answers or 'no answer'}: {'reply sent' if reached_any(lab.journal(alias)) else 'declined'}")
    return "sampling " + "; ".join(told)


def reached_any(journal: Journal) -> bool:
    return any(REPLY in reached(a) for a in answers_to_sampling(journal))


def approved_twice(screen: Screen, writer: Writer, answers: List[Dict[str, Any]]) -> str:
    if len(writer.asked) != 1:
        return f"expected: approved, the request goes to the model once\ngot: the model was asked {len(writer.asked)} time(s)"
    if not screen.said_before("T-101", 0):
        return "expected: the server's messages are shown before the first question\ngot: they were not"
    if not screen.said_before(REPLY, 1):
        return "expected: the model's reply is shown before the person is asked to send it\ngot: it was not"
    if not any(REPLY in reached(a) for a in answers):
        return (f"expected: with both approvals the server receives the model's reply\n"
                f"journal: the server received {json.dumps(answers)[:200]}")
    return ""


def reply_declined(screen: Screen, writer: Writer, answers: List[Dict[str, Any]]) -> str:
    if not screen.said_before(REPLY, 1):
        return "expected: the model's reply is shown before the person is asked to send it\ngot: it was not"
    if any(REPLY in reached(a) for a in answers):
        return ("expected: the reply the person declined to send never reaches the server\n"
                f"journal: the server received {json.dumps(answers)[:200]}")
    return ""


def request_declined(screen: Screen, writer: Writer, answers: List[Dict[str, Any]]) -> str:
    if writer.asked:
        return "expected: a request the person declined never reaches the model\ngot: the model was asked"
    if any(reached(a) for a in answers):
        return f"expected: the server hears a refusal\njournal: it received {json.dumps(answers)[:200]}"
    return ""


def no_answer(screen: Screen, writer: Writer, answers: List[Dict[str, Any]]) -> str:
    if writer.asked:
        return ("expected: with no answer (the end of input) the request is declined, and the model never "
                "asked\ngot: the model was asked")
    return request_declined(screen, writer, answers)
