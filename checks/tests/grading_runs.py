"""Grading mode as a grader runs it, for the tests: `python -m checks --grade`
with the judge cloned from the `judge` fixture's repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Tuple

import jsonschema

from checks.target import ROOT

SCHEMA = json.loads((ROOT / "checks" / "report.schema.json").read_text())
RUN_LIMIT = 900  # seconds for one grading run of up to twenty items, one worker each, on a busy machine


def graded(judge: Path, target: Path, *args: str) -> Tuple[int, Dict[str, Any], str]:
    """Exit status, report (valid by the schema) and stderr of `--grade --json`."""
    done = subprocess.run([sys.executable, "-m", "checks", "--grade", "--judge-repo", str(judge),
                           "--target", str(target), "--json", *args], capture_output=True, text=True,
                          timeout=RUN_LIMIT, cwd=ROOT, env={**os.environ, "MOCK": "1"})
    report = json.loads(done.stdout)
    jsonschema.validate(report, SCHEMA)
    return done.returncode, report, done.stderr


def statuses(report: Dict[str, Any]) -> Dict[str, str]:
    """Item label -> status, the nine and the extensions."""
    return {str(i.get("name") or i["number"]): str(i["status"]) for i in report["items"] + report.get("extensions", [])}
