"""Each region judged on its own code: the package an item runs against.

An item that owns a region (item 3 owns exercise 2, E6 owns extension E6)
runs against the learner's package with every *other* region's body
replaced by the reference's; an item that owns none (1, 4, 7, 9) runs with
every region the reference's. So a region's verdict depends on that region
alone: E6 is judged with the reference's E7 answering the task's question,
and a half-done lab shows each finished region green. The code outside the
regions stays the learner's everywhere (it equals the reference's in the
shipped starter, and a learner who edits it is judged with the edit).

The copies live in a scratch directory for the run, made from the learner's
files as `checks.intake` took them, beside the reference's layers. Paths and
line numbers shown to the learner are mapped back to the learner's own files:
the copy's lines outside the swapped regions are the learner's, shifted by
however many lines the swapped bodies added or took away.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

from checks.exercises import EXTENSION, REGION, EXTENSIONS
from checks.intake import IntakeError, place, read_files
from checks.target import ROOT, Shift, Target, TargetError, load_target

OUTSIDE = ""  # the key of the package in which every region is the reference's


def region_of(item: object) -> str:
    """The region an item owns ("1".."4", "E1".."E11"), or OUTSIDE."""
    exercise = getattr(item, "exercise", None)
    if exercise is not None:
        return str(exercise.number)
    name = str(getattr(item, "id", "")).split("-")[0]
    return name if name in EXTENSIONS else OUTSIDE


def bodies(text: str) -> Dict[str, Tuple[int, int]]:
    """Region name -> (start, end) of its body in `text` (exercises by number)."""
    found = {m.group(1): m.span(2) for m in REGION.finditer(text)}
    found.update({m.group(1): m.span(2) for m in EXTENSION.finditer(text)})
    return found




def swapped(learner: str, reference: str, keep: str,
            parsed: Optional[Tuple[Dict[str, Tuple[int, int]], Dict[str, Tuple[int, int]]]] = None
            ) -> Tuple[str, List[Shift]]:
    """`learner` with the body of every region but `keep` taken from `reference`,
    and how its lines map back to the learner's (`parsed`: both texts' `bodies`,
    when the caller has them already)."""
    theirs, ours = parsed or (bodies(learner), bodies(reference))
    copy = ""
    shifts: List[Shift] = []
    at = 0
    for name, (start, end) in sorted(theirs.items(), key=lambda kv: kv[1][0]):
        if name == keep or name not in ours:
            continue
        copy += learner[at:start]
        first = copy.count("\n") + 1  # the body's first line in the copy
        copy += reference[ours[name][0]:ours[name][1]]
        after = copy.count("\n") + 1  # the copy's first line after the body
        delta = (learner.count("\n", 0, end) + 1) - after
        shifts.append((first, after, delta, learner.count("\n", 0, start) + 1))
        at = end
    return copy + learner[at:], shifts


# What the runner hands the worker for one region: the copy's directory, and per
# file how its lines map back to the learner's ({} when the copy is the package itself).
Prepared = Dict[str, object]


class Package:
    """A learner's package read once (its files, through checks.intake), beside
    the reference: per file its text, the regions it marks (in both), and which
    of them differ from the reference's."""

    def __init__(self, directory: Path) -> None:
        reference = ROOT / "solution"
        self.directory = directory
        self.texts = read_files(directory)
        self.files: Dict[str, Tuple[str, str, Tuple[Dict[str, Tuple[int, int]], Dict[str, Tuple[int, int]]]]] = {}
        self.differing: Dict[str, Set[str]] = {}
        for name, text in self.texts.items():
            other = reference / name
            if not other.is_file() or "# >>> " not in text:
                continue  # no region in it: the copy takes it as it is
            theirs_text = other.read_text(encoding="utf-8")
            parsed = (bodies(text), bodies(theirs_text))
            self.files[name] = (text, theirs_text, parsed)
            self.differing[name] = {name for name, (start, end) in parsed[0].items()
                                    if name in parsed[1] and
                                    text[start:end] != theirs_text[slice(*parsed[1][name])]}

    def copy_for(self, region: str, into: Path) -> Optional[Prepared]:
        """Write the copy region `region` is judged in, under `into`; None when
        it would equal the package (no other region differs from the
        reference's: the solution itself, or a lab whose other regions are done).
        It holds the reference's bodies of the other regions, so it is made by
        the runner and handed to the worker."""
        changed = {name for name, regions in self.differing.items() if regions - {region}}
        if not changed:
            return None
        texts = dict(self.texts)
        lines: Dict[str, List[Shift]] = {}
        for name in sorted(changed):
            text, reference, parsed = self.files[name]
            texts[name], shifts = swapped(text, reference, region, parsed)
            if shifts:
                lines[name] = shifts
        copy = place(texts, into / (f"region-{region}" if region else "outside"))
        return {"dir": str(copy), "lines": lines}


def prepare(directory: Path, regions: Iterable[str], into: Path) -> Dict[str, Optional[Prepared]]:
    """The copies a run needs, one per region its items own (the runner's side).
    The package is read and parsed once for all of them."""
    try:
        package = Package(directory)
    except (OSError, UnicodeDecodeError, IntakeError):
        # unreadable: the worker judges the package as it is, and says why it cannot load
        return {region: None for region in sorted(set(regions))}
    made: Dict[str, Optional[Prepared]] = {}
    for region in sorted(set(regions)):
        try:
            made[region] = package.copy_for(region, into)
        except OSError:
            made[region] = None
    return made


class Hybrids:
    """The package each region's items run against, loaded once per run: from
    the copies the runner prepared, or made here when there is no runner (the
    tests call the items directly)."""

    def __init__(self, target: Target, prepared: Optional[Dict[str, Optional[Prepared]]] = None) -> None:
        self.target = target
        self.prepared = prepared
        self._made: Dict[str, Target] = {}
        self._scratch: Optional[tempfile.TemporaryDirectory[str]] = None
        self._package: Optional[Package] = None
        self._lock = threading.Lock()  # items start on several threads; each copy is loaded once

    def for_item(self, item: object) -> Target:
        return self.for_region(region_of(item))

    def for_region(self, region: str) -> Target:
        with self._lock:
            if region not in self._made:
                self._made[region] = self._load(region)
            return self._made[region]

    def _load(self, region: str) -> Target:
        if self.prepared is not None:
            copy = self.prepared.get(region)
        else:
            if self._scratch is None:
                self._scratch = tempfile.TemporaryDirectory(prefix="mcp-lab-regions-")
                self._package = Package(self.target.directory)
            assert self._package is not None
            copy = self._package.copy_for(region, Path(self._scratch.name))
        if copy is None:
            return self.target
        try:
            hybrid = load_target(str(copy["dir"]))
        except TargetError:
            # The reference's bodies do not fit the learner's code around them (a
            # name they use was changed): judge the learner's package as it is.
            return self.target
        hybrid.shown = self.target.shown or self.target.directory
        lines = copy["lines"]
        assert isinstance(lines, dict)
        hybrid.lines = {str(name): [(int(a), int(b), int(c), int(d)) for a, b, c, d in shifts]
                        for name, shifts in lines.items()}
        return hybrid

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None
