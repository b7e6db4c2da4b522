"""The conformance suite's client adapter for this lab's reference client.

    python -m checks.dev.conformance_client URL      (MCP_CONFORMANCE_SCENARIO names the scenario)

The suite starts a test server, runs this with its URL, and judges what the
server saw. The adapter does what a user of `python -m solution` would: one
remote server in the config, discovery, then the calls the scenario is
about. A form is answered by pressing Enter at every field, through the same
terminal form a person uses, so the elicitation scenario tests the real
path (a default shown and taken), not a shortcut.
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any, Dict

import anyio

from solution.aggregator import Aggregator
from solution.config import ServerSpec, config_of
from solution.prompts import terminal_form
from solution.terminal import Terminal

ARGUMENTS: Dict[str, Dict[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}


async def run(url: str, scenario: str) -> int:
    config = config_of([ServerSpec("server", "", url=url, timeout=20.0)])
    async with Aggregator(config) as tools:
        tools.elicitor = terminal_form(Terminal(read=lambda prompt: "", out=io.StringIO()))
        await tools.refresh()
        if "server" in tools.offline:
            print(f"offline: {tools.offline['server']}", file=sys.stderr)
            return 1
        if scenario == "initialize":
            return 0
        for entry in list(tools.entries.values()):
            result = await tools.call(entry.model_name, ARGUMENTS.get(entry.original_name, {}))
            print(f"{entry.original_name}: {str(result)[:300]}", file=sys.stderr)
    return 0


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: python -m checks.dev.conformance_client URL")
    sys.exit(anyio.run(run, sys.argv[1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))


if __name__ == "__main__":
    main()
