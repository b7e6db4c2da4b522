"""`--types`: mypy's own summary, read into one line that is never a verdict."""

from __future__ import annotations

import os
import subprocess
import sys

from checks.target import ROOT
from checks.typecount import count


def test_mypys_summary_lines_are_read() -> None:
    assert count("Success: no issues found in 40 source files\n", 0).errors == 0
    found = count("a.py:1: error: x\nFound 16 errors in 2 files (checked 40 source files)\n", 1)
    assert (found.errors, found.files) == (16, 2) and "16 error(s) in 2 file(s)" in found.line("starter")
    broken = count("mypy: can't read file 'x'\n", 2)
    assert broken.errors is None and "did not finish" in broken.line("x")


def test_types_is_one_line_after_the_verdicts_and_leaves_the_exit_status_alone() -> None:
    done = subprocess.run([sys.executable, "-m", "checks", "--target", "solution", "1", "--types"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 0
    assert done.stdout.strip().splitlines()[-1] == ("types: mypy --strict solution: clean (not a verdict; "
                                                    "`python -m mypy --strict solution` lists them)")
