"""An official-SDK server (`mcp` 2.x `MCPServer`) that runs one tool as a task,
through the SDK's extension hooks: mcp 2.3.0 ships the hooks, not a tasks
runtime, so the store below is this file's own (in memory, like real stdio
servers). `slow_sum` becomes a task when the request declared the extension
`io.modelcontextprotocol/tasks`; `broken_sum` fails with a JSON-RPC error.
"""

from __future__ import annotations

import asyncio
import datetime
import secrets
from typing import Any, Dict, Set

import anyio
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.server import require_client_extension
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolRequestParams, RequestParams

EXTENSION = "io.modelcontextprotocol/tasks"
TASKED = ("slow_sum", "broken_sum")


class TaskIdParams(RequestParams):
    task_id: str


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


class Tasks(Extension):
    identifier = EXTENSION

    def __init__(self) -> None:
        self.store: Dict[str, Dict[str, Any]] = {}
        self.running: Set["asyncio.Task[None]"] = set()

    def methods(self) -> Any:
        versions = frozenset({"2026-07-28"})
        return [MethodBinding("tasks/get", TaskIdParams, self.get, protocol_versions=versions),
                MethodBinding("tasks/cancel", TaskIdParams, self.cancel, protocol_versions=versions)]

    async def intercept_tool_call(self, params: CallToolRequestParams, ctx: Any, call_next: Any) -> Any:
        if params.name not in TASKED:
            return await call_next(ctx)
        require_client_extension(ctx, EXTENSION)
        task_id = secrets.token_hex(8)
        task: Dict[str, Any] = {"taskId": task_id, "status": "working", "statusMessage": "adding slowly",
                                "createdAt": now(), "lastUpdatedAt": now(), "ttlMs": 60_000,
                                "pollIntervalMs": 200}
        self.store[task_id] = task
        arguments = params.arguments or {}

        async def work() -> None:
            await anyio.sleep(0.5)
            if task["status"] != "working":
                return
            if params.name == "broken_sum":
                task.update(status="failed", statusMessage="the adder broke",
                            error={"code": -32603, "message": "the adder broke"})
            else:
                total = int(arguments.get("a", 0)) + int(arguments.get("b", 0))
                task.update(status="completed", result={"content": [{"type": "text", "text": str(total)}],
                                                        "structuredContent": {"result": total}, "isError": False})
            task["lastUpdatedAt"] = now()
        running = asyncio.get_running_loop().create_task(work())  # the SDK server runs on asyncio
        self.running.add(running)
        running.add_done_callback(self.running.discard)
        return {"resultType": "task", **{k: v for k, v in task.items() if k not in ("result", "error")}}

    def find(self, task_id: str) -> Dict[str, Any]:
        task = self.store.get(task_id)
        if task is None:
            raise MCPError(code=-32602, message="Failed to retrieve task: Task not found")
        return task

    async def get(self, ctx: Any, params: TaskIdParams) -> Dict[str, Any]:
        require_client_extension(ctx, EXTENSION)
        return {"resultType": "complete", **self.find(params.task_id)}

    async def cancel(self, ctx: Any, params: TaskIdParams) -> Dict[str, Any]:
        require_client_extension(ctx, EXTENSION)
        self.find(params.task_id).update(status="cancelled", statusMessage="cancelled", lastUpdatedAt=now())
        return {"resultType": "complete"}


app = MCPServer("sdk-tasks", instructions="Runs slow_sum as a task.", extensions=[Tasks()])


@app.tool()
def slow_sum(a: int, b: int) -> int:
    """Add two integers, slowly (runs as a task)"""
    return a + b


@app.tool()
def broken_sum(a: int, b: int) -> int:
    """Always fails, as a task"""
    return a + b


@app.tool()
def quick(a: int) -> int:
    """An ordinary tool"""
    return a * 2


if __name__ == "__main__":
    app.run("stdio")
