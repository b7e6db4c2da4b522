"""Code mode, part two: one script, run in the Monty sandbox.

    outcome = await run_in_sandbox(source, modules, limits)

The script runs in a `monty` worker process (pydantic-monty), never in this
interpreter: it has no files, no sockets, no processes and no environment,
and its only way out is the host functions in `modules`. It is type-checked
against the modules' stubs before a line of it runs. Every way a script can
end is an `Outcome`: printed output plus, when it did not finish, the kind of
stop and a one-line reason. Nothing here raises for a script's faults.

pydantic-monty is the `codemode` extra; without it, `missing()` says how to
install it and nothing else in the client needs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

import anyio

from ..host.process import watch_worker

INSTALL = "pip install -e '.[codemode]'"
SCRIPT_NAME = "script.py"
SUSPENSIONS_PER_CALL = 10  # far more than a call needs, even gathered (about two)  # what the checker's messages call the script
_FEED_NAME = re.compile(r'"<python-input-\d+>"')  # what tracebacks call it
TRACEBACK_LINES = 8


@dataclass(frozen=True)
class Limits:
    """What one script may use. `seconds` counts only the script's own running
    time (never its waits for tools), so a busy machine slows a script down
    but cannot make a correct one hit it; `wall_seconds` backs everything up."""

    seconds: float = 10.0
    memory_bytes: int = 64 * 1024 * 1024
    calls: int = 50  # tool calls per script
    printed_chars: int = 4000  # of printed output given back; the rest is cut
    wall_seconds: float = 600.0


@dataclass(frozen=True)
class HostModule:
    """One module the script may import: its functions and their `.pyi` text."""

    functions: Dict[str, Callable[..., Any]]
    stubs: str


@dataclass
class Outcome:
    printed: str  # at most one character more than Limits.printed_chars
    stopped: Optional[str] = None  # None: ran to the end; else "type", "syntax", "error", "limit", "crashed"
    reason: str = ""
    printed_chars: int = 0  # how much the script printed in all

    @property
    def ok(self) -> bool:
        return self.stopped is None


def missing() -> Optional[str]:
    """None when the sandbox can run; otherwise how to make it so."""
    try:
        import pydantic_monty  # noqa: F401
    except ImportError:
        return f"code mode needs the Monty sandbox, which is not installed: {INSTALL}"
    return None


async def run_in_sandbox(source: str, modules: Dict[str, HostModule], limits: Limits = Limits()) -> Outcome:
    """Type-check, then run `source` with `modules` importable. A fresh worker
    each time: no script sees what an earlier one left, and the worker is gone
    (killed if need be) when this returns."""
    why = missing()
    if why is not None:
        return Outcome("", "crashed", why)
    import pydantic_monty as monty

    printed: list[str] = []
    size = [0]

    def collect(stream: str, text: str) -> None:
        room = limits.printed_chars + 1 - size[0]  # one more than is shown: enough to know it was cut
        if room > 0:
            printed.append(text[:room])
        size[0] += len(text)

    external = {name: monty.ExternalModule(dict(module.functions), stubs=module.stubs)
                for name, module in modules.items()}
    checked: Dict[str, Any] = {"max_feed_duration_secs": limits.seconds, "max_memory": limits.memory_bytes,
                               # A backstop only: a gathered call suspends more than once, so the
                               # calls themselves are counted where they are made (code_mode).
                               "max_suspensions": SUSPENSIONS_PER_CALL * limits.calls + 100}
    outcome = Outcome("")
    with anyio.move_on_after(limits.wall_seconds) as wall:
        async with monty.AsyncMonty(min_processes=1, max_processes=1, checkout_timeout=limits.wall_seconds,
                                    request_timeout=limits.wall_seconds) as pool:
            try:
                async with pool.checkout(script_name=SCRIPT_NAME, limits=checked,  # type: ignore[arg-type]
                                         type_check=True, type_check_format="concise",
                                         external_modules=external) as session:
                    worker = session.worker_pid
                    watch_worker(worker)  # a busy worker outlives a killed client otherwise
                    try:
                        await session.feed_run(source, print_callback=collect)
                    finally:
                        watch_worker(worker, watched=False)
            except monty.MontyTypingError as exc:
                outcome = Outcome("", "type", exc.display().strip())
            except monty.MontySyntaxError as exc:
                outcome = Outcome("", "syntax", exc.display(format="type-msg"))
            except monty.MontyRuntimeError as exc:
                outcome = Outcome("", *runtime_stop(exc.display(format="type-msg"), exc.display(), limits))
            except monty.MontyError as exc:  # the worker died or was killed: contained, never ours
                outcome = Outcome("", "crashed", f"the sandbox worker stopped: {type(exc).__name__}: {exc}")
    if wall.cancelled_caught:
        outcome = Outcome("", "limit", f"the script ran past {limits.wall_seconds:g} s in all and was stopped")
    outcome.printed = "".join(printed)
    outcome.printed_chars = size[0]
    return outcome


def runtime_stop(message: str, traceback: str, limits: Limits) -> "tuple[str, str]":
    """An exception the script did not catch: a limit, or its own error (with
    the traceback's last lines, so the model can see which line raised)."""
    first = message.strip().splitlines()[0] if message.strip() else "an error"
    if first.startswith("TimeoutError: feed time limit"):
        return "limit", f"the script used more than {limits.seconds:g} s of running time and was stopped"
    if first.startswith("MemoryError: memory limit"):
        return "limit", f"the script used more than {limits.memory_bytes // (1024 * 1024)} MiB and was stopped"
    if "suspension limit" in first:
        return "limit", (f"the script waited more than {SUSPENSIONS_PER_CALL * limits.calls + 100} times "
                         "and was stopped")
    lines = _FEED_NAME.sub(f'"{SCRIPT_NAME}"', traceback).strip().splitlines()
    return "error", "\n".join(lines[-TRACEBACK_LINES:]) if lines else first
