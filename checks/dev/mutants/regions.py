"""The fifteen regions under mutation: where each lives and which items judge it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Tuple

from checks.exercises import EXERCISES, EXTENSIONS, extension_regions, regions
from checks.target import ROOT


@dataclass(frozen=True)
class Region:
    name: str  # "1".."4" (exercises) or "E1".."E11" (extensions)
    file: str  # module file inside the client package
    items: Tuple[str, ...]  # the self-check items it owns, as `python -m checks` names them

    def body(self, text: str) -> str:
        """This region's lines in the text of its file."""
        found = regions(text).get(int(self.name)) if self.name.isdigit() else extension_regions(text).get(self.name)
        if found is None:
            raise ValueError(f"{self.file} has no region {self.name}")
        return found

    def lines(self, text: str) -> Tuple[int, int]:
        """First and last line numbers (1-based) of the region's body in `text`."""
        body = self.body(text)
        start = text.index(body)
        first = text.count("\n", 0, start) + 1
        return first, first + body.count("\n") - 1


REGIONS: Dict[str, Region] = {
    **{str(n): Region(str(n), e.file, tuple(str(i) for i in e.items)) for n, e in EXERCISES.items()},
    **{name: Region(name, e.file, (name,)) for name, e in EXTENSIONS.items()},
}


def solution_text(region: Region) -> str:
    return (ROOT / "solution" / region.file).read_text(encoding="utf-8")
