"""What the worker said, taken by type and judged by order (no I/O here): the
runner's `Outcome` of a run, folded event by event from the worker's channel
(`Account`), and the last word on a pass, which counts only when the
servers' own accounts show what it rests on (`proven`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set

from checks.accounts import HeldJournal
from checks.harness import Verdict, verdict_from_json
from checks.items import by_number


@dataclass
class Outcome:
    verdicts: List[Verdict] = field(default_factory=list)
    outputs: Dict[int, str] = field(default_factory=dict)  # item number -> what its code printed
    model: str = ""
    display: str = ""
    load_error: Optional[str] = None
    problems: List[str] = field(default_factory=list)  # how the run went wrong; any means exit 2
    killed: List[str] = field(default_factory=list)
    outside: str = ""  # printed outside any item (at import, by threads, straight to the fd)


Event = Dict[str, Any]


def event_of(line: bytes) -> Optional[Event]:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


class Account:
    """What the worker has said so far, folded event by event (no I/O here).
    Every event is taken by type: a field of the wrong type leaves the event
    unapplied, and a verdict the runner cannot read is not counted."""

    def __init__(self, asked: Sequence[int] = ()) -> None:
        self.outcome = Outcome()
        self.asked = set(asked)  # the items the worker was asked to judge
        self.running: List[int] = []
        self.ended: Set[int] = set()
        self.done = False
        self.tampered = False  # the worker found the judge changed: no pass of this run counts

    def apply(self, event: Event) -> Optional[str]:
        """Take one event; its kind when it was applied, None when it was not."""
        kind, outcome, number = event.get("event"), self.outcome, whole(event.get("number"))
        if kind == "start":
            outcome.model, outcome.display = str(event.get("model")), str(event.get("display"))
        elif kind == "begin" and number is not None:
            self.running.append(number)
        elif kind == "end" and number is not None and number in self.running:
            self.running.remove(number)
            self.ended.add(number)
        elif kind == "verdict":
            return self.judged(event)
        elif kind == "tampered":
            found = event.get("found")
            self.changed([str(what) for what in found] if isinstance(found, list) else [str(found)])
        elif kind == "load-error":
            outcome.load_error = str(event.get("message"))
        elif kind == "print":
            self.printed(str(event.get("label")), str(event.get("text")))
        elif kind == "crash":
            outcome.problems.append("the runner's worker failed: " + str(event.get("message")))
        elif kind == "done":
            self.done = True
            threads = event.get("threads")
            outcome.problems += [f"a thread was still running when the items were done: {t}"
                                 for t in (threads if isinstance(threads, list) else [])]
        else:
            return None
        return str(kind)

    def judged(self, event: Event) -> Optional[str]:
        """A verdict, taken only in the order an honest worker sends one: once per
        item asked for, after that item ran. Anything else is something other
        than the judge writing on the channel, and counts no pass."""
        verdict, problems = verdict_from_json(event.get("verdict")), self.outcome.problems
        if verdict is None or verdict.number not in self.asked:
            problems.append("the worker sent a verdict the runner could not read, or for an item it was not "
                            "asked to judge; it was not counted")
            return None
        earlier = [v for v in self.outcome.verdicts if v.number == verdict.number]
        if earlier:
            problems.append(f"two verdicts came for item {verdict.number}: something other than the judge writes "
                            "on the worker's channel")
            uncounted(earlier[0], "the runner was sent two verdicts for this item")
            return None
        verdict.hung = event.get("hung") is True
        if verdict.number not in self.ended:
            problems.append(f"a verdict for item {verdict.number} came before the item had run")
            uncounted(verdict, "it came before the item had run")
        if self.tampered:
            uncounted(verdict, "the code under test tampered with the judging during this run")
        self.outcome.verdicts.append(verdict)
        return "verdict"

    def changed(self, found: List[str]) -> None:
        """The worker found the judge changed: said, and no pass of the run counts."""
        self.tampered = True
        self.outcome.problems += [f"the code under test tampered with the judging: {what}" for what in found]
        for verdict in self.outcome.verdicts:
            uncounted(verdict, "the code under test tampered with the judging during this run")

    def printed(self, label: str, text: str) -> None:
        if label.isdigit():
            self.outcome.outputs[int(label)] = self.outcome.outputs.get(int(label), "") + text
        else:
            self.outcome.outside += text


def uncounted(verdict: Verdict, why: str) -> None:
    """A pass that does not count: ERROR, saying why (a fail or an error stays)."""
    if verdict.status == "pass":
        verdict.status, verdict.message = "error", f"not counted: {why}"


def whole(value: Any) -> Optional[int]:
    """`value` if it is an int (a bool is not), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def proven(verdict: Verdict, journals: Sequence[HeldJournal]) -> None:
    """A pass counts only when its servers' accounts, as the runner received
    them (`journals`), show what the pass rests on (the item's proof,
    checks.items.proofs); otherwise it is ERROR, saying what they do not show."""
    if verdict.status != "pass":
        return
    item = by_number(verdict.number)
    if item is None:
        missing = ["an item by that number"]
    elif not journals:
        missing = ["any of the item's servers: none sent the runner its account"]
    elif any(j.account.cut for j in journals):
        missing = ["all of the conversation: an account ran past what the runner keeps"]
    else:
        missing = item.proof(journals) if item.proof is not None else []
    if missing:
        verdict.status = "error"
        verdict.message = ("not counted: the worker said pass, but the servers' own accounts, sent to the runner, "
                           "do not show " + "; ".join(missing))
