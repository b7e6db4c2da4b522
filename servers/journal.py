"""The fixtures' journal: one JSON line per event on the wire, written in one place.

The journal (`--journal FILE`) records every line in and out with a
wall-clock timestamp, so the lab's checks can prove what a server received and
when it answered instead of trusting the client under test. Every shell
(stdio, HTTP, the misbehaving server) writes through `Journal.record`.
"""

from __future__ import annotations

import json
import os
import threading
import socket
import time
from typing import Any, Optional


class Journal:
    """Append-only JSON-lines record of the wire, flushed per entry.

    With `evidence` (the path of a Unix socket the lab's runner listens on),
    every line also goes to the runner as it is written: the runner's own copy,
    which the process under test cannot rewrite the way it could the file. The
    first line there names the journal; the runner tells who is sending from the
    socket itself (the peer's process), not from what the line claims."""

    def __init__(self, path: Optional[str], evidence: Optional[str] = None) -> None:
        self._file = open(path, "a", encoding="utf-8") if path else None
        self._lock = threading.Lock()
        self._runner = connected(evidence, path) if path and evidence else None

    def record(self, kind: str, **fields: Any) -> None:
        if self._file is None:
            return
        line = json.dumps({"t": time.time(), "kind": kind, **fields}) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()
            if self._runner is not None:
                try:
                    self._runner.sendall(line.encode())
                except OSError:  # the runner has gone: the file is the record
                    self._runner = None


RUNNER_WAIT = 30.0  # seconds for the runner to take this server's account: it answers at once unless gone


def connected(evidence: str, journal: str) -> Optional[socket.socket]:
    """A stream to the runner at `evidence`, introduced with the journal's path,
    once the runner has said it takes it (None when it does not, or there is no
    runner there: a server started by hand). The runner looks at this process
    while it waits here, so the process cannot be gone before it is seen."""
    try:
        runner = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        runner.settimeout(RUNNER_WAIT)
        runner.connect(evidence)
        runner.sendall((json.dumps({"journal": os.path.abspath(journal)}) + "\n").encode())
        taken = runner.recv(1) == b"\n"
        runner.settimeout(None)
    except (OSError, AttributeError):  # AttributeError: no AF_UNIX on this system
        return None
    if not taken:
        runner.close()
        return None
    return runner


def forked_by() -> Optional[float]:
    """The wall-clock time by which this process had been started (forked), from
    the kernel's record, so interpreter start-up on a busy machine does not blur
    the order in which a client started its servers. The kernel counts in clock
    ticks: this is the end of the tick it started in. None off Linux."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            fields = stat.read().rpartition(")")[2].split()
        tick = 1 / os.sysconf("SC_CLK_TCK")
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) * tick
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return time.time() - age + tick
