"""`python -m checks.dev.starter [--check]`: build `starter/` from `solution/`.

One source, as nbgrader makes a student's copy from an instructor's marked
solution: `solution/` is the only client kept by hand, and `starter/` is its
build product. Each region (`# >>> exercise N` ... `# <<< exercise N`, and the
extensions' `# >>> extension EN` ...) keeps its markers and gets the stub kept
for it in `checks/dev/starter_stubs.py`, indented as its markers are; every
other line is the reference's, byte for byte.

    python -m checks.dev.starter           write starter/ anew (a maintainer's step)
    python -m checks.dev.starter --check   exit 1, naming each file, when starter/
                                           is not a fresh build (CI's freshness test)

The build is committed, so a fresh clone runs as it is; a test fails while the
committed starter differs from a fresh build.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional

from checks.dev.starter_stubs import STUBS
from checks.exercises import EXTENSION, REGION

# A part of the reference the learner's client does without (the full command
# line behind `python -m solution`): `# >>> reference: why` ... `# <<< reference`,
# replaced, markers and all, by the starter's lines from STUBS["reference <file>"].
# Not a region: nobody is judged on it.
REFERENCE = re.compile(r"^[ \t]*# >>> reference\b[^\n]*\n(.*?)^[ \t]*# <<< reference\b[^\n]*$", re.S | re.M)
from checks.target import ROOT


class BuildError(Exception):
    """The reference and the stubs do not fit together (a region without a stub, or the reverse)."""


def starter_files(source: Path) -> List[str]:
    """The reference's files the learner gets: its top-level modules, the day's client
    and the second day's six. Its subpackages are the reference's layers, built on
    them (the judge puts them beside the learner's own), and its tests stay with it."""
    return sorted(path.name for path in source.glob("*.py"))


def stubbed(text: str, where: str, stubs: Mapping[str, str] = STUBS) -> "tuple[str, List[str]]":
    """`text` with each region's body replaced by its stub; and the regions it holds."""
    found: List[str] = []

    def swap(match: "re.Match[str]") -> str:
        name = match.group(1) if match.re is not REFERENCE else f"reference {where.split('/', 1)[1]}"
        if name not in stubs:
            raise BuildError(f"{where}: region {name} has no stub in checks/dev/starter_stubs.py")
        found.append(name)
        marker = match.group(0)
        indent = marker[:len(marker) - len(marker.lstrip(" \t"))]
        body = "".join(indent + line if line.strip() else line
                       for line in stubs[name].splitlines(keepends=True))
        if match.re is REFERENCE:  # the learner's client simply has these lines: no markers
            return body.rstrip("\n")
        start, end = match.span(match.re.groups)
        return marker[:start - match.start()] + body + marker[end - match.start():]

    for pattern in (REGION, EXTENSION, REFERENCE):
        text = pattern.sub(swap, text)
    return text, found


def build(source: Path = ROOT / "solution", stubs: Mapping[str, str] = STUBS) -> Dict[str, str]:
    """File name -> its text in the starter, built from the reference at `source`."""
    built: Dict[str, str] = {}
    used: List[str] = []
    for name in starter_files(source):
        text, found = stubbed((source / name).read_text(encoding="utf-8"), f"solution/{name}", stubs)
        built[name] = text
        used += found
    unused = sorted(set(stubs) - set(used))
    if unused:
        raise BuildError(f"checks/dev/starter_stubs.py: no region in solution/ for {', '.join(unused)}")
    return built


def stale(built: Mapping[str, str], directory: Path) -> List[str]:
    """How `directory` differs from a build: each file changed, missing or extra."""
    found = [f"{name}: differs from a fresh build" if (directory / name).is_file() else f"{name}: missing"
             for name in sorted(built)
             if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != built[name]]
    found += [f"{name}: not in a fresh build" for name in starter_files(directory) if name not in built]
    found += [f"{folder.name}/: not in a fresh build" for folder in folders(directory)]
    return found


def write(built: Mapping[str, str], directory: Path) -> None:
    directory.mkdir(exist_ok=True)
    for name in starter_files(directory):
        if name not in built:
            (directory / name).unlink()
    for folder in folders(directory):  # the starter has no packages: a layer left from an older build
        shutil.rmtree(folder)
    for name, text in built.items():
        target = directory / name
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")


def folders(directory: Path) -> List[Path]:
    """Folders in `directory` other than Python's bytecode cache."""
    return sorted(p for p in directory.iterdir() if p.is_dir() and p.name != "__pycache__")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checks.dev.starter",
                                     description="Build starter/ from solution/ and the stubs.")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 when starter/ is not a fresh build")
    options = parser.parse_args(argv)
    try:
        built = build()
    except (BuildError, OSError, UnicodeDecodeError) as exc:
        print(f"python -m checks.dev.starter: {exc}", file=sys.stderr)
        return 2
    target = ROOT / "starter"
    if options.check:
        found = stale(built, target)
        for line in found:
            print(f"starter/{line}")
        print("starter/ is a fresh build" if not found else
              f"starter/ is not a fresh build ({len(found)} file(s)): run python -m checks.dev.starter")
        return 1 if found else 0
    write(built, target)
    print(f"starter/ built from solution/: {len(built)} files, {len(STUBS)} regions stubbed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
