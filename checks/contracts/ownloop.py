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
"""

from __future__ import annotations

import asyncio
import selectors
import threading
from typing import Any, Awaitable, Callable, List, Optional

import anyio
import anyio.from_thread
import anyio.lowlevel

from checks.contracts.clause import Raised

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


async def observe_each(observe: Observe, examples: List[Any], alone: bool = False) -> List[str]:
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
            return anyio.run(observe, example, backend_options={"loop_factory": VirtualLoop})
        except BaseException as exc:  # this input's loop ended with it: that is the observation
            return str(Raised(type(exc).__name__))

    def work() -> None:
        try:
            try:
                if not alone:
                    anyio.run(all_at_once, backend_options={"loop_factory": VirtualLoop})
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

    threading.Thread(target=work, name="contract-own-loop", daemon=True).start()
    await done.wait()
    return [str(observed) for observed in seen]
