"""An official-SDK low-level server: paged tools/list with opaque cursors.

`--legacy` serves only the 2025-11-25 handshake era (as servers built on an
older SDK do), by driving the SDK's legacy loop directly.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

TOOLS = [
    types.Tool(name="add", title="Adder", description="Add two integers",
               input_schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                             "required": ["a", "b"], "additionalProperties": False},
               output_schema={"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="echo", description="Echo text back",
               input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    types.Tool(name="boom", description="Always fails", input_schema={"type": "object"}),
    types.Tool(name="wrong_shape", description="Structured output that breaks its own schema",
               input_schema={"type": "object"},
               output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
]
PAGE = 2


def cursor(offset: int) -> str:
    return base64.b64encode(json.dumps({"o": offset}).encode()).decode()


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    offset = 0
    if params is not None and params.cursor is not None:
        try:
            offset = int(json.loads(base64.b64decode(params.cursor))["o"])
        except Exception:
            raise MCPError(code=-32602, message="Invalid cursor") from None
    page = TOOLS[offset:offset + PAGE]
    more = offset + PAGE < len(TOOLS)
    return types.ListToolsResult(tools=page, next_cursor=cursor(offset + PAGE) if more else None)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "add":
        total = int(args["a"]) + int(args["b"])
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps({"sum": total}))],
                                    structured_content={"sum": total})
    if params.name == "echo":
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(args.get("text")))])
    if params.name == "boom":
        return types.CallToolResult(content=[types.TextContent(type="text", text="boom: something went wrong")],
                                    is_error=True)
    if params.name == "wrong_shape":
        return types.CallToolResult(content=[types.TextContent(type="text", text='{"n": "seven"}')],
                                    structured_content={"n": "seven"})
    raise MCPError(code=-32602, message=f"Unknown tool: {params.name}")


server: Server[Any] = Server("ll-demo", version="0.1.0", instructions="Demo server with paginated tools.",
                             on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        if "--legacy" in sys.argv:
            from mcp.server.runner import _serve_legacy_stream
            await _serve_legacy_stream(server, read, write, lifespan_state={}, session_id=None,
                                       init_options=server.create_initialization_options(),
                                       raise_exceptions=False)
        else:
            await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
