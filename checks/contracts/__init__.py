"""Each region's duties, written once as clauses, and the judge that holds a
learner's region to them over many inputs, the reference client as oracle.

An item proves a region from one scenario on the wire; a clause proves one
duty over a whole set of inputs chosen for it (null, empty, 0, negative,
non-ASCII digits, NUL, quotes, a trailing newline, very long, the wrong JSON
type). The reference client is the oracle: for every input, the clause
compares what it observes of the learner's function (a return value, an
exception's type, what a fake server received, in words) with what it
observed of the reference's, never an error's wording.

The inputs are drawn once by Hypothesis (`python -m checks.dev.contracts
--write`, from each clause's `inputs` strategy, plus its `edges`) and kept in
`checks/contracts/corpus/` with the reference's observation of each: every
run, on every machine and Hypothesis version, judges the same inputs; the
self-check never imports Hypothesis, and the worker where the code under test
runs never loads the reference (a submission cannot borrow it from there). A
test holds the recorded observations to what the reference does now. A red
clause shows the first telling edge, else the smallest drawn input.

The clauses of a region are also the text the guide shows for it (a test
holds labs/GUIDE.md to `render`), so the duty a learner reads is the duty
the judge checks.
"""

from __future__ import annotations

import inspect
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import anyio

from checks.exercises import EXERCISES, EXTENSIONS
from checks.fixtures import Lab
from checks.harness import Fail, ItemBody, at_line, inside, own_frame
from checks.contracts.clause import LOCATING, Clause, Contract, Raised, Told, comparable, detail, raised
from checks.contracts.ownloop import AsyncioCall, asyncio_calls_made, asyncio_frames, observe_each, trio_missing
from checks.target import Target

CORPUS = Path(__file__).resolve().parent / "corpus"

@lru_cache(maxsize=1)
def contracts() -> Dict[str, Contract]:
    """Every region's contract, by region (imported here: the items import this module)."""
    from checks.contracts import changes, code, extensions, lifecycle, names, offline, remote, tasks, wire
    found: Dict[str, Contract] = {}
    for module in (wire, names, offline, changes, extensions, tasks, code, remote, lifecycle):
        for contract in module.CONTRACTS:
            found[contract.region] = contract
    return found


def corpus_file(region: str) -> Path:
    return CORPUS / f"{region}.json"


@lru_cache(maxsize=None)
def corpus(region: str) -> Dict[str, List[Tuple[Any, str]]]:
    """Clause id -> its inputs, each with what the reference observed on it, as
    written by `checks.dev.contracts --write`. The reference is never loaded
    where the code under test runs: what it does is already known here."""
    try:
        found = json.loads(corpus_file(region).read_text(encoding="utf-8"))
        return {str(clause): [(entry[0], str(entry[1])) for entry in entries] for clause, entries in found.items()}
    except (OSError, ValueError, TypeError, IndexError) as exc:
        raise RuntimeError(f"the contract corpus for {region} is missing or unreadable "
                           f"({corpus_file(region)}): run python -m checks.dev.contracts --write") from exc


async def observe(clause: Clause, package: Target, example: Any, locate: bool = False) -> str:
    """What `clause` sees of `package` on `example`, in words; an exception is an observation
    too. On trio, an asyncio-only call the code made is what is seen, whatever followed it.
    `locate`: with where in the learner's code it happened, when that is known."""
    LOCATING.set(locate)  # in this input's own context: its looks, and the tasks they start
    calls = asyncio_calls_made()
    try:
        seen = clause.look(package, fresh(example))  # a function may change its input
        if inspect.isawaitable(seen):
            seen = await seen
    except (Exception, KeyboardInterrupt) as exc:  # the learner's code may raise anything: that is what we
        seen = raised(exc, package)  # compare (a cancellation of the judge is neither, and goes on)
        came_from = asyncio_frames(exc) if calls is not None else None
        if calls is not None and came_from is not None:
            calls.append(came_from)
    if calls:
        seen = asyncio_only(calls[0], package)
    return text_of(seen)


def asyncio_only(call: AsyncioCall, package: Target) -> Told:
    """An asyncio-only call made on trio, in words, with where the learner's code made it."""
    frames = inside(call.stack, package) if LOCATING.get() else []
    return Told(f"called {call.name}, which works only on asyncio's event loop (on trio there is none; "
                "anyio's own calls work on both: anyio.fail_after, anyio.sleep, a task group)",
                at_line(own_frame(frames), package) if frames else "")


def fresh(example: Any) -> Any:
    """A copy of an input for one look. The inputs are JSON (the corpus is, and
    drawn ones pass through it before they are observed), so a round trip copies
    them exactly, in C; copy.deepcopy calls id() on every object, an audited event
    that the worker's guard hears some 40,000 times a run."""
    return json.loads(json.dumps(example))


def text_of(observation: Any) -> str:
    """An observation as the words it is compared and stored by (never cut)."""
    if isinstance(observation, (Raised, Told)):
        return str(observation)
    return "returned " + json.dumps(observation, sort_keys=True, ensure_ascii=True, default=repr)


async def observe_all(clause: Clause, package: Target, examples: List[Any], locate: bool = False) -> List[str]:
    """`observe` on every input, all at once: an input whose server never answers
    costs its time limit once for the whole clause, not once per input (each
    input has servers of its own). A clause with a loop of its own
    (`Clause.loop`) is judged there, where a time limit costs nothing."""
    if clause.loop != "judge" or clause.backend != "asyncio":
        return await observe_each(lambda example: observe(clause, package, example, locate), examples,
                                  alone=clause.loop == "alone", backend=clause.backend)
    seen: List[str] = [""] * len(examples)

    async def one(index: int) -> None:
        seen[index] = await observe(clause, package, examples[index], locate)

    async with anyio.create_task_group() as group:
        for index in range(len(examples)):
            group.start_soon(one, index)
    return seen


def size(example: Any) -> Tuple[int, str]:
    """Smaller first: by length as JSON, then by text, so the choice never varies."""
    text = json.dumps(example, ensure_ascii=False, sort_keys=True, default=repr)
    return len(text), text


SAID = 220  # characters of an observation a message shows


def said(observation: str, other: str = "") -> str:
    """An observation in at most SAID characters: from where it first differs from
    `other` (a little before) when what comes before that would fill them."""
    if len(observation) <= SAID:
        return observation
    first = next((at for at, (a, b) in enumerate(zip(observation, other)) if a != b), min(len(observation), len(other)))
    start = max(0, first - SAID // 3) if first > SAID * 2 // 3 else 0
    shown = observation[start:start + SAID - 2]
    return ("…" if start else "") + shown + ("…" if start + len(shown) < len(observation) else "")


Counterexample = Tuple[Any, str, str, bool]  # the input, what the target and the reference did, an edge?


def counterexample(clause: Clause, entries: List[Tuple[Any, str]], got: List[str]) -> Optional[Counterexample]:
    """An input on which the target did not do what the reference did, with both
    observations: the first of the clause's edges that tells, else the smallest drawn one."""
    found = [(example, seen, want) for (example, want), seen in zip(entries, got) if comparable(seen) != want]
    if not found:
        return None
    # A chosen edge, in the order the clause lists them (the plainest first), tells
    # more than a drawn input; among drawn ones the smallest is the clearest.
    edges = [json.dumps(e, sort_keys=True) for e in clause.edges]
    listed = [f for f in found if json.dumps(f[0], sort_keys=True) in edges]
    if listed:
        return (*min(listed, key=lambda f: edges.index(json.dumps(f[0], sort_keys=True))), True)
    return (*min(found, key=lambda f: size(f[0])), False)


def where(display: Callable[[str], str], region: str) -> str:
    if region.startswith("E"):
        extension = EXTENSIONS[region]
        return (f"\nedit: {display(extension.file)}, {extension.function} "
                f"(extension {region}: {extension.summary}); read labs/GUIDE.md {extension.guide}")
    exercise = EXERCISES[int(region)]
    return (f"\nedit: {display(exercise.file)}, {exercise.function} "
            f"(exercise {exercise.number}: {exercise.summary})")


Inputs = Dict[str, List[Any]]  # clause id -> its inputs
Seen = Dict[str, List[str]]  # clause id -> what was observed on each of its inputs, in their order


def inputs_of(region: str) -> Inputs:
    """The recorded inputs of every clause of `region`, without what the reference did on them."""
    recorded = corpus(region)
    for clause in contracts()[region].clauses:
        if not recorded.get(clause.id):
            raise RuntimeError(f"the contract corpus has no inputs for clause {clause.id}")
    return {clause: [example for example, _ in entries] for clause, entries in recorded.items()}


async def observations(target: Target, region: str, inputs: Inputs) -> Seen:
    """What `target` does on every input of every clause of `region`. The clauses
    run at once (their servers are their own)."""
    seen: Seen = {}

    async def each(clause: Clause) -> None:
        seen[clause.id] = await observe_all(clause, target, inputs.get(clause.id, []))

    async with anyio.create_task_group() as group:
        for clause in judged(region):
            group.start_soon(each, clause)
    return seen


def judged(region: str) -> List[Clause]:
    """The clauses of `region` judged here: a clause judged on trio is left out where
    trio is not installed (the account says so)."""
    missing = trio_missing()
    return [clause for clause in contracts()[region].clauses if clause.backend != "trio" or missing is None]


def first_red(region: str, seen: Seen) -> Optional[Tuple[Clause, Counterexample]]:
    """The red clause to report, with its input, from what `seen` (observed of a target,
    on the recorded inputs) says against what the reference did on each. A clause one
    of its own edges shows broken is reported before one only a drawn input shows
    broken (drawn inputs wander into other clauses' duties: a reply cut at the wrong
    length shows on a request drawn for E11.2's approvals too, but E11.4's edges are
    chosen to show it); among those, the first in the contract's order, which follows
    the region's own steps, so the message never varies."""
    recorded = corpus(region)
    reds: List[Tuple[Clause, Counterexample]] = []
    for clause in judged(region):
        red = counterexample(clause, recorded[clause.id], seen[clause.id])
        if red is not None:
            reds.append((clause, red))
    return min(reds, key=lambda pair: not pair[1][3]) if reds else None


def red_message(region: str, clause: Clause, red: Counterexample, display: Callable[[str], str],
                again: str = "") -> str:
    """What a red clause says: the duty, the input, both observations, and (from `again`,
    the input observed once more with its place) where in the learner's code it happened."""
    example, got, want, _ = red
    at = f"\n  {detail(again)}" if detail(again) and comparable(again) == comparable(got) else ""
    got = comparable(got)
    return (f"expected: {clause.duty} (clause {clause.id}; {clause.source})\n"
            f"got: on {clause.show(example)}, your {contracts()[region].subject} {said(got, want)}; "
            f"the reference {said(want, got)}{at}{where(display, region)}")


def account(region: str) -> str:
    """What a green contract says: the clauses and inputs judged, and any left out."""
    recorded, judging = corpus(region), judged(region)
    left = [c.id for c in contracts()[region].clauses if c not in judging]
    said = f"{len(judging)} clauses held over {sum(len(recorded[c.id]) for c in judging)} inputs"
    return said + (f" ({', '.join(left)} not judged: {trio_missing()})" if left else "")


def compared(region: str, seen: Seen, display: Callable[[str], str]) -> str:
    """The region held to its contract on what `seen` says (grading mode's runner,
    which has no code to look at again); Fail with the red clause's input.
    `display` shows a file of the target's."""
    red = first_red(region, seen)
    if red is not None:
        raise Fail(red_message(region, red[0], red[1], display))
    return account(region)


def in_full(region: str, seen: Any) -> bool:
    """Whether `seen` holds an observation in words for every recorded input of
    every clause of `region` judged here (what `compared` needs)."""
    recorded = corpus(region)
    return isinstance(seen, dict) and all(
        isinstance(seen.get(clause.id), list) and len(seen[clause.id]) == len(recorded[clause.id])
        and all(isinstance(text, str) for text in seen[clause.id]) for clause in judged(region))


async def hold(target: Target, region: str) -> str:
    """Judge every clause of `region` on `target`; Fail with a red one's input, looked
    at once more to say where in the learner's code it happened (reading every
    traceback's files on every input would cost the run)."""
    seen = await observations(target, region, inputs_of(region))
    red = first_red(region, seen)
    if red is None:
        return account(region)
    clause, found = red
    again = (await observe_all(clause, target, [found[0]], locate=True))[0]
    raise RedClause(red_message(region, clause, found, target.display_path, again), clause)


class RedClause(Fail):
    """A region's contract is broken: the message, and the clause (to name beside a scenario's failure)."""

    def __init__(self, message: str, clause: Clause) -> None:
        super().__init__(message)
        self.clause = clause


def naming_the_clause(failed: Fail, held: Dict[str, Any]) -> Fail:
    """A scenario's failure, with the clause the region's contract found broken named
    before its edit line: the scenario says what the run did, the clause which duty."""
    red = held.get("failed")
    if not isinstance(red, RedClause):
        return failed
    text = str(failed)
    line = f"clause {red.clause.id} is red too: {red.clause.duty}"
    at = text.find("\nedit: ")
    return Fail(f"{text[:at]}\n{line}{text[at:]}" if at >= 0 else f"{text}\n{line}")


def render(region: str) -> str:
    """The clauses as the guide shows them, between its contract markers."""
    contract = contracts()[region]
    # Folded: the clauses are the answer's shape, one step away, so the red items can
    # teach first; a learner opens them when an item stays red.
    lines = [f"<!-- contract {region}: written from checks/contracts by python -m checks.dev.contracts --guide -->",
             f"<details><summary>What the checks hold <code>{contract.subject}</code> to (open it when an item "
             "stays red, or once yours is green)</summary>", "",
             "Each clause is judged over many inputs against the reference; a red one shows the input that "
             "tells them apart.", ""]
    lines += [f"- **{c.id}** {c.duty[0].upper()}{c.duty[1:]}. *({c.source})*" for c in contract.clauses]
    lines += ["", "</details>", f"<!-- /contract {region} -->"]
    return "\n".join(lines)


GUIDE_BLOCK = re.compile(r"<!-- contract (\w+):.*?<!-- /contract \1 -->", re.S)


def guide_blocks(text: str) -> Dict[str, str]:
    """Region -> its contract block as the guide has it."""
    return {m.group(1): m.group(0) for m in GUIDE_BLOCK.finditer(text)}


# Grading mode (checks.grading): the worker is given the inputs and tells the runner
# what it observed on them, and the runner compares; the recorded observations are
# never where the code under test runs. Set once in the worker, before any item runs.
_GIVEN: Dict[str, Inputs] = {}
_TELL: List[Callable[[str, Seen], None]] = []


def observe_for_the_runner(given: Dict[str, Inputs], tell: Callable[[str, Seen], None]) -> None:
    """From now on a contracted item observes its region on `given` inputs and
    hands what it saw to `tell`, instead of comparing it itself."""
    _GIVEN.update(given)
    _TELL[:] = [tell]


def contracted(region: str, scenario: "ItemBody") -> "ItemBody":
    """An item body that judges `scenario` (the wire, from the journals) and the
    region's contract (in memory) at the same time: the scenario's failure is
    told first, since it is what the learner's run did; then the contract's."""
    async def body(target: Target, lab: Lab) -> str:
        held: Dict[str, Any] = {}

        async def contract() -> None:
            if region in _GIVEN:  # grading mode: the runner compares
                _TELL[0](region, await observations(target, region, _GIVEN[region]))
                return
            try:
                held["said"] = await hold(target, region)
            except Fail as failed:
                held["failed"] = failed

        failed: Optional[Fail] = None
        async with anyio.create_task_group() as group:
            group.start_soon(contract)
            try:
                said = await scenario(target, lab)
            except Fail as scenario_failed:  # its verdict stands; the contract, ending, may say which duty
                failed = scenario_failed
            except BaseException:
                group.cancel_scope.cancel()  # the scenario's verdict stands; stop the contract's work
                raise
        if failed is not None:
            raise naming_the_clause(failed, held)
        if "failed" in held:
            raise held["failed"]
        return f"{said}; {held['said']}" if "said" in held else said
    body.__name__ = getattr(scenario, "__name__", "body")
    body.__doc__ = scenario.__doc__
    return body
