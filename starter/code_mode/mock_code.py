"""The mock model in code mode: a deterministic script from the question and
the stubs in `run_script`'s description (what a real model would read).

Two shapes, both built only from what the stubs offer:

- a digest ("read the notes about X, Y and Z and save ... as a note"): one
  search, a read per hit, one new note, one printed line;
- anything else: the stub function that shares the most words with the
  question, called once with arguments taken from the question, its result
  printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional

from ..jsonrpc import Json
from ..mock_model import MockModel
from ..model import ModelTurn, ToolCall
from .run_script import RUN_SCRIPT

_MODULE = re.compile(r"^# module (\w+) ")
_FUNCTION = re.compile(r"^async def (\w+)\(\*?,? ?(.*)\) -> (.+):$")
_DOC = re.compile(r'"""From the server \(its words\): (.*?)"""')
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_QUOTED = re.compile(r"[\"'“‘]([^\"'”’]+)[\"'”’]")
_DIGEST = re.compile(r"\bnotes? (?:about|on) (.+?),? and (?:save|add|write|keep)\b", re.I)
_STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "me", "is", "what", "about", "please",
         "with", "read", "save", "their", "as", "one", "new", "all", "every", "them"}


@dataclass(frozen=True)
class StubFunction:
    module: str
    name: str
    params: List[str]  # "key: type" or "key: type | None = None"
    doc: str


def stub_functions(description: str) -> List[StubFunction]:
    """Every function the stubs in a run_script description declare."""
    found: List[StubFunction] = []
    module = ""
    lines = description.splitlines()
    for number, line in enumerate(lines):
        named = _MODULE.match(line)
        if named:
            module = named.group(1)
        matched = _FUNCTION.match(line)
        if matched and module:
            doc = _DOC.search(lines[number + 1]) if number + 1 < len(lines) else None
            params = [p.strip() for p in split_params(matched.group(2)) if p.strip()]
            found.append(StubFunction(module, matched.group(1), params, doc.group(1) if doc else ""))
    return found


def split_params(text: str) -> List[str]:
    """Parameters split at top-level commas (types hold commas of their own)."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "[(" and 1 or (char in "])" and -1 or 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return parts + [current]


def find(functions: List[StubFunction], name: str) -> Optional[StubFunction]:
    return next((f for f in functions if f.name == name), None)


def script_for(question: str, description: str) -> Optional[str]:
    """The script the mock writes, or None when no stub fits the question."""
    functions = stub_functions(description)
    digest = _DIGEST.search(question)
    search, read, add = find(functions, "search"), find(functions, "read_note"), find(functions, "add_note")
    if digest and search and read and add and search.module == read.module == add.module:
        topics = " ".join(w for w in _WORD.findall(digest.group(1)) if w.lower() not in _STOP)
        return (f"from {search.module} import search, read_note, add_note\n\n"
                f"found = await search(query={topics!r})\n"
                "titles = []\n"
                "for hit in found[\"results\"]:\n"
                "    note = await read_note(id=hit[\"id\"])\n"
                "    titles.append(note[\"title\"])\n"
                "saved = await add_note(title=\"Digest\", body=\"; \".join(titles))\n"
                "print(f\"read {len(titles)} notes ({', '.join(titles)}); saved them as note {saved['id']}\")\n")
    best = best_function(question, functions)
    if best is None:
        return None
    arguments = ", ".join(f"{key}={value!r}" for key, value in fill(question, best).items())
    return f"from {best.module} import {best.name}\n\nprint(await {best.name}({arguments}))\n"


def best_function(question: str, functions: List[StubFunction]) -> Optional[StubFunction]:
    wanted = {w.lower() for w in _WORD.findall(question)} - _STOP
    scored = [(3 * len(wanted & set(f.name.lower().split("_"))) +
               len(wanted & {w.lower() for w in _WORD.findall(f.doc)}), -order, f)
              for order, f in enumerate(functions)]
    score, _, best = max(scored, key=lambda s: (s[0], s[1]), default=(0, 0, None))
    return best if score > 0 else None


def fill(question: str, function: StubFunction) -> "dict[str, object]":
    """Required arguments from the question: a quoted phrase, an id-like word, a number, else keywords."""
    quoted = _QUOTED.findall(question)
    tokens = _WORD.findall(question)
    ids = [t for t in tokens if re.fullmatch(r"[A-Za-z]+-\d+", t)]
    keywords = " ".join(t for t in tokens if t.lower() not in _STOP | set(function.name.split("_")))
    arguments: "dict[str, object]" = {}
    for param in function.params:
        key, kind = param.split(":", 1)[0], param.split(":", 1)[1]
        if param.endswith("= None"):
            continue
        if kind.strip().startswith("int"):
            numbers = [int(t) for t in tokens if t.isdigit()]
            arguments[key] = numbers[0] if numbers else 0
        elif kind.strip().startswith("bool"):
            arguments[key] = False
        else:
            arguments[key] = quoted.pop(0) if quoted else (ids.pop(0) if ids and "id" in key else keywords)
    return arguments


class CodeModeMock(MockModel):
    """The mock, writing one script when its only tool is `run_script`."""

    def first_call(self, question: str, tools: List[Json], call_id: str) -> ModelTurn:
        if [t.get("name") for t in tools] != [RUN_SCRIPT]:
            return super().first_call(question, tools, call_id)
        script = script_for(question, str(tools[0].get("description", "")))
        if script is None:
            return ModelTurn("None of the tool functions fits that question.")
        return ModelTurn("", [ToolCall(call_id, RUN_SCRIPT, {"script": script})])
