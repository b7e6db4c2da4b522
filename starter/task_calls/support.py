"""Which calls become tasks, and the task a result stands for, in either era.

Pure, beside tasks.py (a task's state and when it has settled): the tasks
extension's name and codes, a tool's `execution.taskSupport` and a server's
`tasks` capability in the handshake era, and the task handle a `tools/call`
result may be instead of a result.
"""

from __future__ import annotations

from typing import Optional

from ..errors import McpError, ProtocolViolation
from ..jsonrpc import Json
from ..tasks import ID_CHARS, TaskState, read_state
from ..untrusted import shown

EXTENSION = "io.modelcontextprotocol/tasks"
# -32021 since the extension's fix of 2026-08-19; -32003 in earlier drafts (still in the wild).
MISSING_CAPABILITY = (-32021, -32003)
UNKNOWN_TASK = -32602


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
