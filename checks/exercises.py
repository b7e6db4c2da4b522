"""The four exercise points: where each lives, which items it owns, and the
region markers that delimit it in `starter/` and `solution/`.

Region syntax, identical in both packages (only the lines between differ: the
starter's are the stubs `python -m checks.dev.starter` puts in, from
checks/dev/starter_stubs.py):

    # >>> exercise N (items ...): what it is about
    ...
    # <<< exercise N
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

REGION = re.compile(r"^[ \t]*# >>> exercise (\d+)\b[^\n]*\n(.*?)^[ \t]*# <<< exercise \1\b[^\n]*$",
                    re.S | re.M)
# The extension duties (E1-E11) are marked the same way: "# >>> extension E1 (...)".
EXTENSION = re.compile(r"^[ \t]*# >>> extension (E\d+)\b[^\n]*\n(.*?)^[ \t]*# <<< extension \1\b[^\n]*$",
                       re.S | re.M)


@dataclass(frozen=True)
class Exercise:
    number: int
    file: str  # module file inside the client package
    function: str
    items: Tuple[int, ...]
    summary: str


EXERCISES: Dict[int, Exercise] = {
    1: Exercise(1, "stdio_client.py", "StdioClient.on_line", (2,),
                "handle error replies, not only results"),
    2: Exercise(2, "discovery.py", "list_all_tools", (3,),
                "follow nextCursor to the last page"),
    3: Exercise(3, "naming.py", "model_tool_name", (5, 6),
                "prefix with the alias; cut and hash long or illegal names"),
    4: Exercise(4, "aggregator.py", "Aggregator.refresh", (8,),
                "a try/except and a time limit per server; an offline table with reasons"),
}


def exercise_for_item(item: int) -> Optional[Exercise]:
    return next((e for e in EXERCISES.values() if item in e.items), None)


def regions(text: str) -> Dict[int, str]:
    """Exercise number -> the text between its markers."""
    found: Dict[int, str] = {}
    for match in REGION.finditer(text):
        number = int(match.group(1))
        if number in found:
            raise ValueError(f"exercise {number} is marked twice")
        found[number] = match.group(2)
    return found


def extension_regions(text: str) -> Dict[str, str]:
    """Extension name ("E1") -> the text between its markers."""
    return {m.group(1): m.group(2) for m in EXTENSION.finditer(text)}


def with_extension(text: str, name: str, body: str) -> str:
    if name not in extension_regions(text):
        raise ValueError(f"no region for extension {name}")
    return EXTENSION.sub(lambda m: m.group(0).replace(m.group(2), body, 1) if m.group(1) == name
                         else m.group(0), text)


@dataclass(frozen=True)
class Extension:
    name: str
    file: str
    function: str
    summary: str
    guide: str  # the section of labs/GUIDE.md that teaches it


EXTENSIONS: Dict[str, Extension] = {
    "E1": Extension("E1", "consent.py", "runs_without_asking",
                    "decide which calls may run without asking", "section 11.1 (consent)"),
    "E2": Extension("E2", "aggregator.py", "Aggregator.list_changed",
                    "re-list a server whose tools changed", "section 11.2 (list changes)"),
    "E3": Extension("E3", "stdio_client.py", "StdioClient._on_progress",
                    "route progress to the request that asked for it", "section 11.3 (progress)"),
    "E4": Extension("E4", "meta_tools.py", "rank", "rank the catalogue for search_tools",
                    "section 11.4 (many tools)"),
    "E5": Extension("E5", "tool_calls.py", "structured_data",
                    "hand checked structured results to the program", "section 11.5 (structured results)"),
    "E6": Extension("E6", "tasks.py", "settled", "decide when a task has finished, and with what",
                    "section 11.6 (tasks)"),
    "E7": Extension("E7", "elicitation.py", "field_from_schema", "turn a requested schema into form fields",
                    "section 11.7 (elicitation)"),
    "E8": Extension("E8", "stubs.py", "literal", "type enum and const values as a Literal",
                    "section 11.8 (code mode)"),
    "E9": Extension("E9", "sse.py", "EventStream._line", "read one line of a server's event stream",
                    "section 11.9 (remote servers)"),
    "E10": Extension("E10", "resource_links.py", "Offers.resolve",
                     "read a linked URI only from a server that offered it", "section 11.10 (resources)"),
    "E11": Extension("E11", "sampler.py", "TerminalSampler.__call__",
                     "answer a server's sampling request only with the person's approval", "section 11.11 (sampling)"),
}


def learners_lines(text: str) -> List[Tuple[int, int]]:
    """The (first, last) line numbers of every region's body in `text`, exercise and extension
    alike: the code the learner writes, which a message about their code should point into."""
    found = []
    for pattern in (REGION, EXTENSION):
        for match in pattern.finditer(text):
            first = text.count("\n", 0, match.start(2)) + 1
            found.append((first, first + match.group(2).count("\n") - 1))
    return found


def with_region(text: str, number: int, body: str) -> str:
    """`text` with the body of region `number` replaced by `body`."""
    def swap(match: "re.Match[str]") -> str:
        if int(match.group(1)) != number:
            return match.group(0)
        return match.group(0).replace(match.group(2), body, 1)
    result = REGION.sub(swap, text)
    if number not in regions(text):
        raise ValueError(f"no region for exercise {number}")
    return result


def region_files() -> List[str]:
    return sorted({e.file for e in EXERCISES.values()})
