"""What the worker said, taken by type (no I/O here): the runner's `Outcome`
of a run, folded event by event from the worker's channel (`Account`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from checks.harness import Verdict, verdict_from_json


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
    observed: Dict[str, Any] = field(default_factory=dict)  # grading mode: region -> what the worker observed


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
        self.done = False

    def apply(self, event: Event) -> Optional[str]:
        """Take one event; its kind when it was applied, None when it was not."""
        kind, outcome, number = event.get("event"), self.outcome, whole(event.get("number"))
        if kind == "start":
            outcome.model, outcome.display = str(event.get("model")), str(event.get("display"))
        elif kind == "begin" and number is not None:
            self.running.append(number)
        elif kind == "end" and number is not None and number in self.running:
            self.running.remove(number)
        elif kind == "verdict":
            return self.judged(event)
        elif kind == "observed" and isinstance(event.get("region"), str):
            outcome.observed.setdefault(str(event["region"]), event.get("seen"))  # taken as sent: checked when compared
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
        """A verdict, taken when the runner can read it and it is for an item it
        asked for."""
        verdict = verdict_from_json(event.get("verdict"))
        if verdict is None or verdict.number not in self.asked:
            self.outcome.problems.append("the worker sent a verdict the runner could not read, or for an item "
                                         "it was not asked to judge; it was not counted")
            return None
        verdict.hung = event.get("hung") is True
        self.outcome.verdicts.append(verdict)
        return "verdict"

    def printed(self, label: str, text: str) -> None:
        if label.isdigit():
            self.outcome.outputs[int(label)] = self.outcome.outputs.get(int(label), "") + text
        else:
            self.outcome.outside += text


def whole(value: Any) -> Optional[int]:
    """`value` if it is an int (a bool is not), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
