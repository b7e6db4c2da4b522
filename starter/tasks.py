"""Tasks: a task's state in either era, and when the wait for it ends (E6).

No I/O: the reference client's loop around it is task_calls/task_runner.py,
which polls a task and hands each state it reads to `settled`.

A server may answer a long `tools/call` with a task handle instead of a
result. The two eras spell it differently and are not compatible:

- 2026-07-28 with the extension `io.modelcontextprotocol/tasks` (declared on
  every request): a flat handle `{"resultType": "task", "taskId", ...}`,
  `ttlMs`/`pollIntervalMs`, the final result or error inlined in `tasks/get`,
  questions as `inputRequests` answered with `tasks/update`.
- 2025-11-25: the client asks for a task with `params.task` when the tool's
  `execution.taskSupport` allows it; a nested `{"task": {...}}` handle,
  `ttl`/`pollInterval`, the final result from `tasks/result`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from .errors import McpError, ProtocolViolation, error_result  # noqa: F401 (extension E6)
from .jsonrpc import Json
from .untrusted import shown

STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
DEFAULT_POLL = 1.0  # seconds, when a server suggests nothing (what both SDKs use)
MIN_POLL, MAX_POLL = 0.05, 30.0  # a server's suggestion is kept inside these


@dataclass
class TaskState:
    """One snapshot of a task, in either era."""

    task_id: str
    status: str
    message: str = ""
    poll_seconds: float = DEFAULT_POLL
    ttl_seconds: Optional[float] = None  # None: kept without limit
    input_requests: Dict[str, Json] = field(default_factory=dict)
    result: Any = None  # 2026-07-28, completed: the tool result
    error: Any = None  # 2026-07-28, failed: the JSON-RPC error object


def _seconds(value: Any) -> Optional[float]:
    """Milliseconds as seconds; None for what is not a finite number of them (10**400
    is no float: its division would raise)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        try:
            return value / 1000 if math.isfinite(value / 1000) else None
        except OverflowError:
            return None
    return None


def read_state(body: Any, era: str) -> TaskState:
    """A task from a handle or a `tasks/get` result; ProtocolViolation if it is not one."""
    if not isinstance(body, dict):
        raise ProtocolViolation("a task that is not a JSON object")
    task_id, status = body.get("taskId"), body.get("status")
    if not isinstance(task_id, str) or not task_id:
        raise ProtocolViolation("a task without a taskId")
    if status not in STATUSES:
        raise ProtocolViolation(f"task {shown(task_id, 40)} has an unknown status {shown(repr(status), 40)}")
    legacy = era == "legacy"
    poll = _seconds(body.get("pollInterval" if legacy else "pollIntervalMs"))
    requests = body.get("inputRequests")
    message = body.get("statusMessage")
    return TaskState(task_id, status, message if isinstance(message, str) else "",
                     min(MAX_POLL, max(MIN_POLL, poll)) if poll is not None else DEFAULT_POLL,
                     _seconds(body.get("ttl" if legacy else "ttlMs")),
                     {str(k): v for k, v in requests.items() if isinstance(v, dict)}
                     if isinstance(requests, dict) else {},
                     body.get("result"), body.get("error"))


# How much of the server's words an error result shows (server text is cut, never trusted whole).
ID_CHARS, REASON_CHARS = 40, 300


def settled(state: TaskState) -> Optional[Json]:
    """The tool result a task has come to, or None while it is still running.

    Only the three terminal statuses end the wait; `working` and
    `input_required` mean poll again. A completed task's result is the tool
    result itself (an `isError` one included: that is the tool's error for the
    model); a failed task carries a JSON-RPC error, which becomes an error
    result the model can read; a cancelled one says so."""
    # >>> extension E6 (tasks): when does the wait end, and with what?
    # TODO extension E6: a task is finished when its status is completed, failed or
    # cancelled. Return the tool result it stands for (state.result when completed;
    # an error_result saying why when failed or cancelled) and None while it is
    # still working or waiting for input (labs/GUIDE.md 11.6). Every word of the
    # server's you put in a result may be any length and hold escape codes: pass
    # it to shown(text, limit), which cuts what it shows (never cut before it: an
    # escape grows when shown), with ID_CHARS for the task id and REASON_CHARS for
    # a code, a message or a statusMessage.
    # The clauses the checks hold it to: labs/GUIDE.md section 11.6.
    raise NotImplementedError("extension E6: decide when a task has finished (labs/GUIDE.md 11.6)")
    # <<< extension E6
