"""Files the client writes in the user's directory, written so a planted file cannot
turn them against the user.

A cloned repository may hold `.mcp-tasks.json -> ~/.bashrc`, or `.mcp-audit.jsonl`
as a link to `/dev/zero` or a FIFO. So: never through a symbolic link (O_NOFOLLOW),
only regular files (a device, a FIFO or a directory is refused, and a FIFO is
opened without waiting for a reader), reads bounded in size, whole-file writes
to a temporary file renamed into place, and read-modify-write under a lock that
every client in the directory shares. Each refusal is one line (`UnsafeFile`).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

READ_LIMIT = 1_000_000  # bytes: far more than any tasks list, far less than /dev/zero
LOCK_WAIT = 10.0  # seconds to wait for another client's lock; it holds it for a few milliseconds
LOCK_POLL = 0.01
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafeFile(OSError):
    """A file the client will not read or write, and why, in one line."""


def _refusal(path: Path, exc: OSError) -> UnsafeFile:
    if exc.errno == errno.ELOOP:
        return UnsafeFile(f"{path} is a symbolic link; the client reads and writes no file through a link")
    if exc.errno == errno.ENXIO:
        return UnsafeFile(f"{path} is a FIFO, not a regular file")
    return UnsafeFile(f"{path}: {exc.strerror or exc}")


def _regular(fd: int, path: Path) -> None:
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
            else "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise UnsafeFile(f"{path} is {kind}; the client writes only regular files")


def check(path: Path) -> None:
    """Refuse `path` now if it is a link or anything but a regular file (missing is fine)."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _refusal(path, exc) from None
    if stat.S_ISLNK(found.st_mode):
        raise UnsafeFile(f"{path} is a symbolic link; the client reads and writes no file through a link")
    if not stat.S_ISREG(found.st_mode):
        raise UnsafeFile(f"{path} is not a regular file; the client writes only regular files")


def append(path: Path, data: bytes) -> None:
    """Append `data` in one write, creating the file (mode 0600) if need be."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | NOFOLLOW | NONBLOCK | CLOEXEC, 0o600)
    except OSError as exc:
        raise _refusal(path, exc) from None
    _regular(fd, path)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise UnsafeFile(f"{path}: only {written} of {len(data)} bytes could be written")
    except UnsafeFile:
        raise
    except OSError as exc:
        raise UnsafeFile(f"{path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read(path: Path, limit: int = READ_LIMIT) -> Optional[str]:
    """The text of `path` (None when there is none), refusing links, non-files and
    anything over `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | NONBLOCK | CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _refusal(path, exc) from None
    _regular(fd, path)
    with os.fdopen(fd, "rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise UnsafeFile(f"{path} is larger than {limit} bytes; it is not one of the client's files")
    return data.decode("utf-8", "replace")


def replace(path: Path, text: str) -> None:
    """Write `text` as the whole of `path`: to a temporary file beside it, renamed
    over it (so a reader sees the old file or the new, and a link in the way is
    replaced, never followed)."""
    check(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def remove(path: Path) -> None:
    """Remove `path` if it is there (a link is removed itself, never its target)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


@contextmanager
def locked(path: Path, wait: float = LOCK_WAIT) -> Iterator[None]:
    """Hold the lock every client takes before it reads, changes and writes `path`:
    an advisory lock on the directory that holds it, so no lock file is left behind."""
    import fcntl  # POSIX only; the client's process handling is too

    directory = path.parent if str(path.parent) else Path(".")
    fd = os.open(directory, os.O_RDONLY | CLOEXEC)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise UnsafeFile(f"{directory} stayed locked by another client for {wait:g} s") from None
                time.sleep(LOCK_POLL)  # another process holds it: there is no event to wait on
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
