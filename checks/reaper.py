"""Whatever the code under test started, the runner ends.

The runner becomes a *child subreaper* (Linux): a process whose parent dies is
handed to the runner instead of to PID 1, so even a daemonised process (fork,
setsid, fork again) stays a descendant the runner can find. After the worker
ends, every descendant still running is killed and named in the report. The
process table is read from /proc; where there is none (macOS), the worker's
process group and the pids in the servers' journals are what can be found.

`descendants` is pure (a table in, pids out) so it is tested without processes.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
SETTLE = 5.0  # seconds for killed processes to leave the table; SIGKILL needs only to be scheduled


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    state: str  # "R", "S", "Z" ...
    name: str


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux only); False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        return int(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent() -> None:
    """Ask the kernel (Linux) to SIGKILL this process when its parent dies, so a
    worker never outlives a runner that was itself killed."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass


def parse_stat(text: str) -> Optional[Proc]:
    """One /proc/<pid>/stat line; the name may contain spaces and parentheses."""
    head, sep, rest = text.rpartition(")")
    if not sep or " (" not in head:
        return None
    pid, _, name = head.partition(" (")
    fields = rest.split()
    try:
        return Proc(int(pid), int(fields[1]), fields[0], name)
    except (ValueError, IndexError):
        return None


def process_table() -> Dict[int, Proc]:
    table: Dict[int, Proc] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            proc = parse_stat(Path(f"/proc/{entry}/stat").read_text(errors="replace"))
        except OSError:
            continue  # it ended while we looked
        if proc is not None:
            table[proc.pid] = proc
    return table


def sleeping(marker: str) -> List[int]:
    """The pids of `sleep MARKER` processes: how tests and fault scenarios plant a
    process they can find again, whoever its parent ends up being."""
    found = []
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
        try:
            if pid.isdigit() and Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2] == \
                    [b"sleep", marker.encode()]:
                found.append(int(pid))
        except OSError:
            continue  # it ended while we looked
    return found


def descendants(table: Dict[int, Proc], root: int) -> List[Proc]:
    """Every process below `root` in `table`, parents before children."""
    children: Dict[int, List[Proc]] = {}
    for proc in table.values():
        children.setdefault(proc.ppid, []).append(proc)
    found: List[Proc] = []
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        for child in sorted(children.get(pid, []), key=lambda p: p.pid):
            if child.pid != root and child not in found:
                found.append(child)
                frontier.append(child.pid)
    return found


def alive(pid: int, count_unreaped: bool = False) -> bool:
    """True while `pid` runs. A zombie is dead; with `count_unreaped`, one whose
    parent is this process still counts (we failed to reap it). A zombie whose
    parent is someone else is that parent's to reap (in a container, often a
    PID 1 that never does), not ours."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        proc = parse_stat(Path(f"/proc/{pid}/stat").read_text(errors="replace"))
    except OSError:
        return True  # no /proc (macOS): kill(0) is all we know
    if proc is None or proc.state != "Z":
        return True
    return count_unreaped and proc.ppid == os.getpid()


def reap_adopted() -> None:
    """Collect the exit status of adopted children that have died (zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all(pids: Iterable[int]) -> List[int]:
    """SIGKILL each pid still running; wait (bounded) until they are gone.
    Returns the pids that were running when asked."""
    running = [pid for pid in dict.fromkeys(pids) if pid != os.getpid() and alive(pid)]
    for pid in running:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + SETTLE
    while time.monotonic() < deadline:
        reap_adopted()
        if not any(alive(pid) for pid in running):
            break
        time.sleep(0.01)
    reap_adopted()
    return running


def left_behind(extra: Iterable[int] = ()) -> List[Proc]:
    """Processes a run left: our descendants (all of them, on Linux, once we are
    a subreaper) and `extra` pids (from the journals) that still run."""
    table = process_table()
    found = {p.pid: p for p in descendants(table, os.getpid()) if p.state != "Z"}
    for pid in extra:
        if pid not in found and alive(pid):
            found[pid] = table.get(pid, Proc(pid, 0, "?", "?"))
    return list(found.values())
