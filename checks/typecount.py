"""`python -m checks --types`: mypy's count for the learner's package, after the
verdicts. The lab promises `mypy --strict` is clean; this shows where a learner
stands against that promise. It is no verdict and never changes the exit status.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

MYPY_LIMIT = 300.0  # seconds; a cold mypy run on the package takes about ten
_FOUND = re.compile(r"Found (\d+) errors? in (\d+) files?")


@dataclass(frozen=True)
class TypeCount:
    errors: Optional[int]  # None: mypy could not say (not installed, or it failed)
    files: int
    note: str

    def line(self, shown_path: str) -> str:
        if self.errors is None:
            return f"types: {self.note}"
        found = "clean" if self.errors == 0 else f"{self.errors} error(s) in {self.files} file(s)"
        return (f"types: mypy --strict {shown_path}: {found} (not a verdict; "
                f"`python -m mypy --strict {shown_path}` lists them)")

    def to_json(self) -> Dict[str, Any]:
        return {"errors": self.errors, "files": self.files, "note": self.note}


def count(output: str, status: int) -> TypeCount:
    """mypy's own summary line, read: pure, so it is tested without mypy."""
    if "Success: no issues found" in output:
        return TypeCount(0, 0, "")
    found = _FOUND.search(output)
    if found:
        return TypeCount(int(found.group(1)), int(found.group(2)), "")
    last = output.strip().splitlines()[-1] if output.strip() else f"exit status {status}"
    return TypeCount(None, 0, f"mypy did not finish its check ({last[:160]})")


def type_count(directory: Path) -> TypeCount:
    try:
        import mypy  # noqa: F401
    except ImportError:
        return TypeCount(None, 0, "mypy is not installed: pip install -e '.[test]' brings it")
    try:
        done = subprocess.run([sys.executable, "-m", "mypy", "--strict", str(directory)], capture_output=True,
                              text=True, timeout=MYPY_LIMIT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return TypeCount(None, 0, f"mypy took longer than {MYPY_LIMIT:g} s")
    return count(done.stdout + done.stderr, done.returncode)
