"""Running one item: a fresh event loop on its own thread, a deadline, and
every way an item can end mapped to a verdict in one place.

An item runs on a worker thread so that learner code which blocks the event
loop (a `time.sleep`, an endless loop) cannot hang the runner: the main
thread waits with a deadline and reports what happened.
"""

from __future__ import annotations

import contextvars
import math
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple

import anyio

from checks.exercises import Exercise, learners_lines
from checks.fixtures import CannotJudgeHere as CannotJudgeHere
from checks.fixtures import HarnessError as HarnessError  # defined with the fixtures, which raise it too
from checks.fixtures import Journal, Lab, repeated_request
from checks.hybrid import Hybrids
from checks.target import Target
from checks.trace import trace_lines, wire_events, wire_row

ITEM_LIMIT = 20.0  # seconds an item may take: the slowest needs about one; only a wrong path waits longer
FLOOR = 1.0  # the least --limit an item is judged under: below it a busy machine could fail right code
BLOCKED_GRACE = 2.0  # more seconds before the event loop is declared blocked
# The threads an item's clauses run their own event loops on (checks.contracts.ownloop):
# where its time ran out, one of them may be inside a blocking call of the learner's.
OWN_LOOP_THREADS: "contextvars.ContextVar[Optional[List[threading.Thread]]]" = \
    contextvars.ContextVar("own_loop_threads", default=None)
TICK = 0.1  # how often a running item's progress may be shown
PARALLEL = 3  # items judged at once: most of an item's time is spent waiting on servers


STATUSES = ("pass", "fail", "error")  # "error": could not judge


def longest(limit: float) -> float:
    """The most an item judged under `limit` takes, however it ends: its limit, the
    grace before a loop that stopped turning is called blocked, and, for a loop that
    still turns past its limit (an item ending on a busy machine), half a limit more."""
    return limit + BLOCKED_GRACE + max(BLOCKED_GRACE, limit / 2)


class Fail(Exception):
    """The item's claim does not hold; the message says expected vs actual."""


@dataclass
class Where:
    file: str
    function: str
    exercise: Optional[int]


@dataclass
class Verdict:
    number: int
    id: str
    title: str
    status: str  # "pass", "fail" or "error" (could not judge)
    duration: float
    message: str
    where: Optional[Where] = None
    hung: bool = field(default=False, repr=False)
    trace: List[str] = field(default_factory=list, repr=False)  # the wire, from the journals
    wire: List[Dict[str, Any]] = field(default_factory=list, repr=False)  # the same, for drawing (--html)

    def to_json(self, with_trace: bool = False, with_wire: bool = False) -> Dict[str, Any]:
        # Field by field, not asdict: that deep-copies every row of the wire.
        data: Dict[str, Any] = {"number": self.number, "id": self.id, "title": self.title, "status": self.status,
                                "duration": round(self.duration, 3), "message": self.message,
                                "where": asdict(self.where) if self.where is not None else None}
        if with_trace:
            data["trace"] = self.trace
        if with_wire:
            data["wire"] = self.wire
        return data


def verdict_from_json(data: Any) -> Optional[Verdict]:
    """A verdict as `to_json` wrote it, taken by type: None when a field the
    report needs is missing or of the wrong type; a malformed `where` is
    dropped, and so is every malformed line of the trace and row of the wire.
    It crosses from the worker, where the code under test runs."""
    if not isinstance(data, dict):
        return None
    number, duration, status = data.get("number"), data.get("duration"), data.get("status")
    texts = [data.get(name) for name in ("id", "title", "message")]
    if not isinstance(number, int) or isinstance(number, bool) or status not in STATUSES:
        return None
    if not isinstance(duration, (int, float)) or isinstance(duration, bool) or not math.isfinite(duration):
        return None
    if not all(isinstance(text, str) for text in texts):
        return None
    trace, wire = data.get("trace"), data.get("wire")
    return Verdict(number, str(texts[0]), str(texts[1]), str(status), max(0.0, float(duration)), str(texts[2]),
                   where_from_json(data.get("where")),
                   trace=[line for line in trace if isinstance(line, str)] if isinstance(trace, list) else [],
                   wire=[row for row in map(wire_row, wire if isinstance(wire, list) else []) if row is not None])


def where_from_json(data: Any) -> Optional[Where]:
    if not isinstance(data, dict):
        return None
    file, function, exercise = data.get("file"), data.get("function"), data.get("exercise")
    if not isinstance(file, str) or not isinstance(function, str):
        return None
    return Where(file, function, exercise if isinstance(exercise, int) and not isinstance(exercise, bool) else None)


ItemBody = Callable[[Target, Lab], Awaitable[str]]


@dataclass
class Item:
    number: int
    id: str
    title: str
    body: ItemBody
    where_file: str
    where_function: str
    exercise: Optional[Exercise] = None
    waits: str = ""  # what the item may wait on, shown while it runs
    floor: float = FLOOR  # the least limit under which a correct client always finishes, however busy
    # What a pass needs the servers' own accounts to show (checks.items.proofs), checked by the runner.
    proof: Optional[Callable[[Sequence[Journal]], List[str]]] = None

    def where(self, target: Target) -> Where:
        return Where(target.display_path(self.where_file), self.where_function,
                     self.exercise.number if self.exercise else None)


def last_learner_frame(exc: BaseException, target: Target,
                       prefer: Optional[str] = None) -> Optional[traceback.FrameSummary]:
    """The last frame inside the target package; with `prefer` (the item's own
    file), the last one in that file when there is one: an error the server sent
    is raised in stdio_client.py, but the line that asked for it is the learner's."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if Path(f.filename).resolve().is_relative_to(target.directory)]
    own = [f for f in frames if prefer and Path(f.filename).name == Path(prefer).name]
    return (own or frames)[-1] if frames else None


def frame_file(frame: traceback.FrameSummary, target: Target) -> str:
    return target.display_path(str(Path(frame.filename).resolve().relative_to(target.directory)))


def at_line(frame: traceback.FrameSummary, target: Target) -> str:
    """`file:line in function: code` of a frame inside the target package."""
    relative = str(Path(frame.filename).resolve().relative_to(target.directory))
    line = target.learner_line(relative, frame.lineno or 0)
    return f"{frame_file(frame, target)}:{line} in {frame.name}: {(frame.line or '').strip()}"


def learner_frame(exc: BaseException, target: Target, prefer: Optional[str] = None) -> Optional[str]:
    """`file:line in function: code` of the last frame inside the target package."""
    frame = last_learner_frame(exc, target, prefer)
    return at_line(frame, target) if frame is not None else None


def inside(frames: List[traceback.FrameSummary], target: Target) -> List[traceback.FrameSummary]:
    return [f for f in frames if Path(f.filename).resolve().is_relative_to(target.directory)]


def own_frame(frames: List[traceback.FrameSummary]) -> traceback.FrameSummary:
    """Of a stack's frames inside the target (outermost first), the innermost in a region the
    learner writes, else the innermost: a loop of the learner's that keeps calling the lab's
    page_tools is named at the learner's line, not in page_tools where it happened to be."""
    spans: Dict[str, List[Tuple[int, int]]] = {}
    for frame in reversed(frames):
        if frame.filename not in spans:
            try:
                spans[frame.filename] = learners_lines(Path(frame.filename).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                spans[frame.filename] = []
        if any(first <= (frame.lineno or 0) <= last for first, last in spans[frame.filename]):
            return frame
    return frames[-1]


def blocked_at(thread: threading.Thread, target: Target) -> Optional[str]:
    """`file:line in function: code` where a blocked item's thread is now, in the
    target's code (None when it is elsewhere, or its frame cannot be had)."""
    frame = sys._current_frames().get(thread.ident or -1)
    found = inside(traceback.extract_stack(frame), target) if frame is not None else []
    return at_line(own_frame(found), target) if found else None


def waiting_at(exc: BaseException, target: Target) -> Optional[str]:
    """Where the code under test was when its time ran out: the deepest stack into the
    target among the exceptions the limit's cancellation left (a TimeoutError's context,
    and what the task groups on the way gathered)."""
    deepest: List[traceback.FrameSummary] = []
    seen, pending = set(), [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        frames = inside(traceback.extract_tb(current.__traceback__), target)
        deepest = frames if len(frames) > len(deepest) else deepest
        pending += [e for e in (current.__context__, current.__cause__) if e is not None]
        pending += [e for e in getattr(current, "exceptions", None) or () if isinstance(e, BaseException)]
    return at_line(own_frame(deepest), target) if deepest else None


def leaves(exc: BaseException) -> List[BaseException]:
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, (list, tuple)) and inner:
        return [leaf for child in inner for leaf in leaves(child)]
    return [exc]


def main_cause(exc: BaseException) -> BaseException:
    """Out of a (nested) exception group, the exception that explains the most:
    a check's verdict first, then a harness problem, then anything else."""
    found = leaves(exc)
    for kind in (Fail, HarnessError, SystemExit, KeyboardInterrupt):
        for leaf in found:
            if isinstance(leaf, kind):
                return leaf
    return found[0]


def judge(item: Item, target: Target, outcome: "Dict[str, Any]") -> Verdict:
    """Turn what happened into a verdict. The one place failures are mapped."""
    where = item.where(target)
    duration = float(outcome.get("duration", 0.0))
    exc: Optional[BaseException] = outcome.get("error")
    if exc is not None:
        exc = main_cause(exc)

    def verdict(status: str, message: str) -> Verdict:
        return Verdict(item.number, item.id, item.title, status, duration, message,
                       None if status == "pass" else where, outcome.get("hung", False))

    limit = float(outcome.get("limit", ITEM_LIMIT))
    if outcome.get("hung"):
        at = outcome.get("at")
        return verdict("fail", f"did not finish in {limit + BLOCKED_GRACE:g} s: something blocks "
                               "the event loop (a blocking call such as time.sleep, or a loop that "
                               "never awaits)" + (f"\n  at {at}" if at else ""))
    if exc is None:
        survivors = outcome.get("survivors") or []
        if survivors:
            return verdict("fail", "server process(es) still running after the client closed: "
                                   + ", ".join(survivors))
        return verdict("pass", str(outcome.get("message", "")))
    if isinstance(exc, Fail):
        return verdict("fail", str(exc))
    if isinstance(exc, CannotJudgeHere):  # about the machine or the options: no file to point at
        return Verdict(item.number, item.id, item.title, "error", duration, f"not judged: {exc}", None)
    if isinstance(exc, HarnessError):
        return verdict("error", f"could not judge: {exc}")
    if isinstance(exc, (SystemExit, KeyboardInterrupt)):
        frame = learner_frame(exc, target)
        return verdict("error", f"not judged: the code under test tried to end the process "
                                f"({type(exc).__name__}({exc})){f' at {frame}' if frame else ''}; "
                                "the runner alone decides how a run ends")
    if isinstance(exc, TimeoutError):
        at = waiting_at(exc, target)
        where_it_was = f"\n  at {at}" if at else ""
        # By cause: the servers answered the same request again and again, so nothing was
        # waiting on them; the client kept asking. That is a loop, not a wait.
        looping = repeated_request(outcome.get("journals") or [])
        if looping is not None:
            return verdict("fail", f"did not finish in {limit:g} s: a loop that never ends: it sent the same "
                                   f"{looping.method} request to '{looping.server}' {looping.times:,} times, "
                                   f"and each was answered{where_it_was}")
        blocked = outcome.get("own_loops_at") or []
        if blocked:
            return verdict("fail", f"did not finish in {limit:g} s: something blocks the event loop again and "
                                   "again (a blocking call such as time.sleep, or a loop that never awaits: each "
                                   "input of a clause waits on it)\n  at " + blocked[0])
        return verdict("fail", f"did not finish in {limit:g} s: something waits without a timeout{where_it_was}")
    frame = learner_frame(exc, target, item.where_file)
    text = f"{type(exc).__name__}: {exc}"
    if frame:
        raised = last_learner_frame(exc, target, item.where_file)
        assert raised is not None
        # "look at:" names where it was raised, not the item's usual place.
        where = Where(frame_file(raised, target), raised.name, where.exercise if where else None)
        return verdict("fail", f"your code raised {text}\n  at {frame}")
    return verdict("error", "the check itself failed: " + "".join(
        traceback.format_exception_only(type(exc), exc)).strip())


Tick = Callable[["Item", float, float], None]


Phase = Callable[[Item, str], None]  # told "begin" and "end" as each item starts and is judged


def run_item(item: Item, target: Target, limit: float = ITEM_LIMIT, on_tick: Optional[Tick] = None,
             on_phase: Optional[Phase] = None, with_wire: bool = True) -> Verdict:
    """Run one item on a worker thread; judge it within `limit` (+ grace) seconds.
    `with_wire`: read the journals into the verdict's wire and trace (under the
    runner it draws them itself, from the servers' accounts)."""
    outcome: Dict[str, Any] = {"limit": limit}
    lab = Lab(target, item.number)
    if on_phase is not None:
        on_phase(item, "begin")

    async def beat() -> None:
        # While the item's event loop turns, this says so: past the limit, a loop that
        # still beats is ending the item (closing its servers on a busy machine), not blocked.
        while True:
            outcome["beat"] = time.perf_counter()
            await anyio.sleep(TICK)

    own_loops: List[threading.Thread] = []

    async def body() -> None:
        OWN_LOOP_THREADS.set(own_loops)
        if limit < item.floor:
            raise CannotJudgeHere(f"--limit {limit:g} s is less than this item needs on a correct client "
                                  f"on a busy machine ({item.floor:g} s{f': {item.waits}' if item.waits else ''}); "
                                  f"give it --limit {item.floor:g} or more")
        async with anyio.create_task_group() as beating:
            beating.start_soon(beat)
            try:
                with anyio.fail_after(limit):
                    outcome["message"] = await item.body(target, lab)
            finally:
                beating.cancel_scope.cancel()

    def worker() -> None:
        try:
            anyio.run(body)
        except BaseException as exc:  # every ending is judged, none escapes
            outcome["error"] = exc

    started = time.perf_counter()
    outcome["beat"] = started
    thread = threading.Thread(target=worker, name=f"item-{item.number}", daemon=True)
    thread.start()
    # Blocked: past its limit, an item whose event loop has not turned for BLOCKED_GRACE.
    # One whose loop still turns is ending (every wait in it has a limit of its own) and
    # is given a while longer; only past that is it called blocked whatever it is doing.
    deadline, last = started + limit + BLOCKED_GRACE, started + longest(limit)
    while thread.is_alive():
        now = time.perf_counter()
        if now >= last or (now >= deadline and now - outcome["beat"] >= BLOCKED_GRACE):
            break
        thread.join(TICK)
        if thread.is_alive() and on_tick is not None:
            on_tick(item, time.perf_counter() - started, limit)
    outcome["duration"] = time.perf_counter() - started
    outcome["journals"] = lab.journals  # what the servers saw, for a verdict judged by cause
    if thread.is_alive():
        outcome["hung"] = True
        outcome["at"] = blocked_at(thread, target)
    else:
        outcome["survivors"] = lab.survivors()
        # Where a clause's own loop is now: still inside the learner's code, after the
        # item's time ran out, it is blocked there (time.sleep, a loop that never awaits).
        outcome["own_loops_at"] = [at for at in (blocked_at(t, target) for t in own_loops if t.is_alive()) if at]
    lab.kill_survivors()
    verdict = judge(item, target, outcome)
    if with_wire:
        verdict.wire = wire_events(lab.journals)
        verdict.trace = trace_lines(lab.journals, events=verdict.wire)
    if not thread.is_alive():
        lab.close()
    if on_phase is not None:
        on_phase(item, "end")
    return verdict


def run_items(items: List[Item], target: Target,
              on_verdict: Optional[Callable[[Verdict], None]] = None,
              limit: float = ITEM_LIMIT, on_tick: Optional[Tick] = None,
              parallel: int = PARALLEL, on_phase: Optional[Phase] = None, with_wire: bool = True,
              hybrids: Optional[Hybrids] = None) -> List[Verdict]:
    """Judge the items, up to `parallel` at a time (each has its own servers, so
    they cannot disturb each other), and report verdicts in number order as
    soon as each next one is ready."""
    verdicts: List[Verdict] = []
    # Each item sees its own region and the reference's others; the copy is made on
    # the item's own thread, so making one overlaps the waiting of items already running.
    hybrids = hybrids or Hybrids(target)

    def judged(item: Item) -> Verdict:
        return run_item(item, hybrids.for_item(item), limit, None, on_phase, with_wire)

    with ThreadPoolExecutor(max_workers=max(1, parallel), thread_name_prefix="items") as pool:
        # Items that wait on timeouts start first, so their waiting overlaps the rest.
        started = {item.number: pool.submit(judged, item) for item in sorted(items, key=lambda i: not i.waits)}
        for item, future in ((item, started[item.number]) for item in items):
            began = time.perf_counter()
            while True:  # bounded: run_item itself gives up after limit + grace
                try:
                    verdict = future.result(timeout=TICK)
                    break
                except FutureTimeout:
                    if on_tick is not None:
                        on_tick(item, time.perf_counter() - began, limit)
            if on_verdict is not None:
                on_verdict(verdict)
            verdicts.append(verdict)
    if not any(v.hung for v in verdicts):  # a blocked item's thread may still be importing from them
        hybrids.close()
    return verdicts
