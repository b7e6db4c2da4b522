"""The fixture servers' command line: every `--switch`, read with argparse.

A switch whose help names an environment variable (MCP_LAB_...) takes its
default from there, read each time the command line is parsed. The values of
`--latency`, `--annotations` and `--add-tool` are read into what they stand
for here, so a malformed one is refused like any other bad switch: one line,
exit status 2. `servers.launch` acts on the switches.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any, List, NoReturn, Optional, Tuple

from servers.core import Tool
from servers.paging import PAGING_MODES
from servers.rpc import ToolOutput

FAILURE_MODES = ("exit-at-start", "never-answer", "garbage", "exit-on-discover")
# Switches whose additions each fixture defines for itself (`Server.switchable`).
SWITCHED = ("lifecycle-tools", "conformance-names")


class SwitchParser(argparse.ArgumentParser):
    """argparse's parser, except that a mistake is one line (the switch and what is
    wrong with it) rather than the usage of thirty switches first; --help lists them."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def json_after_equals(text: str) -> Any:
    """The JSON a switch's value carries after its '='."""
    try:
        return json.loads(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the text after '=' is not JSON: {text!r}") from None


def latency(pair: str) -> Tuple[str, float]:
    """`TOOL=S` (from `--latency` or MCP_LAB_LATENCY): the tool and its seconds."""
    tool, equals, seconds = pair.partition("=")
    try:
        if equals:
            return tool, float(seconds)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"not TOOL=SECONDS: {pair!r}")


def tool_annotations(spec: str) -> Tuple[str, Any]:
    """`TOOL=JSON`: the tool and the annotations it is listed with instead of its own."""
    tool, _, given = spec.partition("=")
    return tool, json_after_equals(given)


def extra_tool(spec: str) -> Tool:
    """A tool from `--add-tool NAME[=SCHEMA]`: names a model API cannot take as
    they are (spaces, '/', ':', '@', letters beyond ASCII), or enums of any values."""
    name, equals, schema = spec.partition("=")
    input_schema = json_after_equals(schema) if equals else {"type": "object", "additionalProperties": False}
    return Tool(name, f"An extra tool named {name!r} (fixture --add-tool).", input_schema,
                lambda arguments: ToolOutput(f"{name} ran with {json.dumps(arguments, sort_keys=True)}"),
                title=f"Extra: {name}", annotations={"readOnlyHint": True, "openWorldHint": False})


def parser(name: str) -> argparse.ArgumentParser:
    """The parser for the fixture `name`, its defaults read from the environment now."""
    env = os.environ.get
    switches = SwitchParser(prog=f"python -m servers.{name}",
                            description=f"The lab's '{name}' fixture MCP server (2026-07-28, stdio).",
                            epilog="A switch whose help names an environment variable (MCP_LAB_...) also reads "
                                   "it from there.")
    add = switches.add_argument
    add("--era", choices=("current", "legacy"), default=env("MCP_LAB_ERA") or "current",
        help="current: MCP 2026-07-28 (default); legacy: only the 2025-11-25 initialize handshake (MCP_LAB_ERA)")
    add("--journal", metavar="FILE", default=env("MCP_LAB_JOURNAL"),
        help="append every message in and out, with timestamps (MCP_LAB_JOURNAL)")
    add("--evidence", metavar="SOCKET", default=env("MCP_LAB_EVIDENCE"),
        help="also send each journal line to the lab's runner listening on this Unix socket (MCP_LAB_EVIDENCE)")
    add("--fail", choices=FAILURE_MODES, default=env("MCP_LAB_FAIL") or None,
        help="misbehave on purpose: exit at start, never answer, write a garbage line before each reply, or "
             "exit when probed with server/discover (MCP_LAB_FAIL)")
    add("--delay", type=float, metavar="S", default=float(env("MCP_LAB_DELAY") or 0),
        help="answer every request S seconds late (MCP_LAB_DELAY)")
    add("--latency", action="append", type=latency, metavar="TOOL=S", default=[],
        help="make calls to TOOL take S seconds; repeatable (MCP_LAB_LATENCY, comma-separated)")
    add("--inline", action="store_true", default=bool(env("MCP_LAB_INLINE")),
        help="answer each request on the reading thread, in order (fastest; no concurrency, so no --latency "
             "or --hold) (MCP_LAB_INLINE)")
    add("--hold", action="append", metavar="TOOL", default=[],
        help="hold each reply to a call of TOOL until another reply has gone out (at most 30 s), so replies "
             "come back out of order; repeatable")
    add("--paging", choices=PAGING_MODES, default="normal",
        help="normal; empty-cursor: the cursor to the second page is \"\" (a real cursor); endless: every page "
             "has a nextCursor (a client must stop itself)")
    add("--http", type=int, metavar="PORT",
        help="serve over Streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio (0: any free port, "
             "printed on stderr); runs until killed")
    add("--sse", action="store_true",
        help="with --http: answer every request as an event stream, written with every liberty the format "
             "allows (CRLF, comments, data over two lines, ids)")
    add("--sse-break", action="append", metavar="TOOL", default=[],
        help="with --http --era legacy: end a call's stream after a priming event; the reply waits for a GET "
             "with that event's Last-Event-ID")
    add("--unknown-session", type=int, choices=(404, 400), default=404, metavar="STATUS",
        help="with --http: how a request carrying an Mcp-Session-Id the server does not know is refused: 404 "
             "(the spec's) or 400 'Bad Request: No valid session ID provided' (as "
             "@modelcontextprotocol/server-everything answers)")
    add("--auth", nargs="?", choices=("ask", "auto"), const="ask",
        help="with --http: put a small OAuth 2.1 authorization server in front (same port): ask shows a page "
             "to approve each sign-in (the default), auto approves at once with a redirect (for tests)")
    add("--token-ttl", type=float, metavar="S", default=3600.0,
        help="with --auth: seconds an access token lasts (default 3600)")
    add("--auth-client", action="append", metavar="ID=SECRET", default=[],
        help="with --auth: a pre-registered confidential client (client_credentials too); repeatable")
    add("--openid", action="store_true",
        help="with --auth: be an OpenID provider as certified ones are: metadata only at "
             "/.well-known/openid-configuration, and a refresh token only for offline_access asked with "
             "prompt=consent")
    add("--page-size", type=int, metavar="N", help="hand out N tools per page instead of the server's own number")
    add("--list-ttl-ms", type=int, metavar="MS", default=0,
        help="the ttlMs each tools/list page carries: how long a client may reuse it (default 0: not at all)")
    add("--silent", action="append", metavar="METHOD", default=[],
        help="read and journal METHOD but never answer it; repeatable")
    add("--bare-reply", action="append", metavar="METHOD", default=[],
        help="answer METHOD with a reply that has neither result nor error (a protocol violation the client "
             "must reject); repeatable")
    add("--empty-reply", action="append", metavar="METHOD", default=[],
        help="answer METHOD with an empty result, {} (legal: what an acknowledgement carries); repeatable")
    add("--bad-progress", action="store_true",
        help="before a request's first progress report, send two malformed ones (a progress that is not a "
             "number, and none at all) that a client must ignore")
    add("--annotations", action="append", type=tool_annotations, metavar="TOOL=JSON", default=[],
        help="list TOOL with these annotations instead of its own (null: none at all, so every hint takes its "
             "default; values need not be booleans); repeatable")
    add("--add-tool", action="append", type=extra_tool, metavar="NAME[=SCHEMA]", default=[],
        help="add a read-only tool named NAME (any characters), with the JSON input schema after '=' "
             "(default: no arguments); it answers with its name; repeatable")
    add("--lifecycle-tools", action="store_true",
        help="add the tools that exercise the rest of the lifecycle, which the default lists leave out (the "
             "lab's items count them): notes gets edit_note, link_notes and embed_note; tickets gets "
             "draft_reply (sampling) and scan_roots (roots)")
    add("--conformance-names", action="store_true",
        help="notes: also serve the fixed names the official conformance suite asks for (test://static-text, "
             "test_simple_prompt, ...), mapped onto the library's notes")
    add("--progress-steps", type=int, metavar="N", default=5,
        help="tools that report progress do so N times (default 5)")
    add("--progress-gap", type=float, metavar="S", default=0.03,
        help="seconds of simulated work before each progress report (default 0.03)")
    add("--task-steps", type=int, metavar="N", default=4, help="a task's job works in N steps (default 4)")
    add("--task-gap", type=float, metavar="S", default=0.05,
        help="seconds of simulated work per task step (default 0.05)")
    add("--task-poll-ms", type=int, metavar="MS", default=100,
        help="the pollIntervalMs a task handle suggests (default 100)")
    add("--task-ttl-ms", type=int, metavar="MS", default=60_000,
        help="how long a task is kept after it is created (default 60000)")
    return switches


def parse_options(name: str, args: Optional[List[str]] = None) -> argparse.Namespace:
    """The switches `args` (the command line's when None) set, and the rest's
    defaults; `latency` as a table of tool -> seconds, MCP_LAB_LATENCY's too."""
    switches = parser(name)
    options = switches.parse_args(args)
    pairs = [pair for pair in (os.environ.get("MCP_LAB_LATENCY") or "").split(",") if pair]
    try:
        from_environment = [latency(pair) for pair in pairs]
    except argparse.ArgumentTypeError as exc:
        switches.error(f"MCP_LAB_LATENCY: {exc}")
    options.latency = dict(options.latency + from_environment)
    return options
