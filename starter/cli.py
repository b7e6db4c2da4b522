"""The day's command line: the tool table, one call, or the agent loop on a question.

    python -m starter tools                                  the table the model sees
    python -m starter call mcp__notes__read_note '{"id": "n-2"}'
    python -m starter ask "What do my notes say about timeouts?"
    QUESTION="..." python -m starter                         the same as ask

`--config FILE` names the servers config (labs/servers.json by default, found
from the current directory or beside the lab). Exit status: 0 done, 1 the
call or the question failed, 2 unusable input (the config, the arguments) or
no server could be reached. Everything a server wrote is printed through
`untrusted.shown` and indented under a line of the client's own, so it cannot
pass for the client's words. The reference's command line (solution/commands/)
has more: remote servers, consent questions, code mode, tasks, resources.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import List, Optional

import anyio

from .agent import run_agent
from .aggregator import Aggregator
from .config import Config, load_config
from .errors import ConfigError, ModelApiError
from .model import result_text
from .model_apis import choose_model
from .untrusted import indented, json_text, shown

DEFAULT_CONFIG = Path("labs") / "servers.json"
MAX_STEPS = 8


def parser(program: str) -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog=program, description="An MCP client: tools, a call, or a question.")
    made.add_argument("--config", help="the servers config (default: labs/servers.json)")
    made.add_argument("--timeout", type=float, default=30.0, help="seconds each request may take (default 30)")
    commands = made.add_subparsers(dest="command")
    commands.add_parser("tools", help="list the tools the model sees")
    call = commands.add_parser("call", help="call one tool by its model-facing name")
    call.add_argument("name")
    call.add_argument("arguments", nargs="?", default="{}", help="a JSON object (default {})")
    ask = commands.add_parser("ask", help="answer a question with the agent loop")
    ask.add_argument("question")
    ask.add_argument("--max-steps", type=int, default=MAX_STEPS, help=f"model turns at most (default {MAX_STEPS})")
    return made


def default_config() -> Path:
    here = Path.cwd() / DEFAULT_CONFIG
    return here if here.exists() else Path(__file__).resolve().parent.parent / DEFAULT_CONFIG


async def run(options: argparse.Namespace, config: Config) -> int:
    async with Aggregator(config, request_timeout=options.timeout) as tools:
        await tools.refresh()
        for alias, why in tools.offline.items():
            print(f"offline: {alias}: {shown(why, 300)}", file=sys.stderr)
        if not tools.connections:
            print("error: no server could be reached", file=sys.stderr)
            return 2
        if options.command == "tools":
            for alias, connection in tools.connections.items():  # the alias is ours; the name is the server's word
                info = connection.info
                print(f"server {alias}: calls itself {shown(info.name, 60)!r}, era {info.era}, "
                      f"{len(connection.tools)} tools")
            for entry in tools.entries.values():
                print(f"  {entry.model_name}  ({entry.alias}/{shown(entry.original_name, 60)}: "
                      f"{shown(entry.title, 80)})")
            return 0
        if options.command == "call":
            try:
                arguments = json.loads(options.arguments)
            except ValueError as exc:
                print(f"error: the arguments are not JSON: {exc}", file=sys.stderr)
                return 2
            result = await tools.call(options.name, arguments)
            print(f"{'error' if result.get('isError') else 'result'} from {shown(options.name, 80)}:")
            print(indented(result_text(result)))
            if "structuredContent" in result and not result.get("isError"):
                print("structured:\n" + indented(json_text(result["structuredContent"], indent=2)))
            return 1 if result.get("isError") else 0
        model, note = choose_model()
        print(note, file=sys.stderr)
        try:
            answer = await run_agent(options.question, tools, model, max_steps=options.max_steps)
        except ModelApiError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for step in answer.steps:
            went = f"sent to {step.alias} / {shown(step.original_name, 60)}" if step.alias else "not in the table"
            print(f"model chose {shown(step.model_name, 80)} -> {went}{' (an isError result)' if step.is_error else ''}")
        print("answer:\n" + indented(answer.answer))
        return 1 if answer.stopped_at_limit else 0


def main(argv: Optional[List[str]] = None) -> int:
    program = f"python -m {(__package__ or 'starter').split('.')[0]}"
    given = sys.argv[1:] if argv is None else argv
    if not given and os.environ.get("QUESTION"):
        given = ["ask", os.environ["QUESTION"]]
    options = parser(program).parse_args(given)
    if options.command is None:
        parser(program).print_usage(sys.stderr)
        print(f"{program}: error: name a command (tools, call, ask), or set QUESTION", file=sys.stderr)
        return 2
    try:
        config = load_config(options.config or default_config())
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    try:
        return anyio.run(run, options, config)
    except KeyboardInterrupt:
        print("stopped (Ctrl-C); every server was closed", file=sys.stderr)
        return 130
