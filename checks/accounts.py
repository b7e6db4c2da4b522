"""The fixture servers' own accounts of a run, sent to the runner as they happen.

Every server an item starts is given `--evidence SOCKET`, and sends each line
of its journal there as it writes it (servers/journal.py, `Journal`). The
runner listens; the worker, where the code under test runs, never holds the
listening socket. What arrives is kept here, journal by journal, and it is
what the runner checks a claimed pass against and draws the page from. The
journal *files* stay the worker's to read while it judges; code under test
could rewrite them, and nothing here reads them.

Who is speaking is taken from the kernel, not from what a line claims: on
Linux each connection's peer (SO_PEERCRED) must be this Python, started in
isolated mode (-I -S) on a fixture script of servers/, journalling into an
item's directory of this run. Anything else that connects is refused and named
in the report. Elsewhere the peer cannot be told, and `checked` says so.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import socket
import struct
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Tuple

from checks.fixtures import SERVERS, Entry, Journal, entry_of
from checks.lines import Lines

if TYPE_CHECKING:
    from checks.harness import Verdict

ACCOUNT_CAP = 64 * 1024 * 1024  # bytes kept of one server's account; an honest item sends well under 1 MB
LINE_CAP = 16 * 1024 * 1024
SOCKET_PATH = 100  # bytes a Unix socket's path may take, with room to spare (108 on Linux, 104 on macOS)
ITEM_DIRECTORY = re.compile(r"^mcp-lab-(\d+)-")  # checks.fixtures.Lab names each item's directory so
FIXTURES = {"notes.py", "tickets.py", "misbehave.py"}  # the scripts checks.fixtures.Lab starts
LOADER_VARIABLES = ("LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH")  # what could put other code in a server


@dataclass
class Account:
    """What one server has sent: its journal's path (from its first line) and entries."""

    pid: Optional[int]
    started_with: Optional[Path]  # the journal its command line names (Linux), looked up while it waited
    journal: Optional[Path] = None
    entries: List[Entry] = field(default_factory=list)
    size: int = 0
    cut: bool = False  # more arrived than ACCOUNT_CAP: the rest was not kept
    lines: Lines = field(default_factory=lambda: Lines(LINE_CAP))


class HeldJournal(Journal):
    """A journal read from what its server sent the runner, not from its file."""

    def __init__(self, alias: str, account: Account) -> None:
        super().__init__(alias, account.journal or Path())
        self.account = account
        self._replies: Dict[str, List[Entry]] = {}
        self._indexed = -1  # how many entries the index of replies covers

    def entries(self) -> List[Entry]:
        return list(self.account.entries)

    def each(self) -> Iterator[Entry]:
        return iter(self.entries())

    def reply_to(self, request: Entry) -> Optional[Entry]:
        """As Journal.reply_to, from an index of the replies by id: a proof asks
        for the reply of every request, and an account can hold tens of thousands."""
        if self._indexed != len(self.account.entries):
            self._replies = {}
            for entry in self.account.entries:
                if entry.kind == "out":
                    self._replies.setdefault(json.dumps(entry.msg.get("id")), []).append(entry)
            self._indexed = len(self.account.entries)
        found = self._replies.get(json.dumps(request.msg.get("id")), [])
        return next((e for e in found if e.t >= request.t), None)


class Accounts:
    """The listening socket and every server's account of this run."""

    def __init__(self, run_dir: str) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.path = str(self.run_dir / "evidence.sock")
        self._own_dir: Optional[str] = None
        if len(os.fsencode(self.path)) > SOCKET_PATH:  # a long TMPDIR: a directory of its own in /tmp
            self._own_dir = tempfile.mkdtemp(prefix="mcp-lab-", dir="/tmp" if os.path.isdir("/tmp") else None)
            self.path = os.path.join(self._own_dir, "evidence.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(128)
        self.listener.setblocking(False)
        self.checked = sys.platform.startswith("linux")  # the peer is known only where /proc tells it
        self.received = 0  # bytes from every server: progress of the run
        self.refused: List[str] = []
        self._open: Dict[int, Tuple[socket.socket, Account]] = {}
        self.accounts: List[Account] = []
        self._selector: Optional[selectors.BaseSelector] = None
        self._tag: object = None

    def fds(self) -> List[int]:
        return [self.listener.fileno(), *self._open]

    def watch(self, selector: selectors.BaseSelector, tag: object) -> None:
        """Keep the listener and every connection registered on `selector` under
        `tag`: each one before its first read, each one out before it is closed."""
        self._selector, self._tag = selector, tag
        selector.register(self.listener, selectors.EVENT_READ, tag)

    def ready(self, fd: int) -> None:
        """Take what is waiting on `fd`."""
        if fd == self.listener.fileno():
            self._accept()
        elif fd in self._open:
            self._read(fd)

    def drain(self) -> None:
        """Everything already sent, accepted and read (without waiting): what
        servers wrote before the worker reported on their item is all here."""
        self._accept()
        for fd in list(self._open):
            while fd in self._open and self._read(fd):
                pass

    def journals_of(self, item: int) -> List[HeldJournal]:
        """The accounts of `item`'s servers, in the order the item made them."""
        found: List[Tuple[int, HeldJournal]] = []
        for account in self.accounts:
            place = account.journal
            match = ITEM_DIRECTORY.match(place.parent.name) if place is not None else None
            if place is None or match is None or int(match.group(1)) != item:
                continue
            alias, _, index = place.stem.rpartition("-")
            found.append((int(index) if index.isdigit() else 0, HeldJournal(alias or place.stem, account)))
        return [journal for _, journal in sorted(found, key=lambda pair: pair[0])]

    def pids(self) -> List[int]:
        return [a.pid for a in self.accounts if a.pid is not None]

    def close(self) -> None:
        for fd in list(self._open):
            self._forget(fd)
        if self._selector is not None:
            self._selector.unregister(self.listener)
        self.listener.close()
        try:
            os.unlink(self.path)
            if self._own_dir is not None:
                os.rmdir(self._own_dir)
        except OSError:
            pass

    def _forget(self, fd: int) -> None:
        sock, _ = self._open.pop(fd)
        if self._selector is not None:
            self._selector.unregister(sock)
        sock.close()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            pid = peer_pid(sock)
            if self.checked and pid is not None and gone(pid):
                # Ended before it was looked at (a client may end a server it has just
                # started): a server sends nothing before our word, so there is nothing
                # to take. Something that sent all the same and ended is no server.
                if sent_unasked(sock):
                    self.refused.append(f"pid {pid}, which sent an account without waiting to be taken, "
                                        "as no fixture server does, and ended before it could be named")
                sock.close()
                continue
            why, journal = examined(pid, self.run_dir) if self.checked else (None, None)
            if why is not None:
                self.refused.append(why)
                sock.close()
                continue
            account = Account(pid, journal)
            try:
                sock.send(b"\n")  # taken: the server, waiting for this, goes on
            except OSError:
                sock.close()
                continue
            sock.setblocking(False)
            self.accounts.append(account)
            self._open[sock.fileno()] = (sock, account)
            if self._selector is not None:
                self._selector.register(sock, selectors.EVENT_READ, self._tag)

    def _read(self, fd: int) -> bool:
        """One read from `fd`; False when nothing more is waiting (or it closed)."""
        sock, account = self._open[fd]
        try:
            data = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            data = b""
        if not data:
            self._forget(fd)
            return False
        self.received += len(data)
        for line in account.lines.feed(data):
            self._take(account, line)
        return True

    def _take(self, account: Account, line: bytes) -> None:
        try:
            raw = json.loads(line)
        except ValueError:
            return
        if account.journal is None:  # the first line names the journal
            account.journal = self._journal_named(account, raw)
            return
        if account.cut or account.size + len(line) > ACCOUNT_CAP:
            account.cut = True
            return
        entry = entry_of(raw)
        if entry is not None:
            account.size += len(line)
            account.entries.append(entry)

    def _journal_named(self, account: Account, raw: object) -> Optional[Path]:
        named = raw.get("journal") if isinstance(raw, dict) else None
        if not isinstance(named, str):
            return None
        path = Path(named).resolve()
        claimed = account.started_with if self.checked else path
        if claimed is None or claimed != path or not path.is_relative_to(self.run_dir):
            self.refused.append(f"pid {account.pid} named a journal ({named}) that is not the one it was started "
                                "with, or not in this run")
            return None
        return path


def peer_pid(sock: socket.socket) -> Optional[int]:
    """The pid of the process that connected, as the kernel recorded it (Linux)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    pid, _, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    return int(pid) or None


def command_of(pid: int) -> Tuple[str, List[str], Dict[str, str]]:
    """The executable, argv and environment of `pid` from /proc (OSError if gone)."""
    exe = os.path.realpath(f"/proc/{pid}/exe")
    argv = [a.decode("utf-8", "replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]]
    pairs = (v.decode("utf-8", "replace").partition("=")
             for v in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if v)
    return exe, argv, {name: value for name, _, value in pairs}


def sent_unasked(sock: socket.socket) -> bool:
    """Whether anything waits to be read on `sock` (looked at, not taken)."""
    try:
        return bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except OSError:  # nothing waiting (EAGAIN), or the connection is broken
        return False


def gone(pid: int) -> bool:
    """Whether `pid` has ended (no longer there, or a zombie waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True
    state = stat.rpartition(")")[2].split()  # the command name may hold spaces and brackets
    return bool(state) and state[0] in ("Z", "X")


def journal_named(argv: List[str]) -> Optional[Path]:
    """The journal a server's command line names (`--journal FILE`)."""
    at = argv.index("--journal") if "--journal" in argv else -1
    return Path(argv[at + 1]).resolve() if 0 <= at < len(argv) - 1 else None


def examined(pid: Optional[int], run_dir: Path) -> Tuple[Optional[str], Optional[Path]]:
    """Why the process `pid` is not one of this run's fixture servers (None when it
    is), and the journal it was started with: /proc is read once for both, while
    the server waits for the runner's word."""
    if pid is None:
        return "a connection whose process the kernel did not name", None
    try:
        exe, argv, environ = command_of(pid)
    except OSError:
        return f"pid {pid}, whose process could not be read", None
    said = f"pid {pid} ({' '.join(argv)[:160]})"
    if exe != os.path.realpath(sys.executable):
        return f"{said}: not this Python ({exe})", None
    if argv[1:3] != ["-I", "-S"] or len(argv) < 4:
        return f"{said}: not started in isolated mode (-I -S) as the lab starts its servers", None
    script = Path(argv[3]).resolve()
    if script.parent != SERVERS.resolve() or script.name not in FIXTURES:
        return f"{said}: not a fixture script of {SERVERS}", None
    if any(environ.get(name) not in (None, os.environ.get(name)) for name in LOADER_VARIABLES):
        return f"{said}: started with a loader variable ({', '.join(LOADER_VARIABLES)}) this runner does not have", None
    journal = journal_named(argv)
    if journal is None or not journal.is_relative_to(run_dir) or ITEM_DIRECTORY.match(journal.parent.name) is None:
        return f"{said}: its journal is not in an item's directory of this run", None
    return None, journal


def proven(verdict: "Verdict", journals: Sequence[HeldJournal]) -> None:
    """A pass counts only when its servers' accounts, as the runner received
    them (`journals`), show what the pass rests on (the item's proof,
    checks.items.proofs); otherwise it is ERROR, saying what they do not show."""
    from checks.items import by_number  # the items import the harness, which this module must not

    if verdict.status != "pass":
        return
    item = by_number(verdict.number)
    if item is None:
        missing = ["an item by that number"]
    elif not journals:
        missing = ["any of the item's servers: none sent the runner its account"]
    elif any(j.account.cut for j in journals):
        missing = ["all of the conversation: an account ran past what the runner keeps"]
    else:
        missing = item.proof(journals) if item.proof is not None else []
    if missing:
        verdict.status = "error"
        verdict.message = ("not counted: the worker said pass, but the servers' own accounts, sent to the runner, "
                           "do not show " + "; ".join(missing))
