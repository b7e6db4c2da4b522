"""Mutants written by a tool: cosmic-ray's operators (the `mutants` extra),
applied to the lines of one region of `solution/` and nowhere else.

cosmic-ray was chosen over mutmut because its operators are a library: each
reports the positions it can mutate in a parso tree and makes one mutation
at a time, so the lab can keep only the positions inside a region and judge
each mutant with its own runner (`python -m checks`), not with pytest. mutmut 3
rewrites whole modules through trampolines and drives pytest itself.

Two operators are left out: VariableReplacer and VariableInserter need a
variable named in advance and pick their replacement at random, so the same
run twice would not make the same mutants.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

from checks.dev.mutants.regions import REGIONS, Region, solution_text

LEFT_OUT = ("core/VariableReplacer", "core/VariableInserter")
INSTALL = "mutation testing needs cosmic-ray, which is not installed: pip install -e '.[mutants]'"


@dataclass(frozen=True)
class Mutant:
    region: str
    operator: str  # cosmic-ray's name, without the "core/" provider
    line: int  # in the region's file
    changed: str  # the mutated line (or the first line that differs), stripped
    text: str  # the whole mutated file

    def where_line(self) -> str:
        return f"{REGIONS[self.region].file}:{self.line}: {self.changed}"

    @property
    def key(self) -> str:
        """How `equivalent.txt` names it: stable while the region's code is."""
        return f"{self.region} | {self.operator} | {self.changed}"


def missing() -> Optional[str]:
    try:
        import cosmic_ray.plugins  # noqa: F401
    except ImportError:
        return INSTALL
    return None


def operators() -> List[Tuple[str, Any]]:
    import cosmic_ray.plugins as plugins
    return [(name, plugins.get_operator(name)) for name in plugins.operator_names() if name not in LEFT_OUT]


def mutants(region: Region) -> Iterator[Mutant]:
    """Every distinct mutant cosmic-ray makes inside `region`, in a stable order."""
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code

    text = solution_text(region)
    first, last = region.lines(text)
    nodes = list(ast_nodes(get_ast(text)))
    seen: Dict[str, str] = {}
    for name, operator_class in operators():
        operator = operator_class()
        occurrence = 0
        for node in nodes:
            for (start, _end) in operator.mutation_positions(node):
                if first <= start[0] <= last:
                    mutated = mutate_code(text, operator, occurrence)
                    if mutated is not None and mutated != text and mutated not in seen:
                        seen[mutated] = name
                        line, changed = first_change(text, mutated)
                        yield Mutant(region.name, name.split("/", 1)[-1], line, changed, mutated)
                occurrence += 1


def first_change(before: str, after: str) -> Tuple[int, str]:
    """The line number and text (as mutated) of the first line that differs."""
    old, new = before.splitlines(), after.splitlines()
    for tag, i1, _i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            return i1 + 1, (" / ".join(line.strip() for line in new[j1:j2]) or "(line removed)")
    return 0, "(no change)"
