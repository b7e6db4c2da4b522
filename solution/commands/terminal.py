"""The person at the terminal has one owner: one question on the screen at a time.

Consent questions and servers' forms both read what the person types. Asked at
once, their prompts interleave and the `y` typed for a form can approve a call.
So every question takes the terminal for its whole length (`turn`), says who
asks, and reads its lines only while it holds it; a line from outside any
question (a task's status, `note`) waits until the question has ended. A read is abandoned, not
waited for, when the run is cancelled (Ctrl-C, SIGTERM, SIGHUP): the client
ends at once, its servers closed, without waiting for an Enter.
"""

from __future__ import annotations

import sys
import threading
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable, Dict, Optional, TextIO

import anyio
import anyio.from_thread
import anyio.lowlevel


class Terminal:
    def __init__(self, read: Callable[[str], str] = input, out: TextIO = sys.stderr) -> None:
        self._read = read
        self.out = out
        self._lock: Optional[anyio.Lock] = None
        self.holder = ""  # who has the terminal now (for tests and messages)
        self._notes: Dict[str, str] = {}  # what waits for the question to end: the latest per key

    @asynccontextmanager
    async def turn(self, who: str) -> AsyncIterator["Terminal"]:
        """Hold the terminal for one whole question; others wait their turn."""
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            self.holder = who
            try:
                yield self
            finally:
                self.holder = ""
                notes, self._notes = self._notes, {}
                for text in notes.values():
                    self.say(text)

    async def read(self, prompt: str) -> str:
        """One line typed by the person; only inside a `turn`."""
        if not self.holder:
            raise RuntimeError("the terminal is read only inside a turn")
        # The read blocks a thread of its own, a daemon: a cancelled run does not
        # wait for the Enter it is still waiting for, and neither does the
        # interpreter's exit (anyio's worker threads are joined at exit).
        done = anyio.Event()
        box: Dict[str, Any] = {}
        token = anyio.lowlevel.current_token()

        def work() -> None:
            try:
                box["line"] = self._read(prompt)
            except BaseException as exc:  # EOF, a closed terminal: the caller decides
                box["error"] = exc
            try:
                anyio.from_thread.run_sync(done.set, token=token)
            except Exception:
                pass  # the run is over; nobody waits for this line any more
        threading.Thread(target=work, name="terminal-read", daemon=True).start()
        await done.wait()
        if "error" in box:
            error: BaseException = box["error"]
            raise error
        return str(box["line"])

    def say(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def note(self, key: str, text: str) -> None:
        """A line outside any question (a task's status): shown now, or while a question
        holds the terminal after it ends, so it never lands inside a prompt. Of several
        notes with one key meanwhile, the latest is shown."""
        if not self.holder:
            self.say(text)
            return
        self._notes.pop(key, None)  # in the order they last changed
        self._notes[key] = text
