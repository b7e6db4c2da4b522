"""A clause's inputs judged on event loops of their own, on a thread of the
judge's, with a clock of their own. For what the judge's loop must not meet,
or cannot show:

- A KeyboardInterrupt (or SystemExit) that escapes a task ends the asyncio
  loop the task runs on, whoever awaits the task: on the judge's loop it would
  end the judging. Here it ends only a loop of the clause's, and is an
  observation like any exception.
- The clock starts far from `time.monotonic()` (as trio's does), so code that
  notes the time on another clock than the event loop's shows it.
- The clock is virtual: when every task waits, it jumps to the next deadline.
  A server that takes 2.5 s takes it at once, a time limit is met in its turn,
  and no verdict depends on how fast the machine is. (Code that waits on a
  thread of its own would see the clock run ahead; no region's code does.)
- The loop may be trio's (a clause whose backend is "trio"): anyio runs on
  asyncio and on trio, and the lab's client is written with anyio, so a
  region that waits or runs things at once must work on both. There, trio's
  MockClock is the virtual clock, and asyncio's "running loop" is one that
  answers nothing (`NotAsyncio`): an asyncio-only call (asyncio.wait_for,
  asyncio.sleep, asyncio.create_task, asyncio.get_running_loop().time()) is
  noted with where it was made, for the observation to name, and fails as it
  would on trio. Where trio is not installed such a clause is not judged
  (`trio_missing`), and the item says so.
"""

from __future__ import annotations

import asyncio
import asyncio.events
import contextvars
import importlib.util
import inspect
import selectors
import sys
import threading
import traceback
from pathlib import Path
from types import FrameType
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, List, Optional

import anyio
import anyio.from_thread
import anyio.lowlevel

from checks.contracts.clause import Raised
from checks.harness import OWN_LOOP_THREADS, leaves

START = 10_000_000.0  # where the clock starts: months from any machine's monotonic clock
NUDGE = 1e-6  # past a deadline when the clock jumps to it (float rounding could land just short)

Observe = Callable[[Any], Awaitable[str]]  # one input to what was observed of it, in words


class JumpingSelector(selectors.DefaultSelector):
    """Waits for nothing: where the loop would sleep until its next timer, the
    clock is moved on to it instead."""

    def __init__(self, loop: "VirtualLoop") -> None:
        super().__init__()
        self.loop = loop

    def select(self, timeout: Optional[float] = None) -> List[Any]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:  # no timer at all: only another thread can wake the loop
            return super().select(None)
        self.loop.now += timeout + NUDGE
        return []


class VirtualLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self.now = START
        super().__init__(JumpingSelector(self))
        # What escapes a task here is already in the observation; asyncio would
        # also log it at shutdown, into the learner's report.
        self.set_exception_handler(lambda loop, context: None)

    def time(self) -> float:
        return self.now


# -- trio: anyio's other backend ------------------------------------------------------

ASYNCIO = str(Path(asyncio.__file__).parent)  # asyncio's own files: a frame there is asyncio's


@dataclass(frozen=True)
class AsyncioCall:
    """An asyncio-only call made on trio: what was called, and the stack that called it."""

    name: str  # "asyncio.wait_for", "asyncio.get_running_loop().time"
    stack: List[traceback.FrameSummary]  # outermost first, as traceback.extract_stack gives it


# The asyncio-only calls one input's code made on trio (None: not on trio). Set per input:
# the tasks its code starts copy the context, so their calls are that input's too.
ASYNCIO_CALLS: "contextvars.ContextVar[Optional[List[AsyncioCall]]]" = contextvars.ContextVar(
    "asyncio_calls", default=None)


def called(frames: List[traceback.FrameSummary], attribute: str = "") -> AsyncioCall:
    """The asyncio call a stack (outermost first) shows: the outermost of asyncio's own
    frames below the caller's, or the loop's `attribute` when the caller used the loop itself."""
    entered = next((at for at, frame in enumerate(frames) if frame.filename.startswith(ASYNCIO + "/")), None)
    if entered is None:
        return AsyncioCall(f"asyncio.get_running_loop().{attribute}", frames)
    return AsyncioCall(f"asyncio.{frames[entered].name}", frames[:entered])


class NotAsyncio:
    """asyncio's running loop, on a thread where trio runs: every use of it is an
    asyncio-only call, noted for the input that made it, then failed as on trio."""

    def __getattr__(self, attribute: str) -> Any:
        stack = traceback.extract_stack(sys._getframe(1))
        call = called(stack, attribute)
        calls = ASYNCIO_CALLS.get()
        if calls is not None:
            calls.append(call)
        unawaited(sys._getframe(1))
        raise RuntimeError(f"{call.name} is asyncio's: on trio there is no asyncio event loop")


def unawaited(frame: Optional[FrameType]) -> None:
    """Close the coroutines asyncio's frames were handed and never started (asyncio.wait_for's,
    create_task's): Python would warn of each, in the learner's output, when it is collected."""
    while frame is not None and frame.f_code.co_filename.startswith(ASYNCIO + "/"):
        for value in list(frame.f_locals.values()):
            if inspect.iscoroutine(value) and inspect.getcoroutinestate(value) == inspect.CORO_CREATED:
                value.close()
        frame = frame.f_back


def trio_missing() -> Optional[str]:
    """Why a clause judged on trio cannot be judged here (None: it can)."""
    if importlib.util.find_spec("trio") is None:
        return "trio is not installed (pip install -e '.[trio]')"
    return None


def run_on(backend: str, function: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """`function(*args)` on a loop of its own with a virtual clock: asyncio's VirtualLoop, or trio's MockClock."""
    if backend == "trio":
        import trio.testing  # imported where it is used: the nine's other items never pay for it

        previous = asyncio.events._get_running_loop()
        asyncio.events._set_running_loop(NotAsyncio())  # type: ignore[arg-type]
        try:
            return anyio.run(function, *args, backend="trio",
                             backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})
        finally:
            asyncio.events._set_running_loop(previous)
    return anyio.run(function, *args, backend_options={"loop_factory": VirtualLoop})


def asyncio_calls_made() -> Optional[List[AsyncioCall]]:
    """From here on, note this input's asyncio-only calls (on trio; None elsewhere)."""
    if not isinstance(asyncio.events._get_running_loop(), NotAsyncio):
        return None
    calls: List[AsyncioCall] = []
    ASYNCIO_CALLS.set(calls)
    return calls


def asyncio_frames(exc: BaseException) -> Optional[AsyncioCall]:
    """An asyncio call an exception (or one a task group gathered) came out of, as `called`
    reads a stack: asyncio.sleep(0) never asks for the loop, and trio refuses what it yields."""
    for leaf in leaves(exc):
        frames = traceback.extract_tb(leaf.__traceback__)
        if any(frame.filename.startswith(ASYNCIO + "/") for frame in frames):
            return called(frames)
    return None


async def observe_each(observe: Observe, examples: List[Any], alone: bool = False,
                       backend: str = "asyncio") -> List[str]:
    """`observe` on every input, on VirtualLoops run on a thread of its own.
    All at once on one loop (a turn of it serves every input), unless `alone`;
    each input that loop did not finish (something ended it: a KeyboardInterrupt
    out of a task), or every input when `alone`, on a fresh loop by itself,
    where what ends the loop is the observation. (Alone, a loop that ends
    cancels no other input's tasks before they have started, which Python
    would warn of in the learner's output.) The judge's loop waits for the
    thread without blocking; if the judge is cancelled, the thread is left to
    end on its own (a daemon: it never keeps the process alive)."""
    seen: List[Optional[str]] = [None] * len(examples)
    done = anyio.Event()
    token = anyio.lowlevel.current_token()

    async def one(index: int) -> None:
        seen[index] = await observe(examples[index])

    async def all_at_once() -> None:
        async with anyio.create_task_group() as group:
            for index in range(len(examples)):
                group.start_soon(one, index)

    def by_itself(example: Any) -> str:
        try:
            return str(run_on(backend, observe, example))
        except BaseException as exc:  # this input's loop ended with it: that is the observation
            return str(Raised(type(exc).__name__))

    def work() -> None:
        try:
            try:
                if not alone:
                    run_on(backend, all_at_once)
            except BaseException:  # an input ended the loop: those not finished are judged alone
                pass
            for index, example in enumerate(examples):
                if seen[index] is None:
                    seen[index] = by_itself(example)
        finally:
            try:
                anyio.from_thread.run_sync(done.set, token=token)
            except RuntimeError:  # the judge's loop has already ended
                pass

    thread = threading.Thread(target=work, name="contract-own-loop", daemon=True)
    threads = OWN_LOOP_THREADS.get()
    if threads is not None:  # the item's, to say where the learner's code was if its time runs out
        threads.append(thread)
    thread.start()
    await done.wait()
    return [str(observed) for observed in seen]
