"""What the code under test prints, sent on per item (in the worker process).

`sys.stdout` and `sys.stderr` are replaced by one `OutputRouter`: a write is
labelled with the item whose thread made it (item threads are named `item-N`
by the harness), or "outside" when no item thread wrote it (import time,
threads the code started), and passed at once to the `sink` (the channel to
the runner), so nothing is lost if the code then ends the process. Each label
has a cap: a loop that prints forever costs only up to the cap, and one note
says that the rest was not kept. Nothing here writes to the real stdout, so a
print can never become part of the runner's report.
"""

from __future__ import annotations

import io
import threading
from typing import Callable, Dict

OUTSIDE = "outside"
CAP = 16 * 1024  # characters kept per label

Sink = Callable[[str, str], None]  # (label, text)


class OutputRouter(io.TextIOBase):
    def __init__(self, sink: Sink, cap: int = CAP) -> None:
        super().__init__()
        self.sink = sink
        self.cap = cap
        self._lock = threading.Lock()
        self._sizes: Dict[str, int] = {}

    @staticmethod
    def owner() -> str:
        name = threading.current_thread().name
        return name[len("item-"):] if name.startswith("item-") else OUTSIDE

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        key = self.owner()
        with self._lock:
            used = self._sizes.get(key, 0)
            kept = text[:max(0, self.cap - used)]
            self._sizes[key] = used + len(text)
        if kept:
            self.sink(key, kept)
        if used + len(text) > self.cap >= used:
            self.sink(key, f"\n[output past {self.cap} characters not kept]\n")
        return len(text)

    def flush(self) -> None:
        pass
