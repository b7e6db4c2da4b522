"""Judging one mutant: a copy of `solution/` with one file changed, put through
`python -m checks` for the items its region owns, exactly as a learner's
package would be (a process of its own, the runner's isolation and limits).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Sequence

from checks.target import ROOT

# The self-check gives up on an item after its own limit (20 s) and on the run
# soon after; this backstop is reached only if the runner itself misbehaves.
RUN_LIMIT = 300.0
# How the harness words an item stopped by its limit (checks/harness.py, judge).
LIMIT_WORDS = ("did not finish in",)


@dataclass(frozen=True)
class Verdict:
    status: str  # "pass", "fail" or "error"
    message: str


@dataclass(frozen=True)
class Judged:
    verdicts: Dict[str, Verdict]  # item label ("2", "E6") -> its verdict
    exit_status: int
    seconds: float

    @property
    def killed(self) -> bool:
        return self.exit_status != 0 or any(v.status != "pass" for v in self.verdicts.values())

    @property
    def only_by_a_limit(self) -> bool:
        """Red, but only because an item ran into its own time limit (or the run
        did): a wrong answer that waited instead of being told its cause."""
        red = [v for v in self.verdicts.values() if v.status != "pass"]
        return self.exit_status == -1 or (bool(red) and all(v.message.startswith(LIMIT_WORDS) for v in red))


def mutated_copy(directory: Path, file: str, text: str) -> Path:
    """`solution/` copied into `directory` (without its tests) with `file` replaced by `text`."""
    package = directory / "mutant"
    shutil.copytree(ROOT / "solution", package, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (package / file).write_text(text, encoding="utf-8")
    return package


def judge(file: str, text: str, items: Sequence[str]) -> Judged:
    """Run the self-check items `items` on solution/ with `file` replaced by `text`."""
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mcp-lab-mutant-") as scratch:
        package = mutated_copy(Path(scratch), file, text)
        env = {**os.environ, "MOCK": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            done = subprocess.run([sys.executable, "-m", "checks", "--target", str(package), "--json",
                                   "--only", ",".join(items)], cwd=ROOT, env=env, capture_output=True,
                                  text=True, timeout=RUN_LIMIT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return Judged({}, -1, time.perf_counter() - began)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        report = {}
    verdicts = {str(entry.get("name") or entry.get("number")): Verdict(str(entry.get("status")),
                                                                      str(entry.get("message", "")))
                for entry in report.get("items", []) + report.get("extensions", [])}
    return Judged(verdicts, done.returncode, time.perf_counter() - began)
