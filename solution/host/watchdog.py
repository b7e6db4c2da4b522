"""A watchdog that ends the servers' process groups when the client ends, however
it ends (even SIGKILL, when no code of the client's can run).

Each server runs in a process group of its own, and on Linux its first process
dies with the client (PR_SET_PDEATHSIG). Its children do not: a server started
as `npx ...` or `sh -c ...` leaves a tree behind. So the command line starts
this small process once, tells it each server's group as it starts and
forgets it when the server is closed; when the client's end of the pipe
closes, which happens only when the client has exited, the watchdog kills
every group it still knows and exits. Started in a session of its own, so a
Ctrl-C meant for the client does not end it first. Single processes can be
watched too ("p" before the pid): code mode's sandbox worker, which the Monty
pool starts in the client's own group, is one.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Optional

WATCHER = """
import os, signal, sys
groups, pids = set(), set()
for line in sys.stdin:
    line = line.strip()
    known = pids if line.lstrip("-").startswith("p") else groups
    try:
        number = int(line.replace("p", "", 1))
    except ValueError:
        continue
    (known.add if number > 0 else known.discard)(abs(number))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
for pid in pids:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
"""


class Watchdog:
    def __init__(self) -> None:
        self._process: "Optional[subprocess.Popen[bytes]]" = None

    def start(self) -> None:
        if self._process is None and sys.platform != "win32":
            self._process = subprocess.Popen([sys.executable, "-I", "-S", "-c", WATCHER], stdin=subprocess.PIPE,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                             start_new_session=True)

    def _tell(self, line: str) -> None:
        if self._process is None or self._process.stdin is None:
            return
        try:
            self._process.stdin.write(f"{line}\n".encode())
            self._process.stdin.flush()
        except OSError:
            self._process = None  # it is gone: the servers still have PDEATHSIG and close()

    def watch(self, group: int) -> None:
        self._tell(str(group))

    def forget(self, group: int) -> None:
        self._tell(str(-group))

    def watch_process(self, pid: int) -> None:
        """One process, not a group: a sandbox worker shares the client's group."""
        self._tell(f"p{pid}")

    def forget_process(self, pid: int) -> None:
        self._tell(f"-p{pid}")

    def stop(self) -> None:
        """Close the pipe (the watchdog then kills what is left and exits) and reap it."""
        if self._process is not None:
            process, self._process = self._process, None
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(5.0)
            except subprocess.TimeoutExpired:
                process.kill()
