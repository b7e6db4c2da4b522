"""The runner's side of a run: the code under test runs in a worker process;
only the runner decides what the report says and how the run ends.

`run_isolated` starts `checks.worker` in a session of its own, reads its
events from a private pipe, and watches it with a deadline that moves with
every sign of progress (any byte from the worker), so a slow machine is never
mistaken for a hung worker, while a worker that stops making progress is
ended, and no run outlasts the time its items could take. Whatever way the
worker ends (it finishes, exits early with any status, crashes, hangs, leaves
threads or processes behind), the outcome says so in `problems`; every
process the run left is killed and named.

The worker's events are taken by type (`checks.outcome`). This is a learner's
own check of their own work, so the worker's word is taken: grading mode
(`checks.grading`) is what holds a submission's verdicts to evidence the
worker cannot write.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple

from checks import reaper
from checks.lines import Lines
from checks.fixtures import Journal
from checks.harness import BLOCKED_GRACE, Verdict, longest
from checks.outcome import Account, Event, Outcome, event_of

STREAM_CAP = 64 * 1024  # bytes kept of what the worker writes to its real stdout and stderr
EVENT_CAP = 16 * 1024 * 1024  # bytes of one event: a verdict's wire is capped far below (checks.trace)
PROGRESS_SLACK = 5.0  # at least this (or the item limit, if longer) beyond an item's own limit,
# before a silent worker counts as hung: the harness reports every item within harness.longest(limit),
# which is less


# How grading mode starts a worker (checks.grading): the request, with the channel's
# descriptor in it, to the command and environment that run it.
Launch = Callable[[Dict[str, Any]], Tuple[List[str], Dict[str, str]]]


class Witness(Protocol):
    """What the runner holds beside the worker's word in grading mode
    (checks.grading): connections it watches on the run's selector, and what it
    makes of each verdict."""

    @property
    def received(self) -> int:
        """Bytes it has taken: progress of the run, as the worker's are."""

    def watch(self, selector: selectors.BaseSelector, tag: object) -> None: ...

    def ready(self, fd: int) -> None: ...

    def weigh(self, verdict: Verdict, outcome: Outcome) -> None: ...

    def pids(self) -> List[int]: ...

    def problems(self) -> List[str]: ...

    def close(self) -> None: ...


class Worker:
    """The worker process, in a session of its own. Forked from the runner where
    the system can fork (the modules the items need are then already loaded,
    which saves starting an interpreter), started afresh elsewhere, or by the
    command `launch` gives. The target is imported only in the worker, never here."""

    def __init__(self, request: Dict[str, Any], lab_dir: str, launch: Optional[Launch] = None) -> None:
        events_r, events_w = os.pipe()
        place = {"MCP_LAB_RUN_DIR": lab_dir}
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        request = {**request, "fd": events_w}
        self._popen: "Optional[subprocess.Popen[bytes]]" = None
        self._status: Optional[int] = None
        if launch is not None:
            argv, env = launch(request)
            self._popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w,
                                           pass_fds=(events_w,), start_new_session=True, env=env)
            self.pid = self._popen.pid
        elif hasattr(os, "fork"):
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:  # the worker
                try:
                    os.setsid()
                    reaper.die_with_parent()
                    devnull = os.open(os.devnull, os.O_RDONLY)
                    for source, target in ((devnull, 0), (out_w, 1), (err_w, 2)):
                        os.dup2(source, target)
                    for fd in (devnull, events_r, out_r, err_r, out_w, err_w):
                        os.close(fd)
                    os.environ.update(place)
                    from checks.worker import serve
                    serve(request)
                finally:
                    os._exit(70)
            self.pid = pid
        else:
            self._popen = subprocess.Popen(
                [sys.executable, "-m", "checks.worker", json.dumps(request)], stdin=subprocess.DEVNULL,
                stdout=out_w, stderr=err_w, pass_fds=(events_w,), start_new_session=True,
                env={**os.environ, **place})
            self.pid = self._popen.pid
        for fd in (events_w, out_w, err_w):
            os.close(fd)
        self.fds = (events_r, out_r, err_r)

    def poll(self) -> Optional[int]:
        """The exit status (negative: the signal that ended it), or None while it runs."""
        if self._popen is not None:
            return self._popen.poll()
        if self._status is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return self._status
            if pid == self.pid:
                self._status = os.waitstatus_to_exitcode(status)
        return self._status

    def wait(self, within: float) -> Optional[int]:
        deadline = time.monotonic() + within
        while self.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        return self.poll()

    def kill(self) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class Run:
    """One worker process and what it has said so far."""

    def __init__(self, request: Dict[str, Any], lab_dir: str, launch: Optional[Launch] = None,
                 witness: Optional[Witness] = None) -> None:
        self.process = Worker(request, lab_dir, launch)
        self.events_fd, out_fd, err_fd = self.process.fds
        self.streams: Dict[int, bytearray] = {out_fd: bytearray(), err_fd: bytearray()}
        self.selector = selectors.DefaultSelector()
        for fd in [self.events_fd, *self.streams]:
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ)
        self.witness = witness
        if witness is not None:
            witness.watch(self.selector, "witness")
        self.lines = Lines(EVENT_CAP)
        self.from_worker = 0  # bytes read from the channel
        self.open_fds = {self.events_fd, *self.streams}

    @property
    def received(self) -> int:
        """Bytes from the worker (and what the witness took): progress, even before a line is whole."""
        return self.from_worker + (self.witness.received if self.witness else 0)

    def read(self, timeout: float) -> List[Event]:
        """Events that arrived within `timeout` seconds (raw output is kept aside;
        what the witness watches goes to it)."""
        events: List[Event] = []
        for key, _ in self.selector.select(timeout):
            fd = int(key.fd)
            if key.data == "witness" and self.witness is not None:
                self.witness.ready(fd)
                continue
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not data:
                self.selector.unregister(fd)
                self.open_fds.discard(fd)
                continue
            if fd == self.events_fd:
                self.from_worker += len(data)
                events += [e for e in map(event_of, self.lines.feed(data)) if e is not None]
            else:
                kept = self.streams[fd]
                kept += data[:max(0, STREAM_CAP - len(kept))]
        return events

    @property
    def channel_open(self) -> bool:
        return self.events_fd in self.open_fds

    def raw_output(self) -> str:
        return b"".join(bytes(b) for b in self.streams.values()).decode("utf-8", "replace")

    def close(self) -> None:
        if self.witness is not None:
            self.witness.close()
        self.selector.close()
        for fd in self.process.fds:
            try:
                os.close(fd)
            except OSError:
                pass


def run_isolated(request: Dict[str, Any], lab_dir: str,
                 on_event: Callable[[str, Outcome], None] = lambda kind, outcome: None,
                 on_idle: Optional[Callable[[], None]] = None, launch: Optional[Launch] = None,
                 witness: Optional[Witness] = None) -> Outcome:
    """Run the items of `request` in a worker; tell `on_event` the kind of each
    event as it is taken, with the outcome so far (a verdict is then the last of
    `outcome.verdicts`; what each item printed arrives before its verdict). In
    grading mode, `launch` starts the worker and `witness` weighs each verdict."""
    limit = float(request["limit"])
    patience = limit + BLOCKED_GRACE + max(PROGRESS_SLACK, limit)
    # However it keeps showing progress, no run outlasts this: the import (as
    # patient as an item) and every item one after another, within its limit.
    started = time.monotonic()
    ceiling = started + 2 * patience + len(request["items"]) * longest(limit)
    account = Account(request["items"])
    outcome, running = account.outcome, account.running
    run = Run(request, lab_dir, launch, witness)
    deadline = time.monotonic() + patience
    try:
        while run.channel_open and time.monotonic() < min(deadline, ceiling):
            received = run.received
            for event in run.read(min(0.1, max(0.0, deadline - time.monotonic()))):
                kind = account.apply(event)
                if kind == "verdict" and witness is not None:
                    witness.weigh(outcome.verdicts[-1], outcome)
                if kind is not None:
                    on_event(kind, outcome)
            if run.received > received:  # progress, even part of a line: the clock starts again
                deadline = time.monotonic() + patience
            if on_idle is not None:
                on_idle()
            if not run.channel_open or account.done:
                break
        done = account.done
        ended = run.process.wait(5.0 if done or not run.channel_open else 0.0)
        if run.lines.dropped:
            outcome.problems.append(f"{run.lines.dropped} event(s) from the worker were longer than "
                                    f"{EVENT_CAP // 2 ** 20} MB and were not read")
        if not done and outcome.load_error is None:
            if ended is None and time.monotonic() >= ceiling:
                outcome.problems.append(f"the run went on for longer than its items could take "
                                        f"({ceiling - started:.0f} s); it was stopped")
            elif ended is None:
                during = (f" while item(s) {', '.join(map(str, running))} ran" if running
                          else " while the code under test was being imported" if outcome.model == "" else "")
                outcome.problems.append(f"the run made no progress for {patience:g} s{during} "
                                        "(an endless loop that holds the interpreter?); it was stopped")
            else:
                during = (f" while item(s) {', '.join(map(str, running))} ran" if running
                          else " at import" if outcome.model == "" else "")
                outcome.problems.append(f"the code under test ended the process (exit status {ended}){during}")
    finally:
        # The worker first (its children are then handed to us), then whatever
        # is left, named before it is killed so the report can say what it was.
        end_worker(run.process)
        # In grading mode the run directory is the worker's to write: the witness names the servers.
        left = reaper.left_behind(witness.pids() if witness is not None else journal_pids(lab_dir))
        outcome.killed = [f"{p.name} (pid {p.pid})" for p in left]
        reaper.kill_all(p.pid for p in left)
        end_group(run.process.pid)
        for _ in range(3):  # what was running may have written a little more
            run.read(0.0)
        outcome.outside += run.raw_output()
        if witness is not None:
            outcome.problems += witness.problems()
        run.close()
    if outcome.killed:
        outcome.problems.append(f"{len(outcome.killed)} process(es) were still running after the run "
                                "and were killed")
    return outcome


def end_worker(worker: Worker) -> None:
    """Kill the worker if it still runs, and reap it."""
    worker.kill()
    worker.wait(reaper.SETTLE)


def end_group(group: int) -> None:
    """A last sweep of the worker's process group (all a system without /proc can name)."""
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        pass
    reaper.reap_adopted()


def journal_pids(lab_dir: str) -> List[int]:
    """The fixture servers the run started, from their journals."""
    pids = []
    for root, _, files in os.walk(lab_dir):
        for name in files:
            if name.endswith(".jsonl"):
                pid = Journal("", Path(root, name)).pid
                if pid is not None:
                    pids.append(pid)
    return pids
