"""A clause and a contract: one duty of a region, and all of a region's duties.
The observations a clause compares (a value, `Raised`, `Told`) are defined
here too. Plain data: the regions' modules (wire, names, ...) build on it, and
the judge in `checks.contracts` runs it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Tuple

from checks.target import Target

# What a clause looks at: the package's modules (a Target) and one input, to an
# observation made of plain data (or an awaitable of one).
Look = Callable[[Target, Any], Any]


@dataclass(frozen=True)
class Raised:
    """An exception as an observation: its type's name, never its wording."""

    kind: str

    def __str__(self) -> str:
        return f"raised {self.kind}"


@dataclass(frozen=True)
class Told:
    """An observation put in words (compared by its words, which are ours)."""

    text: str

    def __str__(self) -> str:
        return self.text


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
    # A region's clauses are judged at once and the first red one in order is
    # reported: list the plainest duty first, so its words are the ones a learner meets.


@dataclass(frozen=True)
class Contract:
    region: str  # "1".."4" for the exercises, "E1".."E11" for the extensions
    subject: str  # the function the region is in
    clauses: Tuple[Clause, ...] = field(default_factory=tuple)
