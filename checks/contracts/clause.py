"""A clause and a contract: one duty of a region, and all of a region's duties.
The observations a clause compares (a value, `Raised`, `Told`) are defined
here too. Plain data: the regions' modules (wire, names, ...) build on it, and
the judge in `checks.contracts` runs it."""

from __future__ import annotations

import contextvars
import re
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Tuple

from checks.harness import at_line, inside, leaves, own_frame
from checks.target import Target

# What a clause looks at: the package's modules (a Target) and one input, to an
# observation made of plain data (or an awaitable of one).
Look = Callable[[Target, Any], Any]


# What follows this in an observation is shown to the learner but never compared: where in
# their code it happened ("at starter/aggregator.py:201 in connect_one: ..."), which the
# reference, whose lines are others, cannot have alike. No observation holds it otherwise
# (the looks' words come from repr() and json.dumps, which escape control characters).
DETAIL = "\x1e"


def comparable(observation: str) -> str:
    """The part of an observation that is compared with the reference's (and stored)."""
    return observation.split(DETAIL, 1)[0]


def detail(observation: str) -> str:
    """The part shown and not compared: where it happened, or ""."""
    return observation.split(DETAIL, 1)[1] if DETAIL in observation else ""


@dataclass(frozen=True)
class Raised:
    """An exception as an observation: its type's name, never its wording (`at`: where
    in the learner's code it was raised, shown but not compared)."""

    kind: str
    at: str = ""

    def __str__(self) -> str:
        return f"raised {self.kind}" + (f"{DETAIL}at {self.at}" if self.at else "")


LONG_NUMBER = re.compile(r"\d{31,}")


def brief(text: str) -> str:
    """An input as shown, every whole number past 30 digits said by its size (for `Clause.show`)."""
    return LONG_NUMBER.sub(lambda m: f"<a {len(m.group(0))}-digit int>", text)


CANCELLED = ("CancelledError", "Cancelled")  # asyncio's and trio's: the judge's own doing, not the code's
# Whether an observation made now says where in the learner's code it happened: only the input a
# red clause shows is looked at again to say so (reading every traceback's files costs the run).
LOCATING: "contextvars.ContextVar[bool]" = contextvars.ContextVar("locating", default=False)


def raised(exc: BaseException, package: Optional[Target]) -> Raised:
    """`exc` as an observation: the learner's own exception, not the exception group a task
    group wrapped it in, with (when LOCATING) the line of their code it came from."""
    found = [leaf for leaf in leaves(exc) if type(leaf).__name__ not in CANCELLED] or [exc]
    if package is not None and LOCATING.get():
        for leaf in found:
            frames = inside(traceback.extract_tb(leaf.__traceback__), package)
            if frames:
                return Raised(type(leaf).__name__, at_line(own_frame(frames), package))
    return Raised(type(found[0]).__name__)


@dataclass(frozen=True)
class Told:
    """An observation put in words (compared by its words, which are ours; `at`, as Raised's)."""

    text: str
    at: str = ""

    def __str__(self) -> str:
        return self.text + (f"{DETAIL}at {self.at}" if self.at else "")


@dataclass(frozen=True)
class Clause:
    id: str  # "E9.4": the region, then the clause's number in it
    duty: str  # one sentence starting "must" or "must not"
    source: str  # the protocol text or lab rule it comes from; says where the lab decides
    look: Look
    show: Callable[[Any], str] = repr  # an input as the learner should read it
    edges: Tuple[Any, ...] = ()  # inputs always judged, whatever the strategy draws
    inputs: Optional[Callable[[Any], Any]] = None  # hypothesis.strategies -> a strategy of inputs
    count: int = 150  # how many inputs the strategy contributes to the corpus
    raises: Tuple[str, ...] = ()  # exceptions the reference itself raises on some inputs (a test holds it)
    # Where the inputs are judged: "judge", on the judge's own event loop, all at once; "own", all at
    # once on a loop of their own whose clock is virtual (checks/contracts/ownloop.py: time limits met
    # in their turn, a clock that is not time.monotonic()); "alone", each on such a loop by itself
    # (inputs on which a KeyboardInterrupt out of a task ends the loop).
    loop: str = "judge"
    # The event loop it is judged on: "asyncio", or "trio" (anyio's other backend, always on a loop of
    # its own with a virtual clock: ownloop.py), for a region whose duties wait or run things at once.
    backend: str = "asyncio"
    # A region's clauses are judged at once and the first red one in order is
    # reported: list the plainest duty first, so its words are the ones a learner meets.


# The duty of a region judged on trio as well (a clause whose backend is "trio"): `calls`,
# the asyncio-only calls a learner of that region is likely to reach for.
ON_TRIO = ("must do all of this on trio as on asyncio (anyio runs on both, and the lab's client is written "
           "with anyio): no asyncio-only call, such as {calls}; anyio's own work on both (anyio.fail_after, "
           "anyio.sleep, a task group, anyio.current_time())")
TRIO_SOURCE = "lab rule: code written with anyio runs on whichever event loop its caller runs (asyncio or trio)"


@dataclass(frozen=True)
class Contract:
    region: str  # "1".."4" for the exercises, "E1".."E11" for the extensions
    subject: str  # the function the region is in
    clauses: Tuple[Clause, ...] = field(default_factory=tuple)
