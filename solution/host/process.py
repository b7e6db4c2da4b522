"""A server process that cannot outlive the client, however the client ends.

The core starts each server in a process group of its own, so closing it can
end any children it started (stdio_client.spawn). The reference goes further:
on Linux the server is bound to die with this process (PR_SET_PDEATHSIG), so
not even a SIGKILL of the client leaves it running, and a watchdog process
(watchdog.py) ends the groups of servers whose own children would outlive them.

The death signal is asked for by util-linux's `setpriv`, which sets it and then
runs the server in its own place (same process), where setpriv can: a hook that
runs Python in the child between fork and exec (`preexec_fn`, the fallback)
rules out vfork, and a full fork of a large client costs it a copy-on-write
fault for every page it then touches (measured: 0.17 s of CPU over the
nineteen servers of one self-check).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
from typing import Any, Callable, Dict, Mapping, Optional, Sequence

from anyio._core._eventloop import get_async_backend
from anyio.abc import Process

from .watchdog import Watchdog

IS_POSIX = os.name == "posix"


def _die_with_parent() -> Optional[Callable[[], None]]:
    """On Linux, a hook that makes the child get SIGKILL when this process dies,
    however it dies (even SIGKILL, when no close code can run)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved here, not in the child
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig, kill = 1, int(signal.SIGKILL)

    def hook() -> None:
        prctl(pr_set_pdeathsig, kill)
    return hook


_DIE_WITH_PARENT = _die_with_parent()
PROBE_LIMIT = 5.0  # seconds the one check that setpriv can set the death signal may take
_SETPRIV: Dict[str, Optional[str]] = {}  # "path" -> setpriv when it can set the signal, None when not


def _setpriv() -> Optional[str]:
    """util-linux's setpriv, when it is here and knows --pdeathsig (2.33 and
    later); None elsewhere. Tried once, by running it."""
    if "path" not in _SETPRIV:
        found = shutil.which("setpriv") if sys.platform.startswith("linux") else None
        if found is not None:
            try:
                tried = subprocess.run([found, "--pdeathsig", "KILL", "--", found, "--version"],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, timeout=PROBE_LIMIT)
                found = found if tried.returncode == 0 else None
            except (OSError, subprocess.SubprocessError):
                found = None
        _SETPRIV["path"] = found
    return _SETPRIV["path"]


EXECUTABLE = (b"#!", b"\x7fELF")  # how a file the kernel runs itself begins: a script's line, a binary


def runnable(program: str, cwd: Optional[str], env: Mapping[str, str]) -> bool:
    """Whether `program` is a script or binary that exec runs as it is. Found
    the way exec finds it: on the server's PATH, or relative to its cwd when it
    names a directory. Raises as starting it would (FileNotFoundError,
    PermissionError) when it cannot run at all; with setpriv in front, that would
    otherwise end setpriv, not fail the start. False for any other file (setpriv
    would hand it to /bin/sh, where a start by Python refuses it)."""
    if os.path.dirname(program):
        places = [os.path.join(cwd or "", program)]
    else:
        places = [os.path.join(d, program) for d in (env.get("PATH") or os.defpath).split(os.pathsep)]
    for place in places:
        if os.path.isfile(place) and os.access(place, os.X_OK):
            try:
                with open(place, "rb") as file:
                    return file.read(4).startswith(EXECUTABLE)
            except OSError:
                return False
    if any(os.path.exists(p) for p in places):
        raise PermissionError(f"not executable: {program}")
    raise FileNotFoundError(f"not found: {program}")


_WATCHDOG: Optional[Watchdog] = None  # set by guard_process_tree (the command line does)


def guard_process_tree() -> Watchdog:
    """From now on, every server's whole process group dies with this process
    (a watchdog process kills the groups once this one has exited)."""
    global _WATCHDOG
    if _WATCHDOG is None:
        _WATCHDOG = Watchdog()
        _WATCHDOG.start()
    return _WATCHDOG


async def spawn(argv: Sequence[str], cwd: Optional[str], env: Mapping[str, str]) -> Process:
    """Start the server with pipes, in its own process group (so close can end
    its children too) and, on Linux, bound to live no longer than us."""
    argv = list(argv)
    options: Dict[str, Any] = {"cwd": cwd, "env": dict(env), "start_new_session": IS_POSIX}
    setpriv = _setpriv() if _DIE_WITH_PARENT is not None else None
    if setpriv is not None and runnable(argv[0], cwd, env):
        argv = [setpriv, "--pdeathsig", "KILL", "--", *argv]
    elif _DIE_WITH_PARENT is not None:
        options["preexec_fn"] = _DIE_WITH_PARENT
    # anyio.open_process does not forward preexec_fn; its backend passes any
    # Popen option through, so the process is started there.
    backend = get_async_backend()
    process = await backend.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, **options)
    if _WATCHDOG is not None and IS_POSIX:
        _WATCHDOG.watch(process.pid)  # its group: the server and everything it starts
    return process


def watch_worker(pid: Optional[int], watched: bool = True) -> None:
    """A helper process started by a library (the sandbox's worker), in our
    own group: the watchdog kills that one pid if we die first."""
    if _WATCHDOG is not None and IS_POSIX and pid is not None:
        (_WATCHDOG.watch_process if watched else _WATCHDOG.forget_process)(pid)


def released(process: Process) -> None:
    """The server's group has been ended by close: the watchdog can forget it."""
    if _WATCHDOG is not None and IS_POSIX:
        _WATCHDOG.forget(process.pid)
