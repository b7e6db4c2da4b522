"""The command line's words for resources, prompts and completions, and the options
every command takes for what servers are offered (--root, --sampling, --log-level).
Pure argparse, as cli_options.py: cli_features.py runs what this parses.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..lifecycle.roots import root_problem
from ..lifecycle.server_log import LEVELS
from ..lifecycle.server_prompts import assignments, split_target

SAMPLING_MODES = ("auto", "ask", "off")  # sampler.offered says what each means


def add_offers(common: argparse.ArgumentParser, default: Any) -> None:
    """The options for what servers are offered, on every command."""
    common.add_argument("--root", action="append", default=default(None), metavar="DIR",
                        help="a directory servers may work in (repeatable; default: the working directory)")
    common.add_argument("--sampling", choices=SAMPLING_MODES, default=default("auto"),
                        help="answer servers' sampling requests with the model: auto (with a model configured "
                             "and a terminal to approve on), ask (approvals read from standard input even "
                             "without a terminal), off")
    common.add_argument("--log-level", choices=LEVELS, default=default(None),
                        help="ask servers for their log messages at or above this level, shown on stderr "
                             "(default: none asked; warning and above shown when sent)")


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """The subcommands above, for cli_options.parse."""
    for name, what in (("resources", "list every resource and template of a server (or of all)"),
                       ("prompts", "list every prompt of a server (or of all), with its arguments")):
        sub.add_parser(name, parents=[common], help=what).add_argument("alias", nargs="?", default="")
    read = sub.add_parser("read", parents=[common], help="show one resource's contents (bounded)")
    read.add_argument("alias")
    read.add_argument("uri")
    watch_ = sub.add_parser("watch", parents=[common], help="subscribe to a resource and print each update")
    watch_.add_argument("alias")
    watch_.add_argument("uri")
    watch_.add_argument("--count", type=int, default=1, help="stop after this many updates (default 1)")
    watch_.add_argument("--seconds", type=float, default=60.0, help="stop waiting after this long (default 60)")
    prompt = sub.add_parser("prompt", parents=[common], help="run the agent on a server's prompt")
    prompt.add_argument("target", metavar="ALIAS/NAME")
    prompt.add_argument("arguments", nargs="*", metavar="KEY=VALUE")
    prompt.add_argument("--max-steps", type=int, default=8)
    complete = sub.add_parser("complete", parents=[common], help="the values a server suggests for a prompt's argument")
    complete.add_argument("target", metavar="ALIAS/NAME")
    complete.add_argument("argument")
    complete.add_argument("prefix", nargs="?", default="")
    complete.add_argument("--context", nargs="*", default=[], metavar="KEY=VALUE",
                          help="the arguments already chosen")


def check(parser: argparse.ArgumentParser, options: argparse.Namespace) -> None:
    """The new commands' words, checked before anything starts (parser.error: one line, exit 2)."""
    options.alias = getattr(options, "alias", "")
    for directory in options.root or []:
        problem = root_problem(directory)
        if problem is not None:
            parser.error(problem)
    if options.command in ("prompt", "complete"):
        try:
            options.target = split_target(options.target)
            options.alias = options.target[0]
            options.arguments = assignments(getattr(options, "arguments", []))
            options.context = assignments(getattr(options, "context", []))
        except ValueError as exc:
            parser.error(str(exc))
        options.question, options.code_mode = "", False
    if options.command == "watch" and (options.count < 1 or not options.seconds > 0):
        parser.error("watch wants --count of 1 or more and --seconds above 0")
