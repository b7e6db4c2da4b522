"""The lab's documents as the tests read them: code blocks, inline code, tables,
the prose folded to one line, and numbers written as the documents write them.
doc_commands.py finds the commands in them, doc_programs.py parses each with its
program's own parser (test_documents.py says why a collector of our own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, List

from checks.target import ROOT

DOCUMENTS = ("README.md", "labs/GUIDE.md", "labs/INSTRUCTORS.md", "labs/CLIENT.md", "labs/MAINTAINERS.md",
             "servers/README.md")
GENERATED = re.compile(r"(<!-- contract (\S+):.*?\n)(.*?)(<!-- /contract \2 -->)", re.S)  # test_contracts holds these
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+(?:\n[^`\n]+)?)`")  # inline code, at most over one line break
PACKAGES = ("checks", "solution", "starter", "servers")


def of_the_collector(name: str) -> bool:
    """A file of these tests (documents.py, doc_*.py, test_documents*.py): their
    words are the documents', so a check of the code must not read them."""
    return name == "documents.py" or name.startswith(("doc_", "test_documents"))


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
