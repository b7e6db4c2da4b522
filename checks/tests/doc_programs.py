"""Each documented command parsed by the parser of the program it names, and run
no further: `checks.cli.parse`, the clients' `commands.options.parse`, the servers'
`parse_options`, and every other program's `main`, stopped at its own
`parse_args`. What a command must be to be right: a program of the lab, options
its parser takes, environment variables the code reads, extras pyproject has.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set
from unittest import mock

from checks.target import ROOT
from checks.tests.doc_commands import PLACEHOLDERS, SCRIPT, Command, shell_words, variants
from checks.tests.documents import PACKAGES, Span, of_the_collector


# -- parsing a command with its program's own parser --------------------------------------

class Parsed(Exception):
    """Raised in place of running a program once its parser has read the arguments."""

    def __init__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace) -> None:
        super().__init__(parser.prog)
        self.parser, self.namespace = parser, namespace


@contextlib.contextmanager
def stop_after_parsing() -> Iterator[None]:
    """Every `parse_args` in here parses, then raises Parsed: a program's `main`
    reads its arguments with its real parser, and nothing after that runs."""
    original = argparse.ArgumentParser.parse_args

    def parse_args(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None) -> Any:
        raise Parsed(self, original(self, args, namespace))
    with mock.patch.object(argparse.ArgumentParser, "parse_args", parse_args):
        yield


class Refused(Exception):
    """A program's parser refused the arguments (its message)."""


def direct(module: str) -> Optional[Callable[[List[str]], Any]]:
    """The parse function of a program that checks values after argparse too (so
    it is called whole), or None for a program whose `main` parses first."""
    if module == "checks":
        from checks.cli import parse as checks_parse
        return checks_parse
    if module == "solution":
        options = importlib.import_module("solution.commands.options")
        return lambda argv: options.parse(argv, "python -m solution")
    if module == "starter":  # the day's command line: tools, call, ask
        day = importlib.import_module("starter.cli")
        return lambda argv: day.parser("python -m starter").parse_args(argv)
    if module in ("servers.notes", "servers.tickets"):
        from servers.switches import parse_options
        return lambda argv: parse_options(module.split(".")[1], argv)
    if module == "checks.dev.mutants":
        from checks.dev.mutants.__main__ import parse as mutants_parse
        return mutants_parse
    if module in TAKE_NO_ARGUMENTS:  # no parser of their own: any argument would be ignored, so none is right
        return lambda argv: argparse.ArgumentParser(prog=f"python -m {module}").parse_args(argv)
    return None


def run_to_parsing(module: str, argv: List[str]) -> Any:
    parse_whole = direct(module)
    if parse_whole is not None:
        return parse_whole(argv)
    with stop_after_parsing():
        importlib.import_module(MAINS.get(module, module)).main(argv)
    raise AssertionError(f"{module}'s main ran without parsing its arguments")


def parse(module: str, argv: List[str], env: Optional[Dict[str, str]] = None) -> argparse.Namespace:
    """`python -m module *argv`, parsed by that module's own parser, run no further."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
            mock.patch.dict(os.environ, env or {}):
        try:
            found: argparse.Namespace = run_to_parsing(module, argv)
            return found
        except Parsed as done:
            return done.namespace
        except SystemExit as exc:
            if exc.code in (0, None):  # --help
                return argparse.Namespace()
            said = err.getvalue().strip()
            raise Refused(said.splitlines()[-1] if said else str(exc)) from None


MAINS = {"checks.dev.mutants": "checks.dev.mutants.__main__"}
TAKE_NO_ARGUMENTS = ("checks.dev.faults", "checks.dev.cost")
LAB_MODULES = ("checks", "solution", "starter", "servers.notes", "servers.tickets", "servers.misbehave",
               "checks.gradebook", "checks.dev.load", "checks.dev.contracts", "checks.dev.mutants",
               "checks.dev.conformance", "checks.dev.faults", "checks.dev.interop", "checks.dev.bench",
               "checks.dev.cost", "checks.dev.starter")


def parser_of(module: str, argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser a program reads `argv` with, caught at its parse_args."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), stop_after_parsing():
        try:
            run_to_parsing(module, list(argv))
        except Parsed as done:
            return done.parser
    raise AssertionError(f"{module} has no parser that reads {list(argv)}: {err.getvalue()}")


def option_strings(parser: argparse.ArgumentParser) -> Set[str]:
    found: Set[str] = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= option_strings(sub)
    return found


# -- what a command must be --------------------------------------------------------------

@dataclass
class Scratch:
    """A directory to parse in: the files a command names are made there first."""

    directory: Path

    @contextlib.contextmanager
    def inside(self, words: Sequence[str]) -> Iterator[None]:
        for word in words:
            if re.fullmatch(r"[\w-]+\.(py|txt|json|html|csv|jsonl)", word):
                (self.directory / word).write_text("")
        before = os.getcwd()
        os.chdir(self.directory)
        try:
            yield
        finally:
            os.chdir(before)


def extras() -> Set[str]:
    text_ = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = text_.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([\w-]+) = \[", block, re.M))


@functools.lru_cache(maxsize=None)
def code_text() -> str:
    """The lab's code (not its tests) and CI's script: what reads the environment."""
    sources = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
               if not p.name.startswith("test_") and not of_the_collector(p.name)] + [ROOT / ".ci" / "run"]
    return "\n".join(p.read_text(encoding="utf-8") for p in sources)


@functools.lru_cache(maxsize=None)
def upper_case_names() -> FrozenSet[str]:
    """Every upper-case name the code quotes ("MOCK") or assigns in a shell line (MOCK=1)."""
    found = re.findall(r"[\"']([A-Z][A-Z0-9_]*)[\"']|\b([A-Z][A-Z0-9_]*)=", code_text())
    return frozenset(name for pair in found for name in pair if name)


def read_by_the_code(name: str) -> bool:
    """Does the lab's code (not its tests) read this environment variable?"""
    return name in upper_case_names()


def problem(command: Command, scratch: Scratch) -> Optional[str]:
    """None when the command is one the lab's programs accept; otherwise why not."""
    env = dict(command.env)
    unread = [name for name in env if not read_by_the_code(name)]
    if unread:
        return f"no code reads {', '.join(unread)}"
    words = list(command.words)
    if not words:
        return None
    first = words[0].split("/")[-1] if words[0].startswith(".venv/bin/") else words[0]
    rest = words[1:]
    if first in ("python", "python3"):
        while rest and re.fullmatch(r"-[IESsBu]+", rest[0]):
            rest = rest[1:]
        if not rest:
            return None
        if rest[0] == "-m":
            module, argv = rest[1], rest[2:]
            if module == "venv":
                return None if argv == [".venv"] else f"the documents' venv is .venv, not {argv}"
            if module not in LAB_MODULES:
                return f"{module} is not a program of the lab (or not in LAB_MODULES, checks/tests/doc_programs.py)"
            return refused(module, argv, env, scratch)
        return script(rest[0], rest[1:], env, scratch)
    if SCRIPT.fullmatch(first):
        return script(first, rest, env, scratch)
    if first == "pip":
        if rest == ["install"]:  # the words, not a command ("a bare `pip install`")
            return None
        if rest[:2] != ["install", "-e"] or len(rest) != 3:
            return "pip appears only as `pip install -e .[extra]`"
        wanted = set(re.findall(r"[\w-]+", rest[2].strip("'.[]")))
        return None if rest[2].startswith(".") and wanted <= extras() else f"no extra {wanted - extras()} in pyproject"
    if first in ("pytest", "mypy", "git"):
        paths = [w for w in rest if not w.startswith("-") and w not in ("checkout", "<template-commit>")]
        missing = [p for p in paths if not (ROOT / p).exists()]
        return f"no such path: {', '.join(missing)}" if missing else None
    if first == ".":
        return None if rest == [".venv/bin/activate"] else f"sources {rest}"
    if first == "gh":
        return None  # GitHub's own command line: not the lab's to check
    return f"unknown program {first}"


def script(path: str, argv: List[str], env: Dict[str, str], scratch: Scratch) -> Optional[str]:
    found = next((p for p in (ROOT / path, ROOT / "servers" / path) if p.exists()), None)
    if found is None:
        return f"no such script: {path}"
    module = ".".join(found.relative_to(ROOT).with_suffix("").parts)
    if module not in LAB_MODULES:
        return f"{module} is not a program of the lab (or not in LAB_MODULES, checks/tests/doc_programs.py)"
    return refused(module, argv, env, scratch)


def refused(module: str, argv: List[str], env: Dict[str, str], scratch: Scratch) -> Optional[str]:
    with scratch.inside(argv):
        try:
            parse(module, argv, env)
        except Refused as exc:
            # A placeholder stands for any value the option takes: one of its choices, if it has them.
            choice = re.search(r"invalid choice: '([^']*)' \(choose from '([^']*)'", str(exc))
            if choice is not None and choice.group(1) in PLACEHOLDERS.values():
                given = argv.index(choice.group(1))
                return refused(module, [*argv[:given], choice.group(2), *argv[given + 1:]], env, scratch)
            return f"python -m {module} refuses it: {exc}"
    return None


# Where an option alone (`--all`, `--era legacy`) may belong: each program, after the
# arguments its parser needs first.
BASES: Dict[str, List[List[str]]] = {
    "checks": [[]], "solution": [["tools"], ["ask", "q"], ["call", "x"]], "servers.notes": [[]],
    "servers.misbehave": [["--scenario", "noise"]], "checks.gradebook": [["r.json"]], "checks.dev.load": [[]],
    "checks.dev.contracts": [[]], "checks.dev.mutants": [[]], "checks.dev.conformance": [[]],
    "checks.dev.interop": [[]], "checks.dev.bench": [[]], "checks.dev.starter": [[]]}


@functools.lru_cache(maxsize=None)
def options_of(module: str) -> FrozenSet[str]:
    return frozenset(option_strings(parser_of(module, BASES[module][0])))


def fragment_problem(span: Span, scratch: Scratch) -> Optional[str]:
    """None when some program of the lab takes these options as written (an
    option named alone, without the value it takes, need only exist)."""
    for variant in variants(span.text):
        words = shell_words(variant)
        owners = [m for m in BASES if words[0] in options_of(m)]
        if not owners:
            return f"no program of the lab has {words[0]}"
        if len(words) > 1 and not any(refused(m, [*base, *words], {}, scratch) is None
                                      for m in owners for base in BASES[m]):
            return f"no program of the lab takes {variant}"
    return None
