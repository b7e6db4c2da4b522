"""What the runner takes from a target: its regular top-level `.py` files, as text.

The learner's folder is read here, once a run, by the runner, and by nothing
else: every entry named like a module (`naming.py`; not `.#naming.py`, not
`a b.py`) must be a regular file, at most MAX_BYTES long and UTF-8, and there
may be at most MAX_FILES of them. A link, a FIFO, a device or a folder under
such a name is refused without being opened, so a FIFO never holds the runner
and a link to /dev/zero is never read. Nothing else is looked at: not the
folder's `__pycache__` (compiled files planted there are never used), not its
subfolders.

`place` writes the files into a directory of the runner's, beside the
reference client's layers (its subpackages: remote/, host/, ...), and
compiles each there: the code under test is imported from that directory
only, so nothing is read from or written to the learner's folder while it runs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import py_compile
import re
import shutil
import stat
import sys
from pathlib import Path
from typing import Dict, Optional

from checks.target import ROOT

MAX_FILES = 200  # the reference has about 30 top-level modules
MAX_BYTES = 1024 * 1024  # of one file; the reference's longest is about 20 KB
MAX_ENTRIES = 10_000  # entries of the folder looked at before it is called too big to be a package
MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.py")
COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256
REF = re.compile(r"refs/[A-Za-z0-9._/-]+")
GIT_FILE = 16 * 1024 * 1024  # bytes of a repository's HEAD, ref or packed-refs read at most
REFERENCE = ROOT / "solution"

Files = Dict[str, str]  # a module's file name ("naming.py") -> its text


class IntakeError(Exception):
    """The target cannot be taken as it is: one line saying what and where."""


def read_files(directory: Path) -> Files:
    """The target's top-level module files, by name. The folder itself must be a
    folder, not a link to one (a submission's starter/ that links elsewhere is
    refused)."""
    try:
        if not stat.S_ISDIR(os.lstat(directory).st_mode):
            raise IntakeError(f"{directory}: not a folder (a link, a file or something else): nothing was read")
        entries = []
        with os.scandir(directory) as listing:
            for count, entry in enumerate(listing):
                if count >= MAX_ENTRIES:
                    raise IntakeError(f"{directory}: more than {MAX_ENTRIES:,} entries; a client package has "
                                      "a few dozen")
                if MODULE.fullmatch(entry.name):
                    entries.append(entry.name)
    except OSError as exc:
        raise IntakeError(f"{directory}: cannot be read ({exc.strerror or exc})") from exc
    if len(entries) > MAX_FILES:
        raise IntakeError(f"{directory}: {len(entries)} module files; at most {MAX_FILES} are taken")
    return {name: read_one(directory / name) for name in sorted(entries)}


def read_one(path: Path, limit: int = MAX_BYTES) -> str:
    """One file's text: a regular file, never followed through a link, opened
    without waiting (a FIFO put there between the look and the open is not
    waited on) and read no further than `limit` bytes."""
    try:
        kind = os.lstat(path).st_mode
        if not stat.S_ISREG(kind):
            raise IntakeError(f"{path}: {what(kind)}, not a regular file; only regular files are taken")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | \
            getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the look
                raise IntakeError(f"{path}: changed into something that is not a regular file while it was read")
            data = b""
            while len(data) <= limit:
                chunk = os.read(fd, limit + 1 - len(data))
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(fd)
    except OSError as exc:
        raise IntakeError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if len(data) > limit:
        raise IntakeError(f"{path}: longer than {limit // 1024} KB; a module of the lab is far shorter")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IntakeError(f"{path}: not UTF-8 text (byte {exc.start})") from exc


def what(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def place(files: Files, into: Path, reference: Path = REFERENCE) -> Path:
    """A package in `into` (made here; it must not exist): `files`, and the
    reference's layers (the subpackages of `reference` but its tests), each file
    beside its bytecode. A file whose text is the reference's own is the
    reference's file, linked, as every layer's is; any other text is written
    and compiled fresh, once a run for each text. Returns `into`."""
    into.mkdir(parents=True)
    (into / "__pycache__").mkdir()
    for name, text in files.items():
        if text == reference_text(reference / name):
            take(reference / name, into / name)
        else:
            (into / name).write_text(text, encoding="utf-8")
            bytecode(into / name, text)
    for layer in sorted(reference.iterdir()):
        if layer.name != "tests" and (layer / "__init__.py").is_file():
            copy_layer(layer, into / layer.name)
    return into


def copy_layer(layer: Path, into: Path) -> None:
    """One of the reference's layers, as files of the package's own."""
    into.mkdir()
    (into / "__pycache__").mkdir()
    for source in sorted(layer.iterdir()):
        if source.is_dir() and source.name != "__pycache__" and (source / "__init__.py").is_file():
            copy_layer(source, into / source.name)
        elif source.suffix == ".py" and source.is_file():
            take(source, into / source.name)


def take(source: Path, destination: Path) -> None:
    """A file of the reference's in a package: a hard link (a copy where the
    system makes none), with the bytecode the reference's own import keeps for
    it, made there when it is missing or stale, as Python would on importing the
    reference (where Python writes no bytecode, compiled once a run)."""
    linked(source, destination)
    compiled = fresh_bytecode(source)
    if compiled is None:
        bytecode(destination, source.read_text(encoding="utf-8"))
    else:
        linked(compiled, Path(importlib.util.cache_from_source(str(destination))))


_TEXTS: Dict[Path, Optional[str]] = {}  # the reference's files, read once in this process (one run)


def reference_text(path: Path) -> Optional[str]:
    if path not in _TEXTS:
        try:
            _TEXTS[path] = path.read_text(encoding="utf-8") if path.is_file() else None
        except (OSError, UnicodeDecodeError):
            _TEXTS[path] = None
    return _TEXTS[path]


# A text's bytecode, made once in this process (one run) for every copy that holds it.
_COMPILED: Dict[str, bytes] = {}
_KEPT = 400  # texts whose bytecode is held at once: a run with every region swapped holds about 60


def bytecode(source: Path, text: str) -> None:
    """Put the bytecode of `source` (which holds `text`) in its directory's
    __pycache__, compiled fresh, once per distinct text, and checked against
    the text's hash at import. A text that does not compile is left for its
    import to report, as a learner's syntax error always is. Written whatever
    PYTHONDONTWRITEBYTECODE says: the directory is the run's own."""
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()
    cached = Path(importlib.util.cache_from_source(str(source)))
    data = _COMPILED.get(key)
    try:
        if data is None:
            py_compile.compile(str(source), cfile=str(cached), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            if len(_COMPILED) >= _KEPT:
                _COMPILED.clear()
            _COMPILED[key] = cached.read_bytes()
        else:
            cached.write_bytes(data)
    except (OSError, py_compile.PyCompileError):
        return


def fresh_bytecode(source: Path) -> Optional[Path]:
    """The reference's cached bytecode of `source`, compiled first when it is
    missing or stale; None where bytecode is not written."""
    if sys.dont_write_bytecode:
        return None
    cached = Path(importlib.util.cache_from_source(str(source)))
    try:
        if not current(cached, source):
            py_compile.compile(str(source), doraise=True)
        return cached
    except (OSError, py_compile.PyCompileError):
        return None


def current(cached: Path, source: Path) -> bool:
    """Whether `cached` is bytecode of this Python for `source` as it is now (by
    its time and size; one checked by hash, its import checks itself)."""
    try:
        header = cached.read_bytes()[:16]
        facts = source.stat()
    except OSError:
        return False
    if header[:4] != importlib.util.MAGIC_NUMBER or len(header) < 16:
        return False
    if int.from_bytes(header[4:8], "little") & 0b1:  # hash-based
        return True
    return int.from_bytes(header[8:12], "little") == int(facts.st_mtime) & 0xFFFFFFFF and \
        int.from_bytes(header[12:16], "little") == facts.st_size & 0xFFFFFFFF


def linked(source: Path, destination: Path) -> None:
    """`destination` as the same file as `source` (a hard link), or a copy where
    the system makes no link (another file system, a file not the user's)."""
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)


def commit_of(directory: Path, up: bool = True) -> Optional[str]:
    """The commit checked out in the repository `directory` is in (`up`: or in a
    folder above it), read from the repository's files as text and never by
    running git there (a repository's own configuration can make git run
    commands of its choosing); None when there is none or it cannot be read."""
    for folder in (directory, *(directory.parents if up else ())):
        try:
            mode = os.lstat(folder / ".git").st_mode
        except OSError:
            continue
        try:
            if stat.S_ISREG(mode):  # a worktree's or a submodule's: "gitdir: PATH"
                named = read_one(folder / ".git", GIT_FILE).strip()
                return head_of(folder / named[len("gitdir:"):].strip()) if named.startswith("gitdir:") else None
            return head_of(folder / ".git") if stat.S_ISDIR(mode) else None
        except (IntakeError, OSError):
            return None
    return None


def head_of(git: Path) -> Optional[str]:
    """The commit HEAD names in the repository folder `git`: itself, or through
    a branch kept loose or packed (in the common folder, for a worktree)."""
    common = git / read_one(git / "commondir", GIT_FILE).strip() if (git / "commondir").is_file() else git
    head = read_one(git / "HEAD", GIT_FILE).strip()
    for _ in range(5):  # a symbolic ref may name another
        if COMMIT.fullmatch(head):
            return head
        ref = head[len("ref:"):].strip() if head.startswith("ref:") else ""
        if not REF.fullmatch(ref) or ".." in ref:
            return None
        if (common / ref).is_file():
            head = read_one(common / ref, GIT_FILE).strip()
            continue
        packed = read_one(common / "packed-refs", GIT_FILE) if (common / "packed-refs").is_file() else ""
        found = [line.split()[0] for line in packed.splitlines() if line.split()[1:] == [ref]]
        return found[0] if found and COMMIT.fullmatch(found[0]) else None
    return None
