"""The fixture servers' own accounts of an item, sent to the runner as they
happen (grading mode).

Every server an item starts is given `--evidence SOCKET`, and sends each line
of its journal there as it writes it (servers/journal.py, `Journal`). The
runner listens; the worker, where the code under test runs, never holds the
listening socket, and the socket's folder is read-only to it. What arrives is
kept here, journal by journal, and it is what the runner checks a claimed pass
against and draws the page from.

Who is speaking is taken from the kernel, not from what a line claims: each
connection's peer (SO_PEERCRED) must be a process of the worker's user, of
this Python, started in isolated mode (-I -S) on a fixture script of the
judge, journalling into a directory of this item and sending here, with no
loader variable (LD_PRELOAD...) in its environment, and one account a
process. Anything else that connects is refused and named, and the item's
pass does not count. What that cannot tell apart, a Python of the
submission's own made to look like a fixture server (its command line is its
own memory), labs/INSTRUCTORS.md says.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import selectors
import socket
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Tuple

from checks.fixtures import Entry, Journal, entry_of
from checks.lines import Lines

if TYPE_CHECKING:
    from checks.harness import Verdict

ACCOUNT_CAP = 64 * 1024 * 1024  # bytes kept of one server's account; an honest item sends well under 1 MB
LINE_CAP = 16 * 1024 * 1024
MAX_ACCOUNTS = 200  # servers of one item; the busiest starts a few dozen
ITEM_DIRECTORY = re.compile(r"^mcp-lab-(\d+)-")  # checks.fixtures.Lab names each item's directory so
FIXTURES = {"notes.py", "tickets.py", "misbehave.py"}  # the scripts checks.fixtures.Lab starts
LOADER_VARIABLES = ("GCONV_PATH", "GLIBC_TUNABLES")  # beside every LD_*: what could put other code in a server


@dataclass
class Account:
    """What one server has sent: its journal's path (from its first line) and entries."""

    pid: Optional[int]
    journal: Optional[Path]  # the journal its command line names, looked up while it waited
    journal_named: Optional[str] = None  # what its first line named (None until it came)
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


@dataclass(frozen=True)
class Peer:
    """Who may send accounts here: as the worker's servers see the judge."""

    uid: int  # the worker's user
    servers: Path  # the fixture scripts' folder
    run_dir: Path  # the item's run directory (journals go in an item directory in it)
    evidence: str  # this socket's path


class Accounts:
    """The listening socket at `path` (a folder of the runner's) and every
    server's account of one item, from the servers `peer` describes."""

    def __init__(self, path: Path, peer: Peer) -> None:
        self.path = str(path)
        self.peer = peer
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        os.chmod(self.path, 0o666)  # the worker's user connects; only the runner's folder holds it
        self.listener.listen(128)
        self.listener.setblocking(False)
        self.python = os.stat(os.path.realpath(sys.executable))
        self.received = 0  # bytes from every server: progress of the run
        self.refused: List[str] = []
        self._open: Dict[int, Tuple[socket.socket, Account]] = {}
        self.accounts: List[Account] = []
        self._selector: Optional[selectors.BaseSelector] = None
        self._tag: object = None

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
            if pid is not None and gone(pid):
                # Ended before it was looked at (a client may end a server it has just
                # started): a server sends nothing before our word, so there is nothing
                # to take. Something that sent all the same and ended is no server.
                if sent_unasked(sock):
                    self.refused.append(f"pid {pid}, which sent an account without waiting to be taken, "
                                        "as no fixture server does, and ended before it could be named")
                sock.close()
                continue
            why, journal = self.examined(pid)
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

    def examined(self, pid: Optional[int]) -> Tuple[Optional[str], Optional[Path]]:
        """Why the process `pid` is not one of this item's fixture servers (None
        when it is), and the journal it was started with: /proc is read once for
        all of it, while the server waits for the runner's word."""
        if pid is None:
            return "a connection whose process the kernel did not name", None
        if len(self.accounts) >= MAX_ACCOUNTS:
            return f"pid {pid}: more than {MAX_ACCOUNTS} servers in one item", None
        if pid in self.pids():
            return f"pid {pid}: a second account from one process", None
        try:
            uid, exe, argv, environ = command_of(pid)
        except (OSError, ValueError):
            return f"pid {pid}, whose process could not be read", None
        said = f"pid {pid} ({' '.join(argv)[:160]})"
        if uid != self.peer.uid:
            return f"{said}: not of the worker's user", None
        if (exe.st_dev, exe.st_ino) != (self.python.st_dev, self.python.st_ino):
            return f"{said}: not this Python", None
        if argv[1:3] != ["-I", "-S"] or len(argv) < 4:
            return f"{said}: not started in isolated mode (-I -S) as the lab starts its servers", None
        script = PurePosixPath(posixpath.normpath(argv[3]))
        if script.parent != PurePosixPath(self.peer.servers) or script.name not in FIXTURES:
            return f"{said}: not a fixture script of {self.peer.servers}", None
        loaders = sorted(name for name in environ if name.startswith("LD_") or name in LOADER_VARIABLES)
        if loaders:
            return f"{said}: started with a variable that puts other code in a program ({', '.join(loaders)})", None
        if argument(argv, "--evidence") != self.peer.evidence:
            return f"{said}: not sending its account here", None
        journal = argument(argv, "--journal")
        place = Path(posixpath.normpath(journal)) if journal else None
        if place is None or place.parent.parent != self.peer.run_dir or \
                ITEM_DIRECTORY.match(place.parent.name) is None:
            return f"{said}: its journal is not in an item's directory of this run", None
        return None, place

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
        if account.journal_named is None:  # the first line names the journal
            named = raw.get("journal") if isinstance(raw, dict) else None
            account.journal_named = str(named)
            if account.journal is None or not isinstance(named, str) or \
                    Path(posixpath.normpath(named)) != account.journal:
                self.refused.append(f"pid {account.pid} named a journal ({named}) that is not the one it was "
                                    "started with")
                account.journal = None
            return
        if account.cut or account.size + len(line) > ACCOUNT_CAP:
            account.cut = True
            return
        entry = entry_of(raw)
        if entry is not None:
            account.size += len(line)
            account.entries.append(entry)


def peer_pid(sock: socket.socket) -> Optional[int]:
    """The pid of the process that connected, as the kernel recorded it (Linux)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    pid, _, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    return int(pid) or None


def command_of(pid: int) -> Tuple[int, os.stat_result, List[str], Dict[str, str]]:
    """The real user, executable, argv and environment of `pid`, from /proc
    (OSError once it is gone)."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii", errors="replace")
    uid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("Uid:")))
    exe = os.stat(f"/proc/{pid}/exe")
    argv = [a.decode("utf-8", "replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]]
    pairs = (v.decode("utf-8", "replace").partition("=")
             for v in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if v)
    return uid, exe, argv, {name: value for name, _, value in pairs}


def argument(argv: List[str], name: str) -> Optional[str]:
    """The value after `name` in a command line."""
    at = argv.index(name) if name in argv else -1
    return argv[at + 1] if 0 <= at < len(argv) - 1 else None


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
