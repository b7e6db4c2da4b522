"""The fixture servers' switches: every `--option` (each also an environment
variable), and the tools and annotations they add or change. Parsed here;
`servers.stdio` acts on them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from servers.core import Tool
from servers.paging import PAGING_MODES
from servers.rpc import ToolOutput

TYPE_CHECKING = False  # typing for the type checker only (see servers/rpc.py)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

FAILURE_MODES = ("exit-at-start", "never-answer", "garbage", "exit-on-discover")
# Switches whose additions each fixture defines for itself (`Server.switchable`).
SWITCHED = ("lifecycle-tools", "conformance-names")


def columns() -> int:
    """The terminal's width as shutil.get_terminal_size() finds it ($COLUMNS, else
    the terminal on stdout, else 80), without importing shutil."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no stdout, or not a terminal
        return 80


class Formatter(argparse.HelpFormatter):
    """argparse's own help formatter, told the width. Left to find it, argparse imports
    shutil (and with it bz2 and lzma) in every add_argument: a tenth of a server's
    start-up, which every item pays for each server it starts, for help rarely shown."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=columns() - 2)


def parse_options(name: str, argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f"python -m servers.{name}", formatter_class=Formatter,
        description=f"The lab's '{name}' fixture MCP server (2026-07-28, stdio).",
        epilog="A switch whose help names an environment variable (MCP_LAB_...) also reads it from there.")
    env = os.environ.get
    parser.add_argument("--era", choices=("current", "legacy"), default=env("MCP_LAB_ERA") or "current",
                        help="current: MCP 2026-07-28 (default); legacy: only the 2025-11-25 "
                             "initialize handshake (MCP_LAB_ERA)")
    parser.add_argument("--journal", default=env("MCP_LAB_JOURNAL"), metavar="FILE",
                        help="append every message in and out, with timestamps (MCP_LAB_JOURNAL)")
    parser.add_argument("--evidence", default=env("MCP_LAB_EVIDENCE"), metavar="SOCKET",
                        help="also send each journal line to the lab's runner listening on this Unix socket "
                             "(MCP_LAB_EVIDENCE)")
    parser.add_argument("--fail", choices=FAILURE_MODES, default=env("MCP_LAB_FAIL") or None,
                        help="misbehave on purpose: exit at start, never answer, write a garbage "
                             "line before each reply, or exit when probed with server/discover "
                             "(MCP_LAB_FAIL)")
    parser.add_argument("--delay", type=float, default=float(env("MCP_LAB_DELAY") or 0), metavar="S",
                        help="answer every request S seconds late (MCP_LAB_DELAY)")
    parser.add_argument("--latency", action="append", default=[], metavar="TOOL=S",
                        help="make calls to TOOL take S seconds; repeatable "
                             "(MCP_LAB_LATENCY, comma-separated)")
    parser.add_argument("--inline", action="store_true", default=bool(env("MCP_LAB_INLINE")),
                        help="answer each request on the reading thread, in order (fastest; "
                             "no concurrency, so no --latency or --hold) (MCP_LAB_INLINE)")
    parser.add_argument("--hold", action="append", default=[], metavar="TOOL",
                        help="hold each reply to a call of TOOL until another reply has gone out "
                             "(at most 30 s), so replies come back out of order; repeatable")
    parser.add_argument("--paging", choices=PAGING_MODES, default="normal",
                        help="normal; empty-cursor: the cursor to the second page is \"\" (a real "
                             "cursor); endless: every page has a nextCursor (a client must stop itself)")
    parser.add_argument("--http", type=int, default=None, metavar="PORT",
                        help="serve over Streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio "
                             "(0: any free port, printed on stderr); runs until killed")
    parser.add_argument("--sse", action="store_true",
                        help="with --http: answer every request as an event stream, written with every "
                             "liberty the format allows (CRLF, comments, data over two lines, ids)")
    parser.add_argument("--sse-break", action="append", default=[], metavar="TOOL",
                        help="with --http --era legacy: end a call's stream after a priming event; the "
                             "reply waits for a GET with that event's Last-Event-ID")
    parser.add_argument("--unknown-session", type=int, choices=(404, 400), default=404, metavar="STATUS",
                        help="with --http: how a request carrying an Mcp-Session-Id the server does not know "
                             "is refused: 404 (the spec's) or 400 'Bad Request: No valid session ID provided' "
                             "(as @modelcontextprotocol/server-everything answers)")
    parser.add_argument("--auth", nargs="?", const="ask", choices=("ask", "auto"), default=None,
                        help="with --http: put a small OAuth 2.1 authorization server in front (same port): "
                             "ask shows a page to approve each sign-in (the default), auto approves at "
                             "once with a redirect (for tests)")
    parser.add_argument("--token-ttl", type=float, default=3600.0, metavar="S",
                        help="with --auth: seconds an access token lasts (default 3600)")
    parser.add_argument("--auth-client", action="append", default=[], metavar="ID=SECRET",
                        help="with --auth: a pre-registered confidential client (client_credentials "
                             "too); repeatable")
    parser.add_argument("--page-size", type=int, default=None, metavar="N",
                        help="hand out N tools per page instead of the server's own number")
    parser.add_argument("--list-ttl-ms", type=int, default=0, metavar="MS",
                        help="the ttlMs each tools/list page carries: how long a client may reuse it "
                             "(default 0: not at all)")
    parser.add_argument("--silent", action="append", default=[], metavar="METHOD",
                        help="read and journal METHOD but never answer it; repeatable")
    parser.add_argument("--bare-reply", action="append", default=[], metavar="METHOD",
                        help="answer METHOD with a reply that has neither result nor error "
                             "(a protocol violation the client must reject); repeatable")
    parser.add_argument("--empty-reply", action="append", default=[], metavar="METHOD",
                        help="answer METHOD with an empty result, {} (legal: what an acknowledgement "
                             "carries); repeatable")
    parser.add_argument("--bad-progress", action="store_true",
                        help="before a request's first progress report, send two malformed ones (a "
                             "progress that is not a number, and none at all) that a client must ignore")
    parser.add_argument("--annotations", action="append", default=[], metavar="TOOL=JSON",
                        help="list TOOL with these annotations instead of its own (null: none at all, so "
                             "every hint takes its default; values need not be booleans); repeatable")
    parser.add_argument("--add-tool", action="append", default=[], metavar="NAME[=SCHEMA]",
                        help="add a read-only tool named NAME (any characters), with the JSON input "
                             "schema after '=' (default: no arguments); it answers with its name; repeatable")
    parser.add_argument("--lifecycle-tools", action="store_true",
                        help="add the tools that exercise the rest of the lifecycle, which the default lists "
                             "leave out (the lab's items count them): notes gets edit_note, link_notes and "
                             "embed_note; tickets gets draft_reply (sampling) and scan_roots (roots)")
    parser.add_argument("--conformance-names", action="store_true",
                        help="notes: also serve the fixed names the official conformance suite asks for "
                             "(test://static-text, test_simple_prompt, ...), mapped onto the library's notes")
    parser.add_argument("--progress-steps", type=int, default=5, metavar="N",
                        help="tools that report progress do so N times (default 5)")
    parser.add_argument("--progress-gap", type=float, default=0.03, metavar="S",
                        help="seconds of simulated work before each progress report (default 0.03)")
    parser.add_argument("--task-steps", type=int, default=4, metavar="N",
                        help="a task's job works in N steps (default 4)")
    parser.add_argument("--task-gap", type=float, default=0.05, metavar="S",
                        help="seconds of simulated work per task step (default 0.05)")
    parser.add_argument("--task-poll-ms", type=int, default=100, metavar="MS",
                        help="the pollIntervalMs a task handle suggests (default 100)")
    parser.add_argument("--task-ttl-ms", type=int, default=60_000, metavar="MS",
                        help="how long a task is kept after it is created (default 60000)")
    options = parser.parse_args(argv)
    pairs = list(options.latency) + [p for p in (env("MCP_LAB_LATENCY") or "").split(",") if p]
    latency: Dict[str, float] = {}
    for pair in pairs:
        tool, sep, seconds = pair.partition("=")
        try:
            latency[tool] = float(seconds)
        except ValueError:
            parser.error(f"--latency wants TOOL=SECONDS, got {pair!r}")
        if not sep:
            parser.error(f"--latency wants TOOL=SECONDS, got {pair!r}")
    options.latency = latency
    return options


def parsed_json(text: str, switch: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise SystemExit(f"{switch}: the text after '=' is not JSON: {text!r}") from None


def extra_tool(spec: str) -> Tool:
    """A tool from `--add-tool NAME[=SCHEMA]`: names a model API cannot take as
    they are (spaces, '/', ':', '@', letters beyond ASCII), or enums of any values."""
    name, sep, schema = spec.partition("=")
    input_schema = parsed_json(schema, "--add-tool") if sep else {"type": "object", "additionalProperties": False}
    return Tool(name, f"An extra tool named {name!r} (fixture --add-tool).", input_schema,
                lambda arguments: ToolOutput(f"{name} ran with {json.dumps(arguments, sort_keys=True)}"),
                title=f"Extra: {name}", annotations={"readOnlyHint": True, "openWorldHint": False})
