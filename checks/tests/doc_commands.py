"""The commands in the lab's documents: each line of a shell block, every inline
span that starts with a program, an autograding block's setup and run; and the
notation of a usage line, resolved into every way of reading it.

A command is checked as written, with three kinds of notation resolved first:
`[...]` is optional, `a|b` (or `a \\| b` in a table) is a choice, and an
upper-case placeholder (`FILE`, `S`, `REGION ...`) stands for a sample value.
Every variant is parsed (doc_programs.py); each must be accepted.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Tuple

from checks.tests import documents
from checks.tests.documents import Span, blocks, spans


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
                "ITEM": "3", "NAME": "x", "REPORT.json": "placeholder.txt", "LEVEL": "LEVEL"}
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


def variants(written: str, substitute: bool = True) -> List[str]:
    """Every way of reading a usage line: each bracket present or absent, each choice;
    placeholders given their sample values (`substitute`) or left as written."""
    written = written.replace("\\|", "|")
    bracket = next((m for m in BRACKETS.finditer(written)
                    if any(a <= m.start() < b for a, b in outside_quotes(written))), None)
    if bracket is not None:
        inside = bracket.group(1) if bracket.group(1) is not None else bracket.group(2)
        options = [""] + ([o.strip() for o in inside.split(" | ")] if " | " in inside else [inside])
        head, tail = written[:bracket.start()], written[bracket.end():]
        return [v for o in options for v in variants(f"{head}{o}{tail}" if o else f"{head.rstrip()} {tail.lstrip()}",
                                                      substitute)]
    words = written.split(" ")
    at = next((i for i, w in enumerate(words) if "|" in w and not w.startswith(("'", '"'))
               and any(a <= len(" ".join(words[:i])) < b for a, b in outside_quotes(written))), None)
    if at is not None:
        return [v for choice in words[at].split("|")
                for v in variants(" ".join([*words[:at], choice, *words[at + 1:]]), substitute)]
    return [" ".join((substituted(written) if substitute else written).split())]


PLACEHOLDER = re.compile(r"(?<!\S)([A-Z][A-Z.=a-z]*|\.\.\.)(?!\S)")  # FILE, S, TOOL=S, ...: outside quotes


def readings(written: str) -> List[str]:
    """The readings of a command that hold no placeholder: the ones that run as they stand
    (`tools` and `tools --json` of `tools [--config FILE] [--json]`)."""
    return [v for v in variants(written, substitute=False)
            if not any(any(a <= m.start() < b for a, b in outside_quotes(v)) for m in PLACEHOLDER.finditer(v))]


NEEDS = re.compile(r"\bneeds (an API key|a key|a browser|a remote server)\b")


def needs(doc: str, line: int) -> Optional[str]:
    """What a command's comment says it needs that a test cannot have here (an API key, a
    browser, a remote server), read from its comment: `# ... (needs a remote server)`."""
    comment = documents.text(doc).splitlines()[line - 1].partition("  #")[2]
    found = NEEDS.search(comment)
    return found.group(1) if found else None


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
    return PLACEHOLDER.sub(lambda m: (m.group(0) if not any(a <= m.start() < b for a, b in ranges)
                                      else "" if m.group(0) == "..." else placeholder(m.group(0))), written).strip()
