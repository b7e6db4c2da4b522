"""The fixture servers' switches: every `--option` (each also an environment
variable), and the tools and annotations they add or change. Parsed here;
`servers.stdio` acts on them.
"""

from __future__ import annotations

import json
import os
import sys
from types import SimpleNamespace as Options

from servers import argv
from servers.argv import Switch
from servers.core import Tool
from servers.paging import PAGING_MODES
from servers.rpc import ToolOutput

TYPE_CHECKING = False  # typing for the type checker only (see servers/rpc.py)
if TYPE_CHECKING:
    import argparse
    from typing import Any, Dict, List, Optional

FAILURE_MODES = ("exit-at-start", "never-answer", "garbage", "exit-on-discover")
# Switches whose additions each fixture defines for itself (`Server.switchable`).
SWITCHED = ("lifecycle-tools", "conformance-names")


env = os.environ.get
# Every switch, once: read by servers.argv on the common path, by argparse for help and errors.
SWITCHES = (
    Switch("--era", "current: MCP 2026-07-28 (default); legacy: only the 2025-11-25 "
           "initialize handshake (MCP_LAB_ERA)",
           choices=("current", "legacy"), default=lambda: env("MCP_LAB_ERA") or "current"),
    Switch("--journal", "append every message in and out, with timestamps (MCP_LAB_JOURNAL)",
           default=lambda: env("MCP_LAB_JOURNAL"), metavar="FILE"),
    Switch("--evidence", "also send each journal line to the lab's runner listening on this Unix socket "
           "(MCP_LAB_EVIDENCE)", default=lambda: env("MCP_LAB_EVIDENCE"), metavar="SOCKET"),
    Switch("--fail", "misbehave on purpose: exit at start, never answer, write a garbage "
           "line before each reply, or exit when probed with server/discover "
           "(MCP_LAB_FAIL)", choices=FAILURE_MODES, default=lambda: env("MCP_LAB_FAIL") or None),
    Switch("--delay", "answer every request S seconds late (MCP_LAB_DELAY)",
           type=float, default=lambda: float(env("MCP_LAB_DELAY") or 0), metavar="S"),
    Switch("--latency", "make calls to TOOL take S seconds; repeatable "
           "(MCP_LAB_LATENCY, comma-separated)", takes="append", metavar="TOOL=S"),
    Switch("--inline", "answer each request on the reading thread, in order (fastest; "
           "no concurrency, so no --latency or --hold) (MCP_LAB_INLINE)",
           takes="flag", default=lambda: bool(env("MCP_LAB_INLINE"))),
    Switch("--hold", "hold each reply to a call of TOOL until another reply has gone out "
           "(at most 30 s), so replies come back out of order; repeatable", takes="append", metavar="TOOL"),
    Switch("--paging", "normal; empty-cursor: the cursor to the second page is \"\" (a real "
           "cursor); endless: every page has a nextCursor (a client must stop itself)",
           choices=PAGING_MODES, default="normal"),
    Switch("--http", "serve over Streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio "
           "(0: any free port, printed on stderr); runs until killed", type=int, metavar="PORT"),
    Switch("--sse", "with --http: answer every request as an event stream, written with every "
           "liberty the format allows (CRLF, comments, data over two lines, ids)", takes="flag"),
    Switch("--sse-break", "with --http --era legacy: end a call's stream after a priming event; the "
           "reply waits for a GET with that event's Last-Event-ID", takes="append", metavar="TOOL"),
    Switch("--unknown-session", "with --http: how a request carrying an Mcp-Session-Id the server does not know "
           "is refused: 404 (the spec's) or 400 'Bad Request: No valid session ID provided' "
           "(as @modelcontextprotocol/server-everything answers)",
           type=int, choices=(404, 400), default=404, metavar="STATUS"),
    Switch("--auth", "with --http: put a small OAuth 2.1 authorization server in front (same port): "
           "ask shows a page to approve each sign-in (the default), auto approves at "
           "once with a redirect (for tests)", takes="optional", choices=("ask", "auto"), const="ask"),
    Switch("--token-ttl", "with --auth: seconds an access token lasts (default 3600)",
           type=float, default=3600.0, metavar="S"),
    Switch("--auth-client", "with --auth: a pre-registered confidential client (client_credentials "
           "too); repeatable", takes="append", metavar="ID=SECRET"),
    Switch("--page-size", "hand out N tools per page instead of the server's own number", type=int, metavar="N"),
    Switch("--list-ttl-ms", "the ttlMs each tools/list page carries: how long a client may reuse it "
           "(default 0: not at all)", type=int, default=0, metavar="MS"),
    Switch("--silent", "read and journal METHOD but never answer it; repeatable", takes="append", metavar="METHOD"),
    Switch("--bare-reply", "answer METHOD with a reply that has neither result nor error "
           "(a protocol violation the client must reject); repeatable", takes="append", metavar="METHOD"),
    Switch("--empty-reply", "answer METHOD with an empty result, {} (legal: what an acknowledgement "
           "carries); repeatable", takes="append", metavar="METHOD"),
    Switch("--bad-progress", "before a request's first progress report, send two malformed ones (a "
           "progress that is not a number, and none at all) that a client must ignore", takes="flag"),
    Switch("--annotations", "list TOOL with these annotations instead of its own (null: none at all, so "
           "every hint takes its default; values need not be booleans); repeatable",
           takes="append", metavar="TOOL=JSON"),
    Switch("--add-tool", "add a read-only tool named NAME (any characters), with the JSON input "
           "schema after '=' (default: no arguments); it answers with its name; repeatable",
           takes="append", metavar="NAME[=SCHEMA]"),
    Switch("--lifecycle-tools", "add the tools that exercise the rest of the lifecycle, which the default lists "
           "leave out (the lab's items count them): notes gets edit_note, link_notes and "
           "embed_note; tickets gets draft_reply (sampling) and scan_roots (roots)", takes="flag"),
    Switch("--conformance-names", "notes: also serve the fixed names the official conformance suite asks for "
           "(test://static-text, test_simple_prompt, ...), mapped onto the library's notes", takes="flag"),
    Switch("--progress-steps", "tools that report progress do so N times (default 5)",
           type=int, default=5, metavar="N"),
    Switch("--progress-gap", "seconds of simulated work before each progress report (default 0.03)",
           type=float, default=0.03, metavar="S"),
    Switch("--task-steps", "a task's job works in N steps (default 4)", type=int, default=4, metavar="N"),
    Switch("--task-gap", "seconds of simulated work per task step (default 0.05)",
           type=float, default=0.05, metavar="S"),
    Switch("--task-poll-ms", "the pollIntervalMs a task handle suggests (default 100)",
           type=int, default=100, metavar="MS"),
    Switch("--task-ttl-ms", "how long a task is kept after it is created (default 60000)",
           type=int, default=60_000, metavar="MS"),
)


def parser(name: str) -> "argparse.ArgumentParser":
    """argparse's parser for a fixture's switches: for --help, and for what argv.read leaves to it."""
    return argv.parser(SWITCHES, prog=f"python -m servers.{name}",
                       description=f"The lab's '{name}' fixture MCP server (2026-07-28, stdio).",
                       epilog="A switch whose help names an environment variable (MCP_LAB_...) also reads it "
                              "from there.")


def parse_options(name: str, args: Optional[List[str]]) -> Options:
    """The switches `args` (the command line's when None) set, and the rest's defaults."""
    words = sys.argv[1:] if args is None else list(args)
    values = argv.read(words, SWITCHES)
    if values is None:  # help, an error, or a spelling only argparse reads
        values = vars(parser(name).parse_args(words))
    options = Options(**values)
    pairs = list(options.latency) + [p for p in (env("MCP_LAB_LATENCY") or "").split(",") if p]
    latency: Dict[str, float] = {}
    for pair in pairs:
        tool, sep, seconds = pair.partition("=")
        try:
            latency[tool] = float(seconds)
        except ValueError:
            sep = ""
        if not sep:
            parser(name).error(f"--latency wants TOOL=SECONDS, got {pair!r}")
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
