"""Tasks, the loop: follow a task from its handle to its result.

    result = await run_task(client, handle, limit=600)   # a tool result, never raises for the task

- 2026-07-28: poll `tasks/get` at the server's latest `pollIntervalMs`
  (doubled after each failed poll), answer each new `inputRequests` key once
  with `tasks/update`, and stop at a terminal status (`tasks.settled`).
- 2025-11-25: wait in `tasks/result`, which carries the final result; the
  server's questions (`elicitation/create`) arrive while it is open and the
  stdio client answers them beside it. `tasks/get` is polled alongside only to
  show the status and to notice a task that ended without a result.

When the caller gives up (its limit, Ctrl-C, a cancelled scope) the task is
cancelled on the server with `tasks/cancel` before the error goes back; its
record stays in the tasks file unless the server confirmed the cancel. When
the server goes away mid-task, the task id is kept (`TaskBook`) and, if the
caller can reconnect, polled again on the new connection; a server that has
forgotten it answers -32602 and the caller is told so in plain words.

Over 300 lines because both eras' loops, the cancel on every way out, the
reconnect and the tasks file are one story; the pure reading of task states is
in tasks.py.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Awaitable, Callable, Dict, Optional, Protocol, Set, Tuple

import anyio

from ..elicitation import Elicitor
from ..errors import ClientError, McpError, RequestTimeout, ServerGone
from ..errors import error_result, reason
from ..host import safe_files
from ..jsonrpc import Json
from ..lifecycle.forms import answer
from ..stdio_client import ProgressHandler
from ..tasks import TaskState, read_state, settled
from ..untrusted import shown
from .support import UNKNOWN_TASK, missing_capability, same_task

MAX_POLL_FAILURES = 5  # polls in a row that get no answer before the wait is given up
CANCEL_TIMEOUT = 5.0  # a tasks/cancel on the way out waits this long at most

StatusHandler = Callable[[str, TaskState], None]  # (alias, the task's latest state)


class TaskServer(Protocol):
    alias: str
    era: str
    elicitor: Optional[Elicitor]

    async def request(self, method: str, params: Optional[Json] = None, *, timeout: Optional[float] = None,
                      on_progress: Optional[ProgressHandler] = None, accept: Tuple[str, ...] = ...) -> Json: ...


Reconnect = Callable[[], Awaitable[Optional[TaskServer]]]


@dataclass
class TaskRecord:
    alias: str
    tool: str
    task_id: str
    era: str


@dataclass
class TaskPlan:
    """How one call follows a task: its limit in all, what the server declared
    (handshake era: whether it runs tool calls as tasks), whether `optional`
    tools run as tasks, where status goes, and how to reconnect."""

    limit: float = 600.0
    server_capabilities: Json = field(default_factory=dict)
    prefer: bool = False
    on_status: Optional[StatusHandler] = None
    book: Optional["TaskBook"] = None
    reconnect: Optional[Reconnect] = None


class TaskBook:
    """The tasks not finished yet, for this run and (with a path) across runs,
    so a reconnect or a later `resume` can ask about them again.

    The file is shared: other clients in the same directory keep their tasks in
    it too. Every change re-reads it under a lock and writes it whole by rename
    (safe_files), so one client's finish never drops another's record, and a
    planted link or FIFO is refused instead of followed."""

    def __init__(self, path: Optional[str] = None) -> None:
        self.path = Path(path) if path else None
        self.open: Dict[str, TaskRecord] = {}
        if self.path is not None:
            with safe_files.locked(self.path):  # UnsafeFile: the caller says it in one line
                self.open = self._read()

    def _read(self) -> Dict[str, TaskRecord]:
        assert self.path is not None
        text = safe_files.read(self.path)
        try:
            saved = json.loads(text) if text else []
            return {r["task_id"]: TaskRecord(**r) for r in saved if isinstance(r, dict)}
        except (ValueError, TypeError, KeyError):
            return {}  # a damaged state file loses only the resume hints

    def add(self, record: TaskRecord) -> None:
        self.open[record.task_id] = record
        self._save(record.task_id, record)

    def done(self, task_id: str) -> None:
        if self.open.pop(task_id, None) is not None:
            self._save(task_id, None)

    def _save(self, task_id: str, record: Optional[TaskRecord]) -> None:
        """Apply one change to the file as it is now, under the lock."""
        if self.path is None:
            return
        try:
            with safe_files.locked(self.path):
                records = self._read()
                if record is None:
                    records.pop(task_id, None)
                else:
                    records[task_id] = record
                if not records:  # nothing left to resume: leave no file behind
                    safe_files.remove(self.path)
                else:
                    safe_files.replace(self.path, json.dumps([asdict(r) for r in records.values()],
                                                             ensure_ascii=True))
        except OSError:
            pass  # resume is a convenience (and a planted file is never written): the call goes on


def forgotten(alias: str, task_id: str, error: McpError) -> Json:
    return error_result(f"Server '{alias}' no longer knows task {shown(task_id, 40)} ({shown(error.message, 120)}): "
                        "it expired, or the server was restarted and lost it. Its work may be lost; "
                        "call the tool again if the result is still needed.")


async def cancel_task(server: TaskServer, task_id: str) -> bool:
    """Ask the server to stop a task; bounded, shielded, and quiet on failure
    (the caller is already on its way out). True when the server acknowledged it."""
    with anyio.CancelScope(shield=True):
        try:
            await server.request("tasks/cancel", {"taskId": task_id}, timeout=CANCEL_TIMEOUT)
        except ClientError:
            return False
    return True


async def run_task(server: TaskServer, handle: TaskState, tool: str, plan: TaskPlan) -> Json:
    """Follow one task to its end and return the tool result it stands for."""
    book, limit, on_status, reconnect = plan.book or TaskBook(), plan.limit, plan.on_status, plan.reconnect
    book.add(TaskRecord(server.alias, tool, handle.task_id, server.era))
    if on_status is not None:
        on_status(server.alias, handle)
    # The record goes when the task ended or the server confirmed its cancel; otherwise
    # the work may still be going on, and a later `tasks` must be able to ask about it.
    finished = False
    try:
        with anyio.fail_after(limit):
            result = await _follow(server, handle, on_status, reconnect)
        finished = True
        return result
    except TimeoutError:
        finished = await cancel_task(server, handle.task_id)
        return error_result(f"Task {shown(handle.task_id, 40)} on '{server.alias}' did not finish within "
                            f"{limit:g} s; " + ("it was cancelled on the server." if finished else
                                                "tasks/cancel was sent, but the server did not confirm it."))
    except anyio.get_cancelled_exc_class():
        finished = await cancel_task(server, handle.task_id)  # Ctrl-C, a signal, a caller's scope: stop it
        raise
    except ServerGone as exc:  # the id is kept for a later resume
        return error_result(f"{reason(exc)}; task {shown(handle.task_id, 40)} was still running. Its id is kept: "
                            "after the server is back, ask about it again.")
    except Exception:  # a broken answer (a bad status, a refused update): stop the work, then report
        finished = await cancel_task(server, handle.task_id)
        raise
    finally:
        if finished:
            book.done(handle.task_id)


async def _follow(server: TaskServer, state: TaskState, on_status: Optional[StatusHandler],
                  reconnect: Optional[Reconnect]) -> Json:
    try:
        if server.era == "legacy":
            return await _follow_legacy(server, state, on_status)
        return await _follow_current(server, state, on_status)
    except ServerGone:
        again = await reconnect() if reconnect is not None else None
        if again is None:
            raise
        return await _follow_current(again, state, on_status) if again.era != "legacy" \
            else await _follow_legacy(again, state, on_status)  # tasks/get first: it may be forgotten


async def _poll(server: TaskServer, task_id: str) -> "Json | McpError | RequestTimeout":
    """One `tasks/get`: its result, or the error it got (a lost server raises)."""
    try:
        return await server.request("tasks/get", {"taskId": task_id}, accept=("complete", "task"))
    except McpError as exc:
        return exc
    except RequestTimeout as exc:  # a slow poll is not a failed task
        return exc


async def _follow_current(server: TaskServer, state: TaskState, on_status: Optional[StatusHandler]) -> Json:
    answered: Set[str] = set()
    failures = 0
    while True:
        outcome = settled(state)
        if outcome is not None:
            return outcome
        if state.status == "input_required":
            refused = await _answer_inputs(server, state, answered)
            if refused is not None:
                await cancel_task(server, state.task_id)
                return refused
        await anyio.sleep(state.poll_seconds * 2 ** min(failures, 5))
        polled = await _poll(server, state.task_id)
        if isinstance(polled, McpError) and polled.code == UNKNOWN_TASK:
            return forgotten(server.alias, state.task_id, polled)
        if isinstance(polled, McpError) and missing_capability(polled):
            return error_result(f"Server '{server.alias}' refused tasks/get: it says the tasks extension was "
                                f"not declared ({shown(polled.message, 120)}).")
        if isinstance(polled, ClientError):
            failures += 1
            if failures >= MAX_POLL_FAILURES:
                raise polled
            continue
        failures = 0
        state = same_task(read_state(polled, server.era), state.task_id)
        if on_status is not None:
            on_status(server.alias, state)


async def _answer_inputs(server: TaskServer, state: TaskState, answered: Set[str]) -> Optional[Json]:
    """Answer each new question once (the same keys repeat until the server
    has taken the answers in). A kind this client never declared ends the task."""
    replies: Json = {}
    for key, asked in state.input_requests.items():
        if key in answered:
            continue
        if asked.get("method") != "elicitation/create":
            return error_result(f"Server '{server.alias}' asked for {shown(str(asked.get('method')), 60)} during "
                                "a task; this client did not declare it, so the task was cancelled.")
        replies[key] = await answer(server.elicitor, server.alias, asked.get("params"), state.task_id)
    if replies:
        await server.request("tasks/update", {"taskId": state.task_id, "inputResponses": replies})
        answered.update(replies)
    return None


async def _follow_legacy(server: TaskServer, state: TaskState, on_status: Optional[StatusHandler]) -> Json:
    outcome: Dict[str, "Json | ClientError"] = {}

    async def fetch_result() -> None:
        # Long: tasks/result answers only when the task ends. Its own limit is
        # the caller's (run_task's fail_after), not a request timeout.
        try:
            outcome.setdefault("result", await server.request("tasks/result", {"taskId": state.task_id},
                                                              timeout=math.inf))
        except McpError as exc:
            outcome.setdefault("result", forgotten(server.alias, state.task_id, exc) if exc.code == UNKNOWN_TASK
                               else error_result(f"The task failed on the server (error {exc.code}: "
                                                 f"{shown(exc.message, 300)})."))
        except ClientError as exc:  # the server went away: said after the group, not inside it
            outcome.setdefault("result", exc)
        group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(fetch_result)
        try:
            await _watch_legacy(server, state, on_status, outcome)
        except ClientError as exc:
            outcome.setdefault("result", exc)
        group.cancel_scope.cancel()
    result = outcome["result"]
    if isinstance(result, ClientError):
        raise result
    return result


async def _watch_legacy(server: TaskServer, state: TaskState, on_status: Optional[StatusHandler],
                        outcome: Dict[str, "Json | ClientError"]) -> None:
    """Poll beside tasks/result: for the status line, and for a task that ends
    without a result (cancelled, forgotten)."""
    failures = 0
    while True:
        await anyio.sleep(state.poll_seconds * 2 ** min(failures, 5))
        polled = await _poll(server, state.task_id)
        if isinstance(polled, McpError) and polled.code == UNKNOWN_TASK:
            outcome.setdefault("result", forgotten(server.alias, state.task_id, polled))
            return
        if isinstance(polled, ClientError):
            failures += 1
            continue  # tasks/result is still the way the result comes
        failures = 0
        state = same_task(read_state(polled, server.era), state.task_id)
        if on_status is not None:
            on_status(server.alias, state)
        if state.status == "cancelled":  # no result will come: tasks/result would only fail
            outcome.setdefault("result", settled(state) or error_result("The task was cancelled on the server."))
            return
