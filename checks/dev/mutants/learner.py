"""A learner mutant: one wrong answer a learner would write (or a lazy or faked
one), as an edit of the reference solution, with the item it must turn red and
the words its failure message must hold (the catalogue: catalogue.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

from checks.dev.mutants.regions import REGIONS
from checks.target import ROOT


@dataclass(frozen=True)
class LearnerMutant:
    name: str  # what the learner wrote, in a few words
    region: str  # the region it belongs to ("1".."4", "E1".."E11")
    old: str
    new: str
    red: str  # the item that must turn red
    says: Tuple[str, ...]  # what its failure message must say: the cause
    file: str = ""  # default: the region's own file; a top-level one (the layers are always the reference's)

    @property
    def where(self) -> str:
        return self.file or REGIONS[self.region].file

    def text(self) -> str:
        """The mutated file."""
        original = (ROOT / "solution" / self.where).read_text(encoding="utf-8")
        if original.count(self.old) != 1:
            raise ValueError(f"{self.name}: the text to replace is in {self.where} "
                             f"{original.count(self.old)} times, not once")
        return original.replace(self.old, self.new)
