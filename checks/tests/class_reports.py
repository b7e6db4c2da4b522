"""Reports a class could hand in, for the gradebook's tests: made as the runner
writes them (checked against its schema), kept one folder per learner as CI
artifacts are downloaded; and the gradebook run over them as a process of its
own, which must end in time and within a memory ceiling, so a regression that
would hang or eat memory fails its test instead of the machine."""

from __future__ import annotations

import csv
import io
import json
import re
import resource
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import jsonschema
import pytest

from checks.items import EXTENSION_ITEMS, ITEMS, label
from checks.target import ROOT

SCHEMA = json.loads((ROOT / "checks" / "report.schema.json").read_text())
HIDDEN = {"Cc", "Cf", "Zl", "Zp", "Cs"}  # what no cell may hold raw: controls, bidi and other format marks
MEMORY = 1 << 30  # bytes a gradebook process may map: far more than it needs, far less than /dev/zero


def exit_status(report: Dict[str, Any]) -> int:
    statuses = [item["status"] for item in [*report["items"], *report.get("extensions", [])]]
    return 2 if "error" in statuses or report.get("problems") else 0 if set(statuses) <= {"pass"} else 1


def made(statuses: Optional[Dict[str, str]] = None, extensions: bool = True, **top: Any) -> Dict[str, Any]:
    """A report as the runner writes one: every item passing but those `statuses`
    names (by label), with `top` laid over its top level."""
    wanted = statuses or {}

    def item(number: int, id: str, title: str) -> Dict[str, Any]:
        status = wanted.get(label(number), "pass")
        data: Dict[str, Any] = {"number": number, "id": id, "title": title, "status": status, "duration": 0.5,
                                "message": "not judged: the codemode extra is not installed" if status == "error"
                                else "", "where": None}
        return {**data, "name": label(number)} if number > len(ITEMS) else data

    report: Dict[str, Any] = {"target": "starter", "exit_status": 0, "problems": [], "killed": [],
                              "items": [item(i.number, i.id, i.title) for i in ITEMS]}
    if extensions:
        report["extensions"] = [item(i.number, i.id, i.title) for i in EXTENSION_ITEMS]
    report["exit_status"] = exit_status(report)
    report.update(top)
    jsonschema.validate(report, SCHEMA)  # a report the runner could have written, shape and all
    return report


def kept(base: Path, name: str, report: Any) -> Path:
    """`report` as `name`/report.json, one folder per learner, as artifacts are downloaded."""
    (base / name).mkdir(parents=True)
    path = base / name / "report.json"
    path.write_text(report if isinstance(report, str) else json.dumps(report))
    return path


def rows_of(text: str) -> List[Dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def gradebook(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m checks.gradebook` as a process: it must end in time and within MEMORY."""
    def ceiling() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    try:
        return subprocess.run([sys.executable, "-m", "checks.gradebook", *argv], capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT, preexec_fn=ceiling)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the gradebook was still running after {timeout:g} s")


def text_only(cells: Sequence[str]) -> List[str]:
    """The cells a spreadsheet could run, or that hold a character no one can see."""
    return [cell for cell in cells if re.match(r"\s*[=+\-@]|[\t\r]", cell)
            or any(unicodedata.category(char) in HIDDEN for char in cell)]
