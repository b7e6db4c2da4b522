"""The lab's documents as the tests read them: code blocks, inline code, the
commands in both, and each command parsed by the parser of the program it
names (see test_documents.py for why a collector of our own).

A command is checked as written, with three kinds of notation resolved first:
`[...]` is optional, `a|b` (or `a \\| b` in a table) is a choice, and an
upper-case placeholder (`FILE`, `S`, `REGION ...`) stands for a sample value.
Every variant is parsed; each must be accepted.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import io
import itertools
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple
from unittest import mock

from checks.target import ROOT

DOCUMENTS = ("README.md", "labs/GUIDE.md", "labs/INSTRUCTORS.md", "labs/CLIENT.md", "labs/MAINTAINERS.md",
             "servers/README.md")
GENERATED = re.compile(r"(<!-- contract (\S+):.*?\n)(.*?)(<!-- /contract \2 -->)", re.S)  # test_contracts holds these
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+(?:\n[^`\n]+)?)`")  # inline code, at most over one line break
PACKAGES = ("checks", "solution", "starter", "servers")


@dataclass(frozen=True)
class Block:
    doc: str
    line: int  # of the opening fence
    lang: str
    text: str


@dataclass(frozen=True)
class Span:
    doc: str
    line: int
    text: str  # whitespace folded; `\|` (a table's escape) read as `|`


@dataclass(frozen=True)
class Command:
    doc: str
    line: int
    text: str  # as written
    env: Tuple[Tuple[str, str], ...]
    words: Tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


def text(doc: str) -> str:
    """The document, with the generated clause blocks blanked (their lines kept)."""
    raw = (ROOT / doc).read_text(encoding="utf-8")
    return GENERATED.sub(lambda m: m.group(1) + "\n" * m.group(3).count("\n") + m.group(4), raw)


def line_of(whole: str, offset: int) -> int:
    return whole.count("\n", 0, offset) + 1


def blocks(doc: str) -> List[Block]:
    whole = text(doc)
    return [Block(doc, line_of(whole, m.start()), m.group(2), m.group(3)) for m in FENCE.finditer(whole)]


def prose(doc: str) -> str:
    """The document without its code blocks (their lines kept)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text(doc))


def spans(doc: str) -> List[Span]:
    whole = prose(doc)
    return [Span(doc, line_of(whole, m.start()), " ".join(m.group(1).replace("\\|", "|").split()))
            for m in SPAN.finditer(whole)]


def block_after(doc: str, phrase: str) -> Block:
    """The first code block after the first line holding `phrase`."""
    whole = text(doc)
    at = whole.index(phrase)
    return next(b for b in blocks(doc) if b.line > line_of(whole, at))


def folded(doc: str) -> str:
    """The document as one line: whitespace folded, backticks and table escapes gone."""
    return " ".join(text(doc).replace("`", "").replace("\\|", "|").split())


def table_after(doc: str, phrase: str) -> List[List[str]]:
    """The cells of each body row of the first table after `phrase`."""
    lines = prose(doc).splitlines()
    at = next(i for i, line in enumerate(lines) if phrase in line)
    start = next(i for i in range(at, len(lines)) if lines[i].startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows


# -- numbers as the documents write them --------------------------------------------------

WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen twenty").split()


def spoken(n: int) -> str:
    return WORDS[n] if 0 <= n < len(WORDS) else f"{n:,}"


def g(x: float) -> str:
    """A number as the documents write it: 0.5, 30, 10,000."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:g}"


def listed(numbers: Any, last: str = " and ") -> str:
    items = [str(n) for n in sorted(numbers)]
    return ", ".join(items[:-1]) + last + items[-1] if len(items) > 1 else "".join(items)


# -- commands ---------------------------------------------------------------------------

PROGRAMS = {"python", "python3", "pip", "pytest", "mypy", ".", "git", "gh"}
ASSIGNMENT = re.compile(r"[A-Z][A-Z0-9_]*=")
SCRIPT = re.compile(r"[\w./-]+\.py")


def program_of(words: Sequence[str]) -> Optional[str]:
    rest = list(itertools.dropwhile(lambda w: ASSIGNMENT.match(w) is not None, words))
    if not rest:
        return None
    first = rest[0].split("/")[-1] if rest[0].startswith(".venv/bin/") else rest[0]
    return first if first in PROGRAMS or SCRIPT.fullmatch(first) else None


def shell_words(line: str) -> List[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return line.split()


def pieces(line: str) -> List[str]:
    """A shell line's commands: split at `&&`, `;` and pipes (not a `|` inside a
    usage's brackets or quotes), redirections dropped."""
    found, current, depth, quote = [], "", 0, ""
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "[":
            depth += 1
        elif c == "]":
            depth = max(0, depth - 1)
        elif depth == 0 and (line.startswith(" && ", i) or line.startswith(" || ", i)):
            found.append(current)
            current, i = "", i + 4
            continue
        elif depth == 0 and (line.startswith(" | ", i) or line.startswith("; ", i)):
            found.append(current)
            current, i = "", i + (3 if c == " " else 2)
            continue
        current += c
        i += 1
    found.append(current)
    return [re.split(r"\s[<>]\s", part)[0].strip() for part in found if part.strip()]


def command_texts(doc: str) -> Iterator[Tuple[int, str]]:
    """(line, text) of every command: each line of a shell block, every inline
    span that starts with a program, and an autograding block's setup and run."""
    for block in blocks(doc):
        if block.lang in ("sh", "bash"):
            for n, line in enumerate(block.text.splitlines(), block.line + 1):
                for part in pieces(line.split("  #")[0]):
                    yield n, part
        elif block.lang == "json" and '"run"' in block.text:
            for entry in json.loads(block.text)["tests"]:
                for key in ("setup", "run"):
                    for part in pieces(entry[key]):
                        yield block.line, part
    for span in spans(doc):
        words = shell_words(span.text)
        if len(words) > 1 and program_of(words) is not None:
            for part in pieces(span.text):
                yield span.line, part


def commands(doc: str) -> List[Command]:
    found = []
    for line, written in command_texts(doc):
        for variant in variants(written):
            words = shell_words(variant)
            env = tuple((w.split("=", 1)[0], w.split("=", 1)[1]) for w in
                        itertools.takewhile(lambda w: ASSIGNMENT.match(w) is not None, words))
            found.append(Command(doc, line, written, env, tuple(words[len(env):])))
    return found


def options_in(doc: str) -> List[Span]:
    """Inline spans that are options alone (`--all`, `--era legacy`), not commands."""
    return [s for s in spans(doc) if s.text.startswith("--") and re.match(r"--[a-z]", s.text)]


# -- notation ---------------------------------------------------------------------------

PLACEHOLDERS = {"FILE": "placeholder.txt", "DIR": ".", "S": "1.5", "N": "3", "MS": "100", "PORT": "8765",
                "METHOD": "tools/list", "TOOL": "search", "JSON": "{}", "SCHEMA": "{}", "REGION": "3",
                "ITEM": "3", "NAME": "x", "REPORT.json": "placeholder.txt"}
BRACKETS = re.compile(r"(?<![\w.'\"])\[([^\[\]]*)\]|(?<=[A-Z])\[([^\[\]]*)\]")


def outside_quotes(text: str) -> List[Tuple[int, int]]:
    """Ranges of `text` not inside quotes."""
    ranges, start, quote = [], 0, ""
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote, start = "", i + 1
        elif c in "'\"":
            ranges.append((start, i))
            quote = c
    if not quote:
        ranges.append((start, len(text)))
    return ranges


def variants(written: str) -> List[str]:
    """Every way of reading a usage line: each bracket present or absent, each choice."""
    written = written.replace("\\|", "|")
    bracket = next((m for m in BRACKETS.finditer(written)
                    if any(a <= m.start() < b for a, b in outside_quotes(written))), None)
    if bracket is not None:
        inside = bracket.group(1) if bracket.group(1) is not None else bracket.group(2)
        options = [""] + ([o.strip() for o in inside.split(" | ")] if " | " in inside else [inside])
        head, tail = written[:bracket.start()], written[bracket.end():]
        return [v for o in options for v in variants(f"{head}{o}{tail}" if o else f"{head.rstrip()} {tail.lstrip()}")]
    words = written.split(" ")
    at = next((i for i, w in enumerate(words) if "|" in w and not w.startswith(("'", '"'))
               and any(a <= len(" ".join(words[:i])) < b for a, b in outside_quotes(written))), None)
    if at is not None:
        return [v for choice in words[at].split("|")
                for v in variants(" ".join([*words[:at], choice, *words[at + 1:]]))]
    return [" ".join(substituted(written).split())]


def placeholder(word: str) -> str:
    if word in PLACEHOLDERS:
        return PLACEHOLDERS[word]
    if re.fullmatch(r"[A-Z]+=[A-Z]+", word):  # TOOL=S, TOOL=JSON, NAME=SCHEMA
        left, right = word.split("=")
        return f"{PLACEHOLDERS.get(left, left)}={PLACEHOLDERS.get(right, right)}"
    return word


def substituted(written: str) -> str:
    """Placeholders outside quotes replaced by sample values; `...` dropped."""
    ranges = outside_quotes(written)
    return re.sub(r"(?<!\S)([A-Z][A-Z.=a-z]*|\.\.\.)(?!\S)",
                  lambda m: (m.group(0) if not any(a <= m.start() < b for a, b in ranges)
                             else "" if m.group(0) == "..." else placeholder(m.group(0))), written).strip()


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
    if module in ("solution", "starter"):
        options = importlib.import_module(f"{module}.cli_options")
        return lambda argv: options.parse(argv, f"python -m {module}")
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
               "checks.dev.cost")


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
               if not p.name.startswith("test_") and p.name != "documents.py"] + [ROOT / ".ci" / "run"]
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
                return f"{module} is not a program of the lab (or not known to checks/tests/documents.py)"
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
        return f"{module} is not a program of the lab"
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
    "checks.dev.interop": [[]], "checks.dev.bench": [[]]}


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
