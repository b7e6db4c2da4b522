"""Fixture servers for one item: configs with journals, and what the journals say.

Each item gets fresh server processes with their own journal files in a
temporary directory. Verdicts come from those journals (what a server really
received, what it answered, when) and from the process table, never from the
client's account of itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from checks.reaper import alive
from checks.target import ROOT, Target

SERVERS = ROOT / "servers"

Json = Dict[str, Any]


class HarnessError(Exception):
    """The item could not be judged (a fixture would not start, and so on)."""


class CannotJudgeHere(HarnessError):
    """This machine or these options cannot judge the item (an extra not
    installed, a --limit below what a correct client needs): nothing is said
    about the code, so the verdict points at no file."""


@dataclass
class Entry:
    t: float
    kind: str  # "start", "in", "out", "dropped", "exit"
    raw: Json

    @property
    def msg(self) -> Json:
        message = self.raw.get("msg")
        return message if isinstance(message, dict) else {}


def entry_of(raw: Any) -> Optional[Entry]:
    """One journal line, parsed, as an entry (None when it is not an object)."""
    if not isinstance(raw, dict):
        return None
    at = raw.get("t")
    return Entry(float(at) if isinstance(at, (int, float)) else 0.0, str(raw.get("kind")), raw)


def parsed_line(line: bytes) -> Optional[Entry]:
    """One journal line as an entry; None for a line cut short by a kill (nothing
    to learn from it) or one that is not an object."""
    try:
        raw = json.loads(line)
    except ValueError:
        return None
    return entry_of(raw)


class Journal:
    """The wire as one fixture server saw it. The file only grows, so it is read
    on from where the last look ended: an item that watches a journal while the
    server writes it (every few milliseconds) parses each line once."""

    def __init__(self, alias: str, path: Path) -> None:
        self.alias = alias
        self.path = path
        self._read: List[Entry] = []
        self._offset = 0  # bytes of whole lines parsed so far
        self._lock = threading.Lock()

    def entries(self) -> List[Entry]:
        with self._lock:
            try:
                with self.path.open("rb") as file:
                    file.seek(self._offset)
                    fresh = file.read()
            except FileNotFoundError:
                return []
            whole = fresh.rfind(b"\n") + 1  # a last line without its newline is still being written
            self._offset += whole
            for line in fresh[:whole].splitlines():
                found = parsed_line(line)
                if found is not None:
                    self._read.append(found)
            return list(self._read)

    def each(self) -> Iterator[Entry]:
        """The entries one by one, read as they are asked for (for a look at the
        first few of a journal that may run to megabytes)."""
        try:
            file = self.path.open("rb")
        except FileNotFoundError:
            return
        with file:
            for line in file:
                found = parsed_line(line)
                if found is not None:
                    yield found

    @property
    def pid(self) -> Optional[int]:
        """From the first entry: the whole journal of a busy server runs to megabytes."""
        start = next((e for e in self.each() if e.kind == "start"), None)
        pid = start.raw.get("pid") if start else None
        return pid if isinstance(pid, int) and not isinstance(pid, bool) else None

    def requests(self, method: Optional[str] = None) -> List[Entry]:
        return [e for e in self.entries() if e.kind == "in" and "id" in e.msg
                and (method is None or e.msg.get("method") == method)]

    def calls(self, tool: Optional[str] = None) -> List[Entry]:
        return [e for e in self.requests("tools/call")
                if tool is None or (e.msg.get("params") or {}).get("name") == tool]

    def reply_to(self, request: Entry) -> Optional[Entry]:
        request_id = request.msg.get("id")
        return next((e for e in self.entries() if e.kind == "out" and e.msg.get("id") == request_id
                     and e.t >= request.t), None)


ENDLESS = 10  # the same request, answered, sent this many times: a loop that will not end by itself


@dataclass(frozen=True)
class Repeated:
    """A request the client kept sending after it was answered (a loop that never ends)."""

    server: str
    method: str
    times: int


def repeated_request(journals: List[Journal]) -> Optional[Repeated]:
    """The request sent most often with the same params (their `_meta` aside, which may
    differ each time), every one of them answered, when that is ENDLESS or more times: the
    servers did their part each time, and the client asked again. None when there is none."""
    found: Optional[Repeated] = None
    for journal in journals:
        answered = {json.dumps(e.msg.get("id")) for e in journal.entries() if e.kind == "out"}
        counts: Dict[str, int] = {}
        methods: Dict[str, str] = {}
        for request in journal.requests():
            if json.dumps(request.msg.get("id")) not in answered:
                continue
            params = request.msg.get("params")
            shape = json.dumps([request.msg.get("method"), {k: v for k, v in params.items() if k != "_meta"}
                                if isinstance(params, dict) else params], sort_keys=True)
            counts[shape] = counts.get(shape, 0) + 1
            methods[shape] = str(request.msg.get("method"))
        for shape, times in counts.items():
            if times >= ENDLESS and (found is None or times > found.times):
                found = Repeated(journal.alias, methods[shape], times)
    return found


class Lab:
    """Makes fixture-server specs for the target package, one journal each."""

    def __init__(self, target: Target, item: int = 0) -> None:
        self.target = target
        # Under the runner, inside its run directory, so the runner can find the
        # journals (and the servers' pids) whatever happens to this process; named
        # by item, so the servers' accounts the runner holds are told apart by item.
        self._dir = tempfile.TemporaryDirectory(prefix=f"mcp-lab-{item}-", dir=os.environ.get("MCP_LAB_RUN_DIR"))
        # Under the runner, where each server also sends its journal (checks.accounts).
        self.evidence = os.environ.get("MCP_LAB_EVIDENCE")
        self.directory = Path(self._dir.name)
        self.journals: List[Journal] = []
        self._own: List["subprocess.Popen[bytes]"] = []  # servers the judge started itself (over HTTP)

    def server(self, server: str, alias: Optional[str] = None, *extra: str,
               timeout: Optional[float] = None, label: Optional[str] = None, **fields: Any) -> Any:
        """A `ServerSpec` of the target for the fixture `server`, journalled (under
        `label` in the trace, when two scenarios use one alias)."""
        alias = alias or server
        path = self.journal_path(label or alias)
        self.journals.append(Journal(label or alias, path))
        args = (*self.launch(server, path), *extra)
        return self.spec(alias, sys.executable, args, {}, str(ROOT), timeout, **fields)

    def spec(self, *args: Any, **fields: Any) -> Any:
        """The target's `ServerSpec`; the reference's (host/config.py) for a key only
        its layers read (a per-tool timeout, tasks, a URL), so an item of the nine
        needs nothing of the learner's package but the day's client."""
        if fields.keys() - {"timeout", "trusted", "inherit_env"}:
            return self.target.module("host.config").HostServerSpec(*args, **fields)
        return self.target.config.ServerSpec(*args, **fields)

    def journal_path(self, name: str) -> Path:
        """Where the next server's journal goes: named as the trace names it."""
        return self.directory / f"{name}-{len(self.journals)}.jsonl"

    def launch(self, server: str, path: Path) -> List[str]:
        """The interpreter's arguments that start the fixture `server` journalling to `path`.
        -I: no PYTHON* variable or user site can put other code in a fixture (the
        runner refuses an account from one started otherwise); -S: the fixtures use
        the standard library only (a test holds them to it), so skipping
        site-packages costs nothing and saves ~30 ms."""
        evidence = ["--evidence", self.evidence] if self.evidence else []
        return ["-I", "-S", str(SERVERS / f"{server}.py"), "--journal", str(path), *evidence]

    async def http_server(self, server: str, alias: str, *extra: str, **fields: Any) -> Any:
        """A fixture the judge starts itself on a free port of 127.0.0.1 (`--http 0`),
        and the target's `ServerSpec` for its URL: a remote server is not the
        client's to start. It is stopped when the item ends."""
        import anyio  # the items' loop; this module is otherwise sync

        path = self.journal_path(alias)
        journal = Journal(alias, path)
        self.journals.append(journal)
        process = subprocess.Popen([sys.executable, *self.launch(server, path), "--http", "0", *extra],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, cwd=str(ROOT))
        self._own.append(process)
        deadline = time.monotonic() + 30.0  # a start on the busiest machine; only a broken fixture waits it out
        while True:
            listening = next((e for e in journal.entries() if e.kind == "listening"), None)
            if listening is not None:
                return self.spec(alias, "", url=str(listening.raw["url"]), **fields)
            if process.poll() is not None or time.monotonic() > deadline:
                raise HarnessError(f"the fixture '{alias}' over HTTP did not start (see {path})")
            await anyio.sleep(0.005)

    def stop_own(self) -> None:
        """End the servers the judge started (before the process table is read)."""
        for process in self._own:
            if process.poll() is None:
                process.kill()
            process.wait()
        self._own.clear()

    def journal(self, alias: str) -> Journal:
        return [j for j in self.journals if j.alias == alias][-1]

    def survivors(self) -> List[str]:
        """Fixture processes of this item still running (or never reaped); the
        judge's own HTTP fixtures are stopped first, being no client's to end."""
        self.stop_own()
        pids = {j.pid: j.alias for j in self.journals if j.pid is not None}
        return [f"{pids[pid]} (pid {pid})" for pid in still_running(list(pids))]

    def kill_survivors(self) -> None:
        self.stop_own()
        for journal in self.journals:
            pid = journal.pid
            if pid is not None and process_exists(pid):
                try:
                    os.kill(pid, 9)
                    os.waitpid(pid, os.WNOHANG)
                except (OSError, ChildProcessError):
                    pass

    def close(self) -> None:
        self._dir.cleanup()


def process_exists(pid: int) -> bool:
    """True while `pid` runs, or is a zombie that this process failed to reap."""
    return alive(pid, count_unreaped=True)


def still_running(pids: List[int], within: float = 2.0) -> List[int]:
    """The pids still running after waiting up to `within` seconds.

    A process signalled with SIGKILL is not gone the instant the signal is
    sent (on a busy machine it must first be scheduled), so the process table
    is watched until it settles or the deadline passes.
    """
    deadline = time.monotonic() + within
    left = [p for p in pids if process_exists(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.01)
        left = [p for p in left if process_exists(p)]
    return left
