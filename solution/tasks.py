"""Tasks, the protocol half: reading a task's state in either era, and deciding
what it means. No I/O; `task_runner` is the loop around it.

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

from .errors import McpError, ProtocolViolation  # noqa: F401 (extension E6)
from .errors import error_result
from .jsonrpc import Json
from .untrusted import shown

EXTENSION = "io.modelcontextprotocol/tasks"
# -32021 since the extension's fix of 2026-08-19; -32003 in earlier drafts (still in the wild).
MISSING_CAPABILITY = (-32021, -32003)
UNKNOWN_TASK = -32602
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


def same_task(state: TaskState, task_id: str) -> TaskState:
    """A tasks/get answer must be about the task asked about: an answer about
    another is a protocol violation, never followed."""
    if state.task_id != task_id:
        raise ProtocolViolation(f"asked about task {shown(task_id, ID_CHARS)}, the server answered about "
                                f"another task ({shown(state.task_id, ID_CHARS)})")
    return state


def handle_of(result: Json, era: str) -> Optional[TaskState]:
    """The task a `tools/call` result stands for, or None for an ordinary result."""
    if era == "legacy":
        nested = result.get("task")
        return read_state(nested, era) if isinstance(nested, dict) and "content" not in result else None
    return read_state(result, era) if result.get("resultType") == "task" else None


def settled(state: TaskState) -> Optional[Json]:
    """The tool result a task has come to, or None while it is still running.

    Only the three terminal statuses end the wait; `working` and
    `input_required` mean poll again. A completed task's result is the tool
    result itself (an `isError` one included: that is the tool's error for the
    model); a failed task carries a JSON-RPC error, which becomes an error
    result the model can read; a cancelled one says so."""
    # >>> extension E6 (tasks): when does the wait end, and with what?
    if state.status == "completed":
        if not isinstance(state.result, dict):
            raise ProtocolViolation(f"task {shown(state.task_id, ID_CHARS)} completed without a result")
        return state.result
    if state.status == "failed":
        # Not an object, it is no JSON-RPC error: the statusMessage says more than a made-up code.
        error = McpError.from_reply(state.error) if isinstance(state.error, dict) else None
        why = f"error {error.code}: {error.message}" if error else (state.message or "no reason given")
        return error_result(f"The task failed on the server ({shown(why, REASON_CHARS)}).")
    if state.status == "cancelled":
        said = state.message or "no reason given"
        return error_result(f"The task was cancelled on the server ({shown(said, REASON_CHARS)}).")
    return None
    # <<< extension E6


def missing_capability(error: McpError) -> bool:
    return error.code in MISSING_CAPABILITY


def task_support(tool: Json) -> str:
    """A tool's `execution.taskSupport` in the handshake era (absent: forbidden)."""
    execution = tool.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, dict) else None
    return support if support in ("optional", "required") else "forbidden"


def server_runs_tool_tasks(capabilities: Json) -> bool:
    """Whether a handshake-era server declared `tasks.requests.tools.call`."""
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and isinstance(tools.get("call"), dict)


def unusable(tool: Json, era: str, capabilities: Json) -> Optional[str]:
    """Why a tool cannot be called in this era, or None. Only a `required` tool
    of a handshake-era server that does not run tool calls as tasks is lost."""
    if era == "legacy" and task_support(tool) == "required" and not server_runs_tool_tasks(capabilities):
        return "it must run as a task, but the server does not declare tasks for tools/call"
    return None


def ask_for_task(tool: Json, era: str, capabilities: Json, prefer: bool) -> bool:
    """Whether a handshake-era call adds `params.task`: always for a `required`
    tool, for an `optional` one when the config or call prefers it, never else."""
    if era != "legacy" or not server_runs_tool_tasks(capabilities):
        return False
    support = task_support(tool)
    return support == "required" or (support == "optional" and prefer)
