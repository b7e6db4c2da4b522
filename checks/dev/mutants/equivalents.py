"""The reviewed list of equivalent mutants: `equivalent.txt`, one line each,

    REGION | OPERATOR | the line as mutated || why no client behaviour can tell it from the answer

A mutant listed here is not judged. Every line must give its reason; a line
whose mutant is no longer made is reported as stale, so the list cannot rot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict

EQUIVALENTS_FILE = Path(__file__).with_name("equivalent.txt")


class BadEquivalent(ValueError):
    """A line of equivalent.txt without a key or without a reason."""


@dataclass(frozen=True)
class Equivalents:
    reasons: Dict[str, str]  # mutant key -> why it is equivalent


def read_equivalents(path: Path = EQUIVALENTS_FILE) -> Equivalents:
    reasons: Dict[str, str] = {}
    if not path.exists():
        return Equivalents(reasons)
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        key, sep, why = line.partition(" || ")
        if not sep or not why.strip() or key.count(" | ") != 2:
            raise BadEquivalent(f"{path.name}:{number}: wants 'REGION | OPERATOR | LINE || REASON', got {line[:80]!r}")
        reasons[key.strip()] = why.strip()
    return Equivalents(reasons)
