"""The class gradebook over thirty submissions: real reports from the starter
and the solution, and twenty-eight made from them with verdicts flipped, plus
the hostile and broken files a class's artifacts can hold (nested past any
report, learner names that are spreadsheet formulas, runs the runner could not
judge, an item listed twice, a FIFO, a file past the size bound, a link to
/dev/zero), each named with its reason while the rest are still tabulated.
Each case of issue 43's point 10 has a test of its own below."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any, Dict, List

import jsonschema
import pytest

from checks.items import EXTENSION_ITEMS, ITEMS, label

from checks.gradebook import main
from checks.target import ROOT
from checks.tests.class_reports import HIDDEN, SCHEMA, exit_status, gradebook, kept, made, rows_of, text_only

HEADINGS = [f"{label(item.number)} {item.title}" for item in ITEMS + EXTENSION_ITEMS]  # the lab's own order
FIRST_COLUMNS = ["learner", "judged", "score", "core passed", "extensions passed", "commit", "date", "exit status"]
FORMULA_NAMES = ['=HYPERLINK(CONCAT("https:",CHAR(47),CHAR(47),"x.invalid"),"your grade")',
                 "+cmd|'-c calc'!A0", "@SUM(1+1)*cmd|'-c calc'!A0", "-2+3+cmd|'-c calc'!A0", " =1+1"]


def one_real_report(target: str, page: Path) -> Dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "checks", "--target", target, "--extensions", "--json",
                           "--html", str(page)],
                          capture_output=True, text=True, timeout=240, cwd=ROOT, env={**os.environ, "MOCK": "1"})
    report = dict(json.loads(done.stdout))
    assert done.returncode == report["exit_status"], done.stderr[-2000:]
    return report


@pytest.fixture(scope="module")
def class_of_thirty(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    base = tmp_path_factory.mktemp("class")
    solved = one_real_report("solution", base / "solution.html")
    shipped = one_real_report("starter", base / "starter.html")
    for real in (solved, shipped):
        unjudged = [(i.get("name") or i["number"], i["message"][:300])
                    for i in [*real["items"], *real["extensions"]] if i["status"] == "error"]
        assert real["exit_status"] in (0, 1), (real["problems"], unjudged)
    reports: List[Path] = []
    expected: Dict[str, Dict[str, str]] = {}
    for n in range(30):
        report = copy.deepcopy(solved if n % 3 else shipped)
        for index, item in enumerate([*report["items"], *report["extensions"]]):
            if (n * 7 + index * 3) % 11 == 0:  # flip some verdicts, differently for each learner
                item["status"] = "fail" if item["status"] == "pass" else "pass"
        report["exit_status"] = exit_status(report)  # as the runner would have said it
        jsonschema.validate(report, SCHEMA)
        reports.append(kept(base, f"learner-{n:02d}", report))
        if n % 2 == 0:  # half of them kept their page
            (base / f"learner-{n:02d}" / "report.html").write_text(
                (base / ("solution.html" if n % 3 else "starter.html")).read_text())
        expected[f"learner-{n:02d}"] = {f"{label(i['number'])} {i['title']}": i["status"]
                                         for i in [*report["items"], *report["extensions"]]}
    return {"base": base, "reports": reports, "expected": expected}


@pytest.fixture(scope="module")
def hostile(class_of_thirty: Dict[str, Any]) -> Dict[str, Any]:
    """Beside the thirty: files that are no report (named and skipped) and reports
    that are, but whose runs were not judged or whose names are formulas."""
    base: Path = class_of_thirty["base"]
    skipped = {"nested": kept(base, "nested", "[" * 100_000 + "]" * 100_000),
               "deep-inside": kept(base, "deep-inside", {**made(), "extra": json.loads("[" * 40 + "]" * 40)}),
               "huge": kept(base, "huge", made({"3": "fail"}, message="x" * (20 << 20))),
               "broken": kept(base, "broken", '{"items": ['),
               "foreign": kept(base, "foreign", {"name": "a package.json", "version": "1.0.0"})}
    for name in ("fifo", "zero"):
        (base / name).mkdir()
        skipped[name] = base / name / "report.json"
    os.mkfifo(skipped["fifo"])
    skipped["zero"].symlink_to("/dev/zero")
    did_not_import = base / "no-import-target"
    did_not_import.mkdir()
    (did_not_import / "__init__.py").write_text("import no_such_module_anywhere\n")
    real = subprocess.run([sys.executable, "-m", "checks", "--target", str(did_not_import), "--json"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env={**os.environ, "MOCK": "1"})
    twice = made({"3": "fail"})
    twice["items"].insert(3, {**twice["items"][2], "status": "pass"})
    unjudged = {"did-not-import": (kept(base, "did-not-import", json.loads(real.stdout)),
                                   "no: the runner could not load the submission: importing "),
                "left-a-thread": (kept(base, "left-a-thread", made(
                    problems=["the code under test left a thread running: poller"], exit_status=2)),
                                  "no: the run itself went wrong: the code under test left a thread running"),
                "exit-2-alone": (kept(base, "exit-2-alone", made(exit_status=2)),
                                 "no: the runner could not judge the run (exit status 2) and the report does not say"),
                "listed-twice": (kept(base, "listed-twice", twice),
                                 "partly: 3 listed twice (fail, then pass); the runner lists each item once"),
                "no-codemode": (kept(base, "no-codemode", made({"E8": "error"})),
                                "partly: E8 not judged: the codemode extra is not installed")}
    formulas = [kept(base, name, made()) for name in FORMULA_NAMES]
    return {"skipped": skipped, "unjudged": unjudged, "formulas": formulas}


def test_thirty_learners_and_every_hostile_file_make_one_linked_table_of_text_cells_naming_each_unjudged_run(
        class_of_thirty: Dict[str, Any], hostile: Dict[str, Any]) -> None:
    base: Path = class_of_thirty["base"]
    inputs = [*class_of_thirty["reports"], *hostile["skipped"].values(),
              *(path for path, _ in hostile["unjudged"].values()), *hostile["formulas"]]
    done = gradebook(*map(str, inputs), "--csv", str(base / "grades.csv"), "--html", str(base / "class.html"))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    for name, path in hostile["skipped"].items():
        assert f"gradebook: skipped {path}: it " in done.stderr, name
    for name, (_, reason) in hostile["unjudged"].items():
        verdict, _, why = reason.partition(": ")
        said = "not judged" if verdict == "no" else "judged in part"
        assert f"gradebook: {name} {said}: {why}" in done.stderr
    rows = rows_of((base / "grades.csv").read_text())
    everyone = [*class_of_thirty["expected"], *hostile["unjudged"], *FORMULA_NAMES]
    assert [row["learner"].removeprefix("'") for row in rows] == sorted(everyone, key=str.lower)
    assert text_only([cell for row in rows for cell in [*row.keys(), *row.values()]]) == []
    by_name = {row["learner"]: row for row in rows}
    for name, (_, reason) in hostile["unjudged"].items():
        assert by_name[name]["judged"].startswith(reason)
    for name, statuses in class_of_thirty["expected"].items():
        assert {heading: by_name[name][heading] for heading in HEADINGS} == statuses
        assert by_name[name]["judged"] == "yes"
        assert int(by_name[name]["core passed"]) == sum(statuses[h] == "pass" for h in HEADINGS[:len(ITEMS)])
    page = (base / "class.html").read_text()
    assert page.count("<table") == 1 and page.count("<tr>") == len(everyone) + 2
    order = re.findall(r'<th class="item"><b>(E?\d+)</b>', page)
    failed = [int(count) for count in re.findall(r"<td>(\d+)</td>", page.rsplit("failed by", 1)[1])]
    assert len(order) == len(HEADINGS) and failed == sorted(failed, reverse=True)
    headed = {heading.split(" ", 1)[0]: heading for heading in HEADINGS}
    assert failed == [sum(row[headed[item]] == "fail" for row in rows) for item in order]
    for name, (_, reason) in hostile["unjudged"].items():
        assert f"<li><b>{name}</b>: {reason.replace(chr(39), '&#x27;')}" in page
    # Each verdict links to the learner's page at the item's anchor, where a page was kept.
    assert 'href="learner-00/report.html#item-3"' in page and 'href="learner-00/report.html#item-E2"' in page
    assert "learner-01/report.html" not in page
    assert '<meta name="viewport"' in page and "<script" not in page


def test_a_deeply_nested_report_is_named_unreadable_and_the_rest_are_still_tabulated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nested = kept(tmp_path, "nested", "[" * 100_000 + "]" * 100_000)
    fine = kept(tmp_path, "fine", made())
    assert main([str(nested), str(fine), "--csv", str(tmp_path / "g.csv")]) == 0
    assert f"skipped {nested}: it is nested far deeper than a report" in capsys.readouterr().err
    assert [row["learner"] for row in rows_of((tmp_path / "g.csv").read_text())] == ["fine"]


def test_learner_names_a_spreadsheet_would_run_reach_the_csv_as_text(tmp_path: Path) -> None:
    reports = [kept(tmp_path, name, made(date="=1+1", commit="@abc")) for name in FORMULA_NAMES]
    assert main([*map(str, reports), "--csv", str(tmp_path / "g.csv")]) == 0
    rows = rows_of((tmp_path / "g.csv").read_text())
    assert sorted(row["learner"] for row in rows) == sorted("'" + name for name in FORMULA_NAMES)
    assert {(row["date"], row["commit"]) for row in rows} == {("'=1+1", "'@abc")}
    assert text_only([cell for row in rows for cell in row.values()]) == []
    assert '"\'=HYPERLINK(' in (tmp_path / "g.csv").read_text()  # every cell quoted, as OWASP advises


@pytest.mark.parametrize("top, reason", [
    ({"problems": ["the code under test left a thread running: poller"], "exit_status": 2},
     "no: the run itself went wrong: the code under test left a thread running: poller"),
    ({"exit_status": 2}, "no: the runner could not judge the run (exit status 2) and the report does not say why"),
    ({"exit_status": 1}, "no: the report contradicts itself (exit status 1 with verdicts that make 0)")])
def test_a_run_the_runner_could_not_judge_shows_no_pass_only_why(
        tmp_path: Path, top: Dict[str, Any], reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    report = kept(tmp_path, "learner", made(**top))
    assert main([str(report), "--csv", str(tmp_path / "g.csv"), "--html", str(tmp_path / "g.html")]) == 0
    page = (tmp_path / "g.html").read_text()
    assert "PASS" not in page and f"<li><b>learner</b>: {reason}" in page
    assert set(re.findall(r"<td>(\d+)</td>", page.rsplit("failed by", 1)[1])) == {"0"}  # it failed nothing either
    [row] = rows_of((tmp_path / "g.csv").read_text())
    assert row["judged"].startswith(reason) and row["score"] == "not judged" and row["core passed"] == ""
    assert {row[heading] for heading in HEADINGS} == {"not judged"}
    assert f"gradebook: learner not judged: {reason.removeprefix('no: ')}" in capsys.readouterr().err


def test_an_item_listed_twice_is_flagged_never_taken_at_its_later_verdict(tmp_path: Path) -> None:
    report = made({"3": "fail"})
    report["items"].insert(3, {**report["items"][2], "status": "pass"})
    assert main([str(kept(tmp_path, "learner", report)), "--csv", str(tmp_path / "g.csv")]) == 0
    [row] = rows_of((tmp_path / "g.csv").read_text())
    assert row[HEADINGS[2]] == "listed twice"
    assert row["judged"] == "partly: 3 listed twice (fail, then pass); the runner lists each item once"
    assert row["core passed"] == "8" and row["score"] == "core 8/9 · extensions 11/11 · 1 not judged"
    report["extensions"].append({**report["extensions"][0], "status": "fail"})
    report["extensions"].append({**report["extensions"][0], "status": "error"})
    assert main([str(kept(tmp_path, "again", report)), "--csv", str(tmp_path / "g.csv")]) == 0
    [row] = rows_of((tmp_path / "g.csv").read_text())
    assert "; E1 listed 3 times (pass, then fail, then error); the runner lists each item once" in row["judged"]


def test_a_fifo_among_the_reports_is_skipped_without_waiting_for_a_writer(tmp_path: Path) -> None:
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "report.json")
    fine = kept(tmp_path, "fine", made())
    done = gradebook(str(tmp_path / "fifo" / "report.json"), str(fine), timeout=60)
    assert done.returncode == 0 and f"skipped {tmp_path / 'fifo' / 'report.json'}: it is a FIFO" in done.stderr
    assert [row["learner"] for row in rows_of(done.stdout)] == ["fine"]


def test_a_link_to_dev_zero_is_refused_without_reading_it(tmp_path: Path) -> None:
    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / "report.json").symlink_to("/dev/zero")
    done = gradebook(str(tmp_path / "zero" / "report.json"), str(kept(tmp_path, "fine", made())), timeout=60)
    assert done.returncode == 0, done.stderr[-500:]
    assert f"skipped {tmp_path / 'zero' / 'report.json'}: it is a symbolic link" in done.stderr


def test_a_report_past_the_size_bound_is_named_and_skipped(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    huge = kept(tmp_path, "huge", made(message="x" * (20 << 20)))  # a valid report of 20 MiB
    fine = kept(tmp_path, "fine", made())
    assert main([str(huge), str(fine), "--csv", str(tmp_path / "g.csv")]) == 0
    assert re.search(f"skipped {re.escape(str(huge))}: it is [0-9,]+ bytes or more; a report is read only up to",
                     capsys.readouterr().err)
    assert [row["learner"] for row in rows_of((tmp_path / "g.csv").read_text())] == ["fine"]


def test_each_items_column_is_headed_by_its_title(tmp_path: Path) -> None:
    report = kept(tmp_path, "learner", made())
    assert main([str(report), "--csv", str(tmp_path / "g.csv"), "--html", str(tmp_path / "g.html")]) == 0
    assert list(rows_of((tmp_path / "g.csv").read_text())[0]) == FIRST_COLUMNS + HEADINGS
    page = (tmp_path / "g.html").read_text()
    for item in ITEMS + EXTENSION_ITEMS:
        assert f'<th class="item"><b>{label(item.number)}</b> {item.title.replace(chr(39), "&#x27;")}</th>' in page


def test_the_csv_columns_keep_the_lab_order_whatever_the_class_fails(tmp_path: Path) -> None:
    headers: List[List[str]] = []
    for failing in ({"1": "fail", "2": "fail"}, {"9": "fail", "E11": "fail"}):
        report = kept(tmp_path / str(len(headers)), "learner", made(failing))
        assert main([str(report), "--csv", str(tmp_path / "g.csv")]) == 0
        headers.append(list(rows_of((tmp_path / "g.csv").read_text())[0]))
    assert headers[0] == headers[1] == FIRST_COLUMNS + HEADINGS


def test_each_reports_commit_and_date_are_shown_and_a_report_without_them_says_so(tmp_path: Path) -> None:
    carried = kept(tmp_path, "carried", made(commit="0e0e06d", date="2025-12-06 03:04 UTC"))
    bare = kept(tmp_path, "bare", made())
    assert main([str(carried), str(bare), "--csv", str(tmp_path / "g.csv"), "--html", str(tmp_path / "g.html")]) == 0
    rows = {row["learner"]: row for row in rows_of((tmp_path / "g.csv").read_text())}
    assert (rows["carried"]["commit"], rows["carried"]["date"]) == ("0e0e06d", "2025-12-06 03:04 UTC")
    assert (rows["bare"]["commit"], rows["bare"]["date"]) == ("not in report", "not in report")
    page = (tmp_path / "g.html").read_text()
    assert '<td class="fact">0e0e06d</td><td class="fact">2025-12-06 03:04 UTC</td>' in page
    assert '<td class="missing">not in report</td><td class="missing">not in report</td>' in page


def test_the_score_counts_the_nine_and_the_extensions_apart(tmp_path: Path) -> None:
    some = kept(tmp_path, "some", made({f"E{n}": "fail" for n in range(4, 12)}))
    nine = kept(tmp_path, "nine", made({"3": "fail"}, extensions=False))
    assert main([str(some), str(nine), "--csv", str(tmp_path / "g.csv"), "--html", str(tmp_path / "g.html")]) == 0
    rows = {row["learner"]: row for row in rows_of((tmp_path / "g.csv").read_text())}
    assert rows["some"]["score"] == "core 9/9 · extensions 3/11"
    assert (rows["some"]["core passed"], rows["some"]["extensions passed"]) == ("9", "3")
    assert rows["nine"]["score"] == "core 8/9 · extensions not run" and rows["nine"]["extensions passed"] == ""
    assert ('<td><span class="part">core 9/9</span> · <span class="part">extensions 3/11</span></td>'
            in (tmp_path / "g.html").read_text())


def test_a_submission_that_did_not_import_says_why_instead_of_0_of_0(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "__init__.py").write_text("import no_such_module_anywhere\n")
    done = subprocess.run([sys.executable, "-m", "checks", "--target", str(target), "--json"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env={**os.environ, "MOCK": "1"})
    report = kept(tmp_path, "learner", done.stdout)
    assert main([str(report), "--csv", str(tmp_path / "g.csv"), "--html", str(tmp_path / "g.html")]) == 0
    assert "0/0" not in (tmp_path / "g.html").read_text()
    [row] = rows_of((tmp_path / "g.csv").read_text())
    assert row["score"] == "not judged"
    assert row["judged"].startswith("no: the runner could not load the submission: importing ")
    assert "ModuleNotFoundError" in row["judged"]


def test_control_and_bidirectional_characters_are_shown_as_escapes_in_the_table_and_the_csv(tmp_path: Path) -> None:
    name = "mallory\u202egpj.exe\u2066\u200b"
    report = kept(tmp_path, name, made(commit="\u202e1234", date="\x1b[2J2025\u2028", exit_status=2,
                                       problems=["\x1b]0;pwned\x07 left \u061c a \u2067thread\ud800"]))
    assert main([str(report), "--csv", str(tmp_path / "g.csv"), "--html", str(tmp_path / "g.html")]) == 0
    csv_text, page = (tmp_path / "g.csv").read_text(), (tmp_path / "g.html").read_text()  # lines end in \n here
    for text in (csv_text, page):
        assert [char for char in text if unicodedata.category(char) in HIDDEN and char != "\n"] == []
        assert "mallory\\u202egpj.exe\\u2066\\u200b" in text and "\\u202e1234" in text
        assert "\\x1b[2J2025\\u2028" in text and "\\x1b]0;pwned\\x07 left \\u061c a \\u2067thread\\ud800" in text


def test_a_folder_name_that_is_not_utf_8_is_shown_as_escapes_and_links_to_its_page(tmp_path: Path) -> None:
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/learner-\xff"))
    report = kept(tmp_path, folder.name, made())
    (folder / "report.html").write_text("<!doctype html>")
    assert main([str(report), "--csv", str(tmp_path / "g.csv"), "--html", str(tmp_path / "g.html")]) == 0
    assert [row["learner"] for row in rows_of((tmp_path / "g.csv").read_text())] == ["learner-\\udcff"]
    assert 'href="learner-%FF/report.html#item-1"' in (tmp_path / "g.html").read_text()


def test_a_report_of_millions_of_printed_lines_is_read_without_the_schema_checking_each_line(tmp_path: Path) -> None:
    report = made()  # then 14 MB of lines: a minute and a half, were the schema to check them one by one
    report["output"], report["items"][0]["output"] = [""] * 3_000_000, ["printed"] * 200_000
    done = gradebook(str(kept(tmp_path, "chatty", report)), timeout=60)
    assert done.returncode == 0, done.stderr
    assert [row["judged"] for row in rows_of(done.stdout)] == ["yes"]


def test_a_report_listing_more_items_than_twice_each_is_named_and_skipped(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    report = made()
    report["items"] *= 5
    assert main([str(kept(tmp_path, "many", report)), str(kept(tmp_path, "fine", made()))]) == 0
    said = capsys.readouterr()
    assert "it lists 56 items; a report lists at most 20, each once" in said.err
    assert [row["learner"] for row in rows_of(said.out)] == ["fine"]


@pytest.mark.parametrize("argv, said", [
    ([], "the following arguments are required: REPORT.json"),
    (["{report}", "--nonsense"], "unrecognized arguments: --nonsense"),
    (["{report}", "--csv", "{tmp}/missing/g.csv"], "--csv wants a file in a folder that exists"),
    (["{report}", "--html", "{tmp}"], "--html wants a file, and"),
    (["{report}", "--csv", "{report}"], "is one of the reports; writing it would lose that report"),
    (["{report}", "--csv", "{tmp}/same", "--html", "{tmp}/same"], "--csv and --html name the same file")])
def test_unusable_arguments_are_one_line_and_exit_2_with_nothing_written(tmp_path: Path, argv: List[str],
                                                                         said: str) -> None:
    report = kept(tmp_path, "learner", made())
    before = report.read_text()
    done = gradebook(*(arg.format(report=report, tmp=tmp_path) for arg in argv), timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("gradebook: ") and said in done.stderr
    assert report.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["learner"]


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
    assert "> report.json" in line and "report.json\n            report.html" in text
    # the judge comes from the template at the pinned commit, not from the submission
    assert 'git -C judge fetch --quiet --depth 1 "$TEMPLATE" "$JUDGE_COMMIT"' in text
