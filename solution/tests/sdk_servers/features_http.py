"""The official SDK's `MCPServer` over Streamable HTTP with resources, prompts,
completions and log messages, for the client's HTTP tests in both eras.

    python features_http.py PORT
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import Completion, SamplingMessage, TextContent

app = MCPServer("sdk-features", instructions="Resources and prompts over HTTP.")


@app.resource("note://a", name="a", mime_type="text/plain")
def note_a() -> str:
    return "alpha over http \x1b[2J"


@app.prompt()
def summarise(topic: str) -> str:
    """Summarise the notes on a topic"""
    return f"Summarise the notes on {topic}"


@app.completion()  # type: ignore[no-untyped-call, untyped-decorator]
async def topics(ref: Any, argument: Any, context: Any) -> Completion:
    return Completion(values=[t for t in ("paging", "pagination", "parsing") if t.startswith(argument.value)])


@app.tool()
async def noisy(ctx: Context) -> str:
    """Log at two levels"""
    await ctx.info("an info line")
    await ctx.error("an error line \x1b]0;owned\x07")
    return "logged"


@app.tool()
async def ask_model(ctx: Context) -> str:
    """Ask the client's model for a line (sampling)"""
    reply = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text="Say hi"))], max_tokens=50)
    return f"the model said: {getattr(reply.content, 'text', reply.content)}"


if __name__ == "__main__":
    app.settings.log_level = "WARNING"
    anyio.run(lambda: app.run_streamable_http_async(host="127.0.0.1", port=int(sys.argv[1])))
