"""The class gradebook over thirty submissions: real reports from the starter
and the solution, and twenty-eight made from them with verdicts flipped, plus
a broken file and a foreign one that must be named and skipped."""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import jsonschema
import pytest

from checks.items import EXTENSION_ITEMS, ITEMS

from checks.gradebook import SCHEMA, main
from checks.target import ROOT


def report(tmp_path: Path, target: str) -> Dict[str, Any]:
    page = tmp_path / f"{target}.html"
    done = subprocess.run([sys.executable, "-m", "checks", "--target", target, "--extensions", "--json",
                           "--html", str(page)], capture_output=True, text=True, timeout=240, cwd=ROOT,
                          env={**os.environ, "MOCK": "1"})
    made = dict(json.loads(done.stdout))
    unjudged = [(i.get("name") or i["number"], i["message"][:300]) for i in [*made["items"], *made["extensions"]]
                if i["status"] == "error"]
    assert done.returncode in (0, 1), (made["problems"], unjudged)
    return made


@pytest.fixture(scope="module")
def class_of_thirty(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    base = tmp_path_factory.mktemp("class")
    solved, shipped = report(base, "solution"), report(base, "starter")
    schema = json.loads(SCHEMA.read_text())
    reports: List[Path] = []
    expected: Dict[str, Dict[str, str]] = {}
    for n in range(30):
        made = copy.deepcopy(solved if n % 3 else shipped)
        for index, item in enumerate([*made["items"], *made["extensions"]]):
            if (n * 7 + index * 3) % 11 == 0:  # flip some verdicts, differently for each learner
                item["status"] = "fail" if item["status"] == "pass" else "pass"
        jsonschema.validate(made, schema)
        folder = base / f"learner-{n:02d}"
        folder.mkdir()
        (folder / "report.json").write_text(json.dumps(made))
        if n % 2 == 0:  # half of them kept their page
            (folder / "report.html").write_text((base / ("solution.html" if n % 3 else "starter.html")).read_text())
        reports.append(folder / "report.json")
        expected[folder.name] = {str(i.get("name") or i["number"]): i["status"]
                                 for i in [*made["items"], *made["extensions"]]}
    (base / "broken.json").write_text('{"items": [')
    (base / "foreign.json").write_text(json.dumps({"name": "a package.json", "version": "1.0.0"}))
    return {"base": base, "reports": reports, "expected": expected}


def test_thirty_learners_one_row_each_the_most_failed_items_first(class_of_thirty: Dict[str, Any],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    base: Path = class_of_thirty["base"]
    status = main([*map(str, class_of_thirty["reports"]), str(base / "broken.json"), str(base / "foreign.json"),
                   "--csv", str(base / "grades.csv"), "--html", str(base / "class.html")])
    said = capsys.readouterr()
    assert status == 0
    assert "skipped " + str(base / "broken.json") + ": it is not JSON" in said.err
    assert "skipped " + str(base / "foreign.json") + ": it is not a python -m checks --json report" in said.err
    assert "Traceback" not in said.err
    rows = list(csv.DictReader(io.StringIO((base / "grades.csv").read_text())))
    assert [row["learner"] for row in rows] == sorted(class_of_thirty["expected"])
    expected = class_of_thirty["expected"]
    for row in rows:
        assert {label: row[label] for label in expected[row["learner"]]} == expected[row["learner"]]
        assert int(row["passed"]) == sum(s == "pass" for s in expected[row["learner"]].values())
    labels = list(rows[0])[4:]
    failed = [sum(expected[name][label] != "pass" for name in expected) for label in labels]
    assert failed == sorted(failed, reverse=True) and len(labels) == len(ITEMS) + len(EXTENSION_ITEMS)


def test_each_cell_links_to_that_learners_page_anchor(class_of_thirty: Dict[str, Any]) -> None:
    base: Path = class_of_thirty["base"]
    assert main([*map(str, class_of_thirty["reports"]), "--html", str(base / "class.html")]) == 0
    page = (base / "class.html").read_text()
    assert 'href="learner-00/report.html#item-3"' in page and 'href="learner-00/report.html#item-E2"' in page
    assert "learner-01/report.html" not in page  # no page kept, so no link
    assert '<meta name="viewport"' in page and "<script" not in page


def test_no_readable_report_is_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("not json")
    assert main([str(tmp_path / "x.json"), "--csv", str(tmp_path / "g.csv")]) == 2
    assert not (tmp_path / "g.csv").exists()


def test_the_classroom_workflow_runs_a_self_check_this_cli_accepts_and_keeps_what_the_gradebook_reads() -> None:
    from checks.cli import parse
    text = (ROOT / "labs" / "classroom" / "self-check.yml").read_text()
    line = next(line for line in text.splitlines() if "python -m checks " in line and "run:" in line)
    command = line.split("python -m checks ", 1)[1].split(" > ")[0].split()
    options = parse(command)
    assert options.json and options.extensions and options.html == "report.html"
    assert line.rstrip().endswith("> report.json")
    assert "report.json\n            report.html" in text and "checks.gradebook reports/*/report.json" in text
    assert "-- checks servers pyproject.toml" in text  # the judge comes from the template, not the submission
