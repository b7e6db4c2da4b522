"""An official-SDK `MCPServer`: one page, generated schemas, isError quirks."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("hl-demo", instructions="High-level demo server.")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers"""
    return a + b


@app.tool()
def echo(text: str) -> str:
    """Echo text back"""
    return text


@app.tool()
def boom() -> str:
    """Always fails"""
    raise ToolError("boom: something went wrong")


if __name__ == "__main__":
    app.run("stdio")
