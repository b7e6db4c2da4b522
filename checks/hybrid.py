"""Each region judged on its own code: the package an item runs against.

An item that owns a region (item 3 owns exercise 2, E6 owns extension E6)
runs against the learner's package with every *other* region's body
replaced by the reference's; an item that owns none (1, 4, 7, 9) runs with
every region the reference's. So a region's verdict depends on that region
alone: E6 is judged with the reference's E7 answering the task's question,
and a half-done lab shows each finished region green. The code outside the
regions stays the learner's everywhere (it equals the reference's in the
shipped starter, and a learner who edits it is judged with the edit).

The copies live in a scratch directory for the run. Paths and line numbers
shown to the learner are mapped back to the learner's own files: the copy's
lines outside the swapped regions are the learner's, shifted by however many
lines the swapped bodies added or took away.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import py_compile
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

from checks.exercises import EXTENSION, REGION, EXTENSIONS
from checks.files import write_whole
from checks.target import ROOT, Shift, Target, TargetError, load_target

OUTSIDE = ""  # the key of the package in which every region is the reference's
# A swapped file's bytecode, kept in the package's own __pycache__ between runs
# (`aggregator.hybrid-<hash of the text>.cpython-311.pyc`): most runs swap the
# same texts as the last, and compiling them is most of what a copy costs.
COMPILED = ".hybrid-"
KEPT = 100  # such files kept at most, the least recently used dropped first (a full run makes some 30)


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
    """A learner's package read once, beside the reference: per file its text,
    the regions it marks (in both), and which of them differ from the reference's."""

    def __init__(self, directory: Path) -> None:
        reference = ROOT / "solution"
        self.directory = directory
        self.files: Dict[str, Tuple[str, str, Tuple[Dict[str, Tuple[int, int]], Dict[str, Tuple[int, int]]]]] = {}
        self.differing: Dict[str, Set[str]] = {}
        self.compiled: Dict[str, bytes] = {}  # a swapped text's key -> its bytecode, made once a run
        for path in sorted(directory.glob("*.py")):
            text = path.read_text(encoding="utf-8")
            other = reference / path.name
            if not other.is_file() or "# >>> " not in text:
                continue  # no region in it: the copy takes it as it is
            theirs_text = other.read_text(encoding="utf-8")
            parsed = (bodies(text), bodies(theirs_text))
            self.files[path.name] = (text, theirs_text, parsed)
            self.differing[path.name] = {name for name, (start, end) in parsed[0].items()
                                         if name in parsed[1] and
                                         text[start:end] != theirs_text[slice(*parsed[1][name])]}

    def copy_for(self, region: str, into: Path) -> Optional[Prepared]:
        """Write the copy region `region` is judged in, under `into`; None when
        it would equal the package (no other region differs from the
        reference's: the solution itself, or a lab whose other regions are done).
        The package was read beside the reference, so this runs in the runner,
        never where the code under test runs (the worker's guard refuses the
        reference there)."""
        changed = {name for name, regions in self.differing.items() if regions - {region}}
        if not changed:
            return None
        copy = into / (f"region-{region}" if region else "outside")
        # __pycache__ comes along: a file left as the learner wrote it keeps its size
        # and time, so its compiled code is used as it is (compiling is most of the
        # cost of a copy); a file with a swapped region no longer matches and is compiled.
        shutil.copytree(self.directory, copy, ignore=shutil.ignore_patterns("tests", f"*{COMPILED}*"),
                        copy_function=linked)
        lines: Dict[str, List[Shift]] = {}
        for name in sorted(changed):
            text, reference, parsed = self.files[name]
            made, shifts = swapped(text, reference, region, parsed)
            # A link is the learner's own file: it is taken out first, never written through.
            (copy / name).unlink()
            Path(importlib.util.cache_from_source(str(copy / name))).unlink(missing_ok=True)
            (copy / name).write_text(made, encoding="utf-8")
            self.bytecode(copy / name, made)
            if shifts:
                lines[name] = shifts
        return {"dir": str(copy), "lines": lines}

    def bytecode(self, source: Path, text: str) -> None:
        """Put the bytecode of `source` (which holds `text`) where its import will
        look: compiled once a run for each text, and kept between runs in the
        package's __pycache__ (unless Python is told not to write bytecode).
        Checked by a hash of the source, so a text that differs is compiled again
        at its import; a text that does not compile is left to its import to
        report, as any learner's file is."""
        key = f"{source.stem}{COMPILED}{hashlib.sha256(text.encode('utf-8')).hexdigest()[:24]}"
        tag = sys.implementation.cache_tag
        kept = self.directory / "__pycache__" / f"{key}.{tag}.pyc"
        beside = Path(importlib.util.cache_from_source(str(source)))
        data = self.compiled.get(key)
        if data is None:
            try:
                data = kept.read_bytes()
                kept.touch()  # used: the last to be dropped
                if data[:4] != importlib.util.MAGIC_NUMBER:
                    data = None
            except OSError:
                data = None
        try:
            if data is None:
                py_compile.compile(str(source), cfile=str(beside), doraise=True,
                                   invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
                data = beside.read_bytes()
                if not sys.dont_write_bytecode:
                    kept.parent.mkdir(exist_ok=True)
                    write_whole(kept, data)
            else:
                beside.parent.mkdir(exist_ok=True)
                beside.write_bytes(data)
        except (OSError, py_compile.PyCompileError):
            return
        self.compiled[key] = data

    def forget_oldest(self) -> None:
        """Kept bytecode past KEPT files, the least recently used first, removed."""
        found = []
        for path in (self.directory / "__pycache__").glob(f"*{COMPILED}*.pyc"):
            try:
                found.append((path.stat().st_mtime, path))
            except OSError:  # removed meanwhile by another run
                continue
        for _, path in sorted(found, reverse=True)[KEPT:]:
            try:
                path.unlink()
            except OSError:
                pass


def linked(source: str, destination: str) -> None:
    """A file of the copy left as the learner wrote it: a hard link to it (a copy
    costs some 0.1 s a run in opening and writing files), or a copy where the
    system makes no link (another file system, a file not the user's)."""
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)


def prepare(directory: Path, regions: Iterable[str], into: Path) -> Dict[str, Optional[Prepared]]:
    """The copies a run needs, one per region its items own (the runner's side).
    The package is read and parsed once for all of them."""
    try:
        package = Package(directory)
    except (OSError, UnicodeDecodeError):
        # unreadable: the worker judges the package as it is, and says why it cannot load
        return {region: None for region in sorted(set(regions))}
    made: Dict[str, Optional[Prepared]] = {}
    for region in sorted(set(regions)):
        try:
            made[region] = package.copy_for(region, into)
        except OSError:
            made[region] = None
    if package.compiled and not sys.dont_write_bytecode:
        package.forget_oldest()
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
