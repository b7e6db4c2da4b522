"""The package each item runs against: the learner's client, with the reference's layers.

The learner's package is the day's client (the reference's top-level modules,
with the learner's code in its regions); the reference client is that core and
its layers (solution/remote/, lifecycle/, host/ ...). So an item is judged in
a package built from both: the learner's top-level files, and the reference's
layers beside them, which import the learner's core as their own. An item
whose duty lives in a layer (E6's tasks, E9's event streams) thus runs the
reference's machinery around the learner's function.

Each region is judged on its own code. An item that owns a region (item 3
owns exercise 2, E6 owns extension E6) runs with every *other* region's body
the reference's; an item that owns none (1, 4, 7, 9) with every region the
reference's. So a region's verdict depends on that region alone, and a
half-done lab shows each finished region green. Code outside the regions
stays the learner's everywhere (it equals the reference's in the shipped
starter, and a learner who edits it is judged with the edit).

Only the learner's regular top-level `.py` files are read (checks/intake.py),
and nothing from or into their `__pycache__`: each built package lives in a
scratch directory of the run, its files placed and compiled there by the
intake, once a run for each distinct text.
Paths and line numbers shown to the learner are mapped back to the learner's
own files: a copy's lines outside the swapped regions are the learner's,
shifted by however many lines the swapped bodies added or took away.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from checks.exercises import EXTENSION, EXTENSIONS, REGION
from checks.intake import REFERENCE, IntakeError, place, read_files
from checks.target import Shift, Target, TargetError, load_target

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


def layers(reference: Path = REFERENCE) -> List[Path]:
    """The reference's layers: its subpackages (its tests are no layer)."""
    return sorted(path for path in reference.iterdir() if path.is_dir() and path.name != "tests"
                  and (path / "__init__.py").is_file())


# What the runner hands the worker for one region: the copy's directory, and per
# file how its lines map back to the learner's ({} when the copy is the package itself).
Prepared = Dict[str, object]


class Package:
    """A learner's package read once, beside the reference: per file its text,
    the regions it marks (in both), and which of them differ from the reference's."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        # The reference itself (or a whole copy of it) needs nothing added: its layers are there.
        self.whole = all((directory / layer.name / "__init__.py").is_file() for layer in layers())
        self.texts = read_files(directory)
        self.files: Dict[str, Tuple[str, str, Tuple[Dict[str, Tuple[int, int]], Dict[str, Tuple[int, int]]]]] = {}
        self.differing: Dict[str, Set[str]] = {}
        for name, text in self.texts.items():
            other = REFERENCE / name
            if not other.is_file() or "# >>> " not in text:
                continue  # no region in it: the copy takes it as it is
            theirs_text = other.read_text(encoding="utf-8")
            parsed = (bodies(text), bodies(theirs_text))
            self.files[name] = (text, theirs_text, parsed)
            self.differing[name] = {name for name, (start, end) in parsed[0].items()
                                    if name in parsed[1] and
                                    text[start:end] != theirs_text[slice(*parsed[1][name])]}
        self.made: Dict[Tuple[Path, FrozenSet[str]], Prepared] = {}  # (where, what is the reference's) -> a copy

    def copy_for(self, region: str, into: Path) -> Optional[Prepared]:
        """The package region `region` is judged in, built under `into`; None when it
        is the learner's package itself (a whole reference, no other region differing).
        The package was read beside the reference, so this runs in the runner, never
        where the code under test runs (the worker's guard refuses the reference there)."""
        taken = frozenset(f"{name}:{other}" for name, regions in self.differing.items() for other in regions - {region})
        if self.whole and not taken:
            return None
        key = (into, taken)  # grading mode builds each item's under a folder of its own
        if key in self.made:  # regions that differ nowhere else give the same package
            return self.made[key]
        texts = dict(self.texts)
        lines: Dict[str, List[Shift]] = {}
        for name in sorted(self.files):
            if self.differing[name] - {region}:
                learner, reference, parsed = self.files[name]
                texts[name], shifts = swapped(learner, reference, region, parsed)
                if shifts:
                    lines[name] = shifts
        # The learner's modules with the reference's layers beside them, whatever the
        # learner's folder holds besides (checks/intake.py places and compiles both).
        copy = place(texts, into / f"package-{len(self.made)}")
        self.made[key] = {"dir": str(copy), "lines": lines}
        return self.made[key]


def prepare(directory: Path, regions: Iterable[str], into: Path) -> Dict[str, Optional[Prepared]]:
    """The packages a run needs, one per region its items own (the runner's side).
    The learner's package is read and parsed once for all of them."""
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
        for loaded in self._made.values():  # another region's package, built alike: loaded once
            if loaded.directory == Path(str(copy["dir"])).resolve():
                return loaded
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
