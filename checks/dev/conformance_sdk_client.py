"""The conformance suite's client adapter for the official Python SDK's client,
run beside ours so both are judged by the same suite in the same run.

    python -m checks.dev.conformance_sdk_client URL   (MCP_CONFORMANCE_SCENARIO names the scenario)

It does what `conformance_client` does, with `mcp.Client`: connect, and call
each tool the scenario offers. The SDK has no form of its own; a form is
answered the way an SDK user would write it, from each field's `default`.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict

import anyio
import mcp.types as types
from mcp import Client

ARGUMENTS: Dict[str, Dict[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}


async def defaults(context: Any, params: Any) -> types.ElicitResult:
    schema = getattr(params, "requested_schema", None) or {}
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    content = {name: field["default"] for name, field in properties.items()
               if isinstance(field, dict) and "default" in field}
    return types.ElicitResult(action="accept", content=content)


async def run(url: str, scenario: str) -> int:
    async with Client(url, elicitation_callback=defaults) as client:
        if scenario == "initialize":
            return 0
        listed = await client.list_tools()
        for tool in listed.tools:
            result = await client.call_tool(tool.name, ARGUMENTS.get(tool.name, {}))
            print(f"{tool.name}: {str(result)[:300]}", file=sys.stderr)
    return 0


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: python -m checks.dev.conformance_sdk_client URL")
    sys.exit(anyio.run(run, sys.argv[1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))


if __name__ == "__main__":
    main()
