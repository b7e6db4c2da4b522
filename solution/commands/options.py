"""The command line's words: its commands, their options (the same before or
after the command's name), and the checks on them made before anything starts.
Pure argparse: `cli` runs what this module parses.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, List

from .feature_options import add_commands, add_offers, check
from ..config import usable_seconds

DEFAULT_CONFIG = Path("labs") / "servers.json"
DEFAULT_AUDIT = ".mcp-audit.jsonl"
DEFAULT_TASKS = ".mcp-tasks.json"  # unfinished tasks, for `tasks` after an interrupted run


def not_json(name: str) -> None:
    raise ValueError(f"{name} is not a JSON value")

def common_options(defaults: bool) -> argparse.ArgumentParser:
    """The options every command takes, before or after its name. Only the
    top-level parser has defaults: a subcommand's copy would otherwise put them
    back over what was given before the subcommand (`--config X tools`)."""
    def default(value: Any) -> Any:
        return value if defaults else argparse.SUPPRESS
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", type=Path, default=default(None),
                        help="servers config (default: labs/servers.json)")
    common.add_argument("--json", action="store_true", default=default(False), help="print JSON instead of text")
    common.add_argument("--timeout", type=float, default=default(30.0), help="seconds per request (default 30)")
    answers = common.add_mutually_exclusive_group()
    answers.add_argument("--yes", action="store_true", default=default(False),
                         help="allow calls that need consent (scripts)")
    answers.add_argument("--no", action="store_true", default=default(False),
                         help="decline calls that need consent (scripts)")
    common.add_argument("--audit", default=default(DEFAULT_AUDIT), metavar="FILE",
                        help=f"append every call to this JSON-lines log (default {DEFAULT_AUDIT}; '' for none)")
    common.add_argument("--tasks-file", default=default(DEFAULT_TASKS), metavar="FILE",
                        help=f"keep the ids of unfinished tasks here for `tasks` (default {DEFAULT_TASKS}; "
                             "'' for none)")
    common.add_argument("--tokens-file", default=default(None), metavar="FILE",
                        help="where sign-ins to remote servers keep their tokens, readable only by you "
                             "(default ~/.config/mcp-client-lab/tokens.json)")
    add_offers(common, default)
    return common

def parse(argv: List[str], prog: str) -> argparse.Namespace:
    common = common_options(defaults=False)
    parser = argparse.ArgumentParser(prog=prog, description="A hand-written MCP client.",
                                     parents=[common_options(defaults=True)])
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("tools", parents=[common], help="show the model-facing tool table")
    call = sub.add_parser("call", parents=[common], help="call one tool by its model-facing name")
    call.add_argument("name")
    call.add_argument("arguments", nargs="?", default="{}", help="JSON object (default {})")
    script = sub.add_parser("script", parents=[common],
                            help="run a Python script against the stubs in the sandbox, as code mode does "
                                 "(every call asks for consent as usual; needs the codemode extra)")
    script.add_argument("file", help="the script ('-' for standard input)")
    sub.add_parser("stubs", parents=[common],
                   help="show the typed Python stubs code mode builds from the tool schemas")
    sub.add_parser("tasks", parents=[common],
                   help="ask again about tasks an earlier run left unfinished, and show their results")
    for name, what in (("login", "sign in to a remote server now (OAuth: a browser, or the address to open)"),
                       ("logout", "forget a remote server's tokens, and tell its authorization server")):
        sign = sub.add_parser(name, parents=[common], help=what)
        sign.add_argument("alias", help="the server's alias in the config")
        if name == "login":
            sign.add_argument("--scope", help="the scope to ask for (space-separated), as a server that "
                                              "refused a call for want of scope said to")
    add_commands(sub, common)
    ask = sub.add_parser("ask", parents=[common], help="run the agent loop on a question")
    ask.add_argument("question")
    ask.add_argument("--max-steps", type=int, default=8)
    ask.add_argument("--code-mode", action="store_true",
                     help="give the model one run_script tool: it writes a script against typed stubs, "
                          "run in the Monty sandbox (needs the codemode extra)")
    options = parser.parse_args(argv)
    if options.yes and options.no:  # one before the subcommand, one after
        parser.error("--yes and --no cannot both be given")
    if not usable_seconds(options.timeout):
        parser.error(f"--timeout wants a finite number of seconds above 0; got {options.timeout!r}")
    if options.command is None:
        question = os.environ.get("QUESTION", "").strip()
        if not question:
            parser.error("give a command (tools, call, ask, login, ...) or set QUESTION")
        options.command, options.question, options.max_steps = "ask", question, 8
        options.code_mode = os.environ.get("CODE_MODE", "") == "1"
    check(parser, options)
    if options.command == "script":  # read before any server starts: a bad path costs nothing
        try:
            options.source = sys.stdin.read() if options.file == "-" else \
                Path(options.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            parser.error(f"cannot read the script {options.file}: {exc}")
    if options.command == "call":
        try:
            options.arguments = json.loads(options.arguments, parse_constant=not_json)
        except ValueError as exc:
            parser.error(f"arguments are not valid JSON: {exc}")
    return options
