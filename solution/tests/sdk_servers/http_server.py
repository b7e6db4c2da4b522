"""The official SDK's `MCPServer` over Streamable HTTP on 127.0.0.1, for the HTTP tests.

    python http_server.py PORT [--stateless] [--json]

Stateful by default (sessions and SSE answers in the handshake era);
`--stateless --json` is the other common deployment. The tools of
hl_server.py (add, echo, and boom, an isError result) and slow_count, which
reports progress.
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.mcpserver import Context

from hl_server import app  # type: ignore[import-not-found]  # run as a script: its folder is first on sys.path


@app.tool()  # type: ignore[untyped-decorator]  # `app` comes untyped through the script import
async def slow_count(steps: int, ctx: Context) -> str:
    """Count to steps, reporting progress"""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


if __name__ == "__main__":
    app.settings.log_level = "WARNING"
    anyio.run(lambda: app.run_streamable_http_async(
        host="127.0.0.1", port=int(sys.argv[1]), stateless_http="--stateless" in sys.argv,
        json_response="--json" in sys.argv))
