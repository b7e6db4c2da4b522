"""The command line's resources, prompts and completions, and what every command
offers servers (roots, sampling, log levels).

    python -m solution resources [ALIAS]          every resource and template, all pages
    python -m solution read ALIAS URI             one resource's contents, bounded
    python -m solution watch ALIAS URI            subscribe; a line per update
    python -m solution prompts [ALIAS]            every prompt and its arguments
    python -m solution prompt ALIAS/NAME k=v ...  an agent run that starts from the prompt
    python -m solution complete ALIAS/NAME ARG [PREFIX]   values the server suggests

Server words go to the terminal through `untrusted.shown` only; the prompt's
messages reach the model fenced (server_prompts.py). A missing required
argument of a prompt is asked for at a terminal, with the server's suggestions
when it offers completions; without a terminal it is one line and exit 2.
Exit codes as the other commands': 0 done, 1 the server refused or failed, 2 bad input.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from typing import Mapping, Any, Awaitable, Callable, Dict, List

import anyio

from ..errors import ClientError
from ..errors import reason
from ..host.aggregator import Aggregator
from ..lifecycle.features import FeatureError
from ..lifecycle.roots import Roots
from ..lifecycle.server_log import DEFAULT_THRESHOLD, ServerLog
from ..lifecycle.server_prompts import declared, missing_arguments, prompt_named, prompt_question, unknown_arguments
from ..model import contents_text
from ..model import Model
from ..sampler import TerminalSampler
from ..untrusted import indented, json_text, shown
from .terminal import Terminal

FEATURE_COMMANDS = ("resources", "read", "watch", "prompts", "prompt", "complete")
LISTINGS = ("tools", "stubs", "resources", "read", "watch", "prompts", "complete")  # no tool is called: no audit
Answer = Callable[[str], Awaitable[int]]



def offered(mode: str, model_configured: bool, terminal: bool) -> bool:
    """Whether to declare sampling: `off` never; `ask` when a model is configured;
    `auto` when one is and there is a terminal to approve on."""
    if mode == "off" or not model_configured:
        return False
    return mode == "ask" or terminal


def model_configured(env: Mapping[str, str]) -> bool:
    """A model the user chose: the mock by MOCK=1, or a model API's settings (not the fallback mock)."""
    return env.get("MOCK", "") not in ("", "0") or bool(
        env.get("ANTHROPIC_API_KEY") or env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_KEY"))

def has_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def serve_servers(tools: Aggregator, options: argparse.Namespace, terminal: Terminal, model: Model) -> None:
    """What servers are offered this run: the roots, sampling when it can be approved, the log level."""
    tools.roots = Roots(options.root or [os.getcwd()])
    if offered(options.sampling, model_configured(os.environ), has_terminal()):
        tools.sampler = TerminalSampler(model, terminal)
    tools.connector.log_level = options.log_level  # None: servers are asked for nothing
    tools.server_log = ServerLog(terminal.note, options.log_level or DEFAULT_THRESHOLD, options.log_level is not None)


def aliases(tools: Aggregator, wanted: str, capability: str) -> List[str]:
    """The servers a listing covers: the one named, or each connected one that declares `capability`."""
    if wanted:
        return [wanted]
    return [alias for alias, c in tools.connections.items() if capability in c.info.capabilities]


async def feature_command(tools: Aggregator, options: argparse.Namespace, answer: Answer) -> int:
    if options.alias and options.alias not in {s.alias for s in tools.config.servers}:
        print(f"error: no server {options.alias!r} in the config", file=sys.stderr)
        return 2
    try:
        return await {"resources": list_resources, "read": read_one, "watch": watch, "prompts": list_prompts,
                      "prompt": run_prompt, "complete": complete_one}[options.command](tools, options, answer)
    except (FeatureError, ClientError) as exc:
        print(f"error: {shown(reason(exc), 400)}", file=sys.stderr)
        return 1


async def list_resources(tools: Aggregator, options: argparse.Namespace, answer: Answer) -> int:
    found: Dict[str, Any] = {}
    for alias in aliases(tools, options.alias, "resources"):
        found[alias] = {"resources": await tools.listing(alias, "resources/list"),
                        "templates": await tools.listing(alias, "resources/templates/list")}
    if options.json:
        print(json_text(found, indent=2))
        return 0
    for alias, listed in found.items():
        print(f"{alias}: {len(listed['resources'])} resources, {len(listed['templates'])} templates")
        for item in listed["resources"]:
            print(f"  {shown(item['uri'], 300)}  {shown(item.get('name', ''), 80)}  {shown(item.get('mimeType', ''), 60)}")
        for item in listed["templates"]:
            print(f"  template {shown(item['uriTemplate'], 300)}  {shown(item.get('name', ''), 80)}")
    return 0


async def read_one(tools: Aggregator, options: argparse.Namespace, answer: Answer) -> int:
    contents = await tools.read_resource(options.alias, options.uri)
    if options.json:
        print(json_text({"contents": contents}, indent=2))
        return 0
    for item in contents:
        print(f"[{shown(item.get('uri', options.uri), 300)} {shown(item.get('mimeType', ''), 60)}]".replace(" ]", "]"))
        print(indented(contents_text(item)))  # set in: the server's words, never ours
    return 0


async def watch(tools: Aggregator, options: argparse.Namespace, answer: Answer) -> int:
    seen = 0
    done = anyio.Event()

    def updated(alias: str, uri: str) -> None:
        nonlocal seen
        # A burst of updates arrives before the wait below can end the command: past
        # --count, the rest are not shown.
        if alias == options.alias and uri == options.uri and seen < options.count:
            seen += 1
            print(f"updated: {alias} {shown(uri, 300)}", flush=True)
            if seen >= options.count:
                done.set()
    tools.on_resource_update = updated
    await tools.subscribe(options.alias, options.uri)
    with anyio.move_on_after(options.seconds):
        await done.wait()
    if seen < options.count:
        print(f"{seen} of {options.count} updates within {options.seconds:g} s", file=sys.stderr)
    return 0 if seen >= options.count else 1


async def list_prompts(tools: Aggregator, options: argparse.Namespace, answer: Answer) -> int:
    found = {alias: await tools.listing(alias, "prompts/list") for alias in aliases(tools, options.alias, "prompts")}
    if options.json:
        print(json_text(found, indent=2))
        return 0
    for alias, prompts in found.items():
        print(f"{alias}: {len(prompts)} prompts")
        for prompt in prompts:
            arguments = ", ".join(shown(a["name"], 40) + ("*" if a.get("required") is True else "")
                                  for a in declared(prompt))
            print(f"  {alias}/{shown(prompt['name'], 80)}({arguments})  {shown(prompt.get('description', ''), 120)}")
    return 0


async def ask_missing(tools: Aggregator, alias: str, name: str, missing: List[str],
                      given: Dict[str, str]) -> None:
    """Each missing required argument from the person, with the server's suggestions."""
    terminal = Terminal()
    async with terminal.turn(f"arguments for {alias}/{name}"):
        for argument in missing:
            values = await tools.complete_argument(alias, name, argument, "", given)
            hint = f" (suggested: {', '.join(shown(v, 40) for v in values[:10])})" if values else ""
            given[argument] = (await terminal.read(f"{argument}{hint}: ")).strip()


async def run_prompt(tools: Aggregator, options: argparse.Namespace, answer: Answer) -> int:
    alias, name = options.target
    prompt = prompt_named(await tools.listing(alias, "prompts/list"), name)
    if prompt is None:
        print(f"error: server '{alias}' offers no prompt {shown(name, 80)!r} (python -m solution prompts {alias})",
              file=sys.stderr)
        return 2
    unknown, missing = unknown_arguments(prompt, options.arguments), missing_arguments(prompt, options.arguments)
    if unknown:
        print(f"error: {alias}/{shown(name, 80)} takes no argument {', '.join(map(repr, unknown))}", file=sys.stderr)
        return 2
    if missing and has_terminal():
        await ask_missing(tools, alias, name, missing, options.arguments)
    elif missing:
        print(f"error: {alias}/{shown(name, 80)} needs {', '.join(missing)} (as key=value; "
              f"python -m solution complete {alias}/{name} {missing[0]} shows values)", file=sys.stderr)
        return 2
    result = await tools.get_prompt(alias, name, options.arguments)
    return await answer(prompt_question(alias, name, options.arguments, result, secrets.token_hex(6)))


async def complete_one(tools: Aggregator, options: argparse.Namespace, answer: Answer) -> int:
    alias, name = options.target
    tools.offering(alias, "prompts")
    if "completions" not in tools.connections[alias].info.capabilities:
        print(f"error: server '{alias}' does not offer completions", file=sys.stderr)
        return 1
    values = await tools.complete_argument(alias, name, options.argument, options.prefix, options.context)
    print(json_text(values, indent=2) if options.json else "\n".join(shown(v, 200) for v in values))
    return 0
