"""Grading mode (`python -m checks --grade`): a clone of the template judges a
submission's starter/, each item in a sandboxed worker of its own, and it
refuses, in one line, to grade where it cannot do that."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checks.target import ROOT
from checks.tests.conftest import Variant
from checks.tests.grading_runs import graded, statuses

NINE = {str(n) for n in range(1, 10)}
EXTENSIONS = {f"E{n}" for n in range(1, 12)}


def test_the_reference_scores_the_nine_and_every_extension_in_grading_mode(judge: Path) -> None:
    status, report, _ = graded(judge, Path("solution"), "--extensions")
    assert status == 0, [(i["number"], i["message"][:300]) for i in report["items"] + report["extensions"]
                         if i["status"] != "pass"]
    assert statuses(report) == {label: "pass" for label in NINE | EXTENSIONS}
    head = subprocess.run(["git", "-C", str(judge), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    assert report["judge_commit"] == head.stdout.strip() and report["date"]


def test_a_learners_repository_is_judged_by_its_starter_and_the_shipped_starter_scores_four(
        judge: Path, shipped: Path, tmp_path: Path) -> None:
    repository = tmp_path / "alice"
    shutil.copytree(shipped, repository / "starter", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "solution", repository / "solution")  # a submission's own reference is never used
    (repository / "solution" / "naming.py").write_text("raise SystemExit('the submission\\'s solution/ was used')\n")
    status, report, _ = graded(judge, repository)
    assert status == 1 and {n for n, s in statuses(report).items() if s != "pass"} == {"2", "3", "5", "6", "8"}
    assert all(s == "fail" for n, s in statuses(report).items() if n in {"2", "3", "5", "6", "8"})
    assert report["commit"] is None  # not a repository


def test_a_worker_cannot_read_the_reference_the_recorded_observations_or_the_network(
        judge: Path, variant: Variant) -> None:
    probe = ("import os, socket\n"
             "for _path in (%r, %r, %r, '/lab/judge/checks/contracts/corpus', '/lab/solution', '/etc/shadow'):\n"
             "    try:\n"
             "        print('READ', _path, os.listdir(_path) if os.path.isdir(_path) else open(_path).read(20))\n"
             "    except OSError as _refused:\n"
             "        print('refused', _path, type(_refused).__name__)\n"
             "try:\n"
             "    socket.create_connection(('1.1.1.1', 53), timeout=5)\n"
             "    print('REACHED the network')\n"
             "except OSError:\n"
             "    print('no network')\n"
             "print('user', os.getuid(), os.getgid(), os.getgroups())\n") % (
        str(ROOT / "solution"), str(judge / "solution"), str(ROOT / "checks" / "contracts" / "corpus"))
    directory = variant("starter", edits={"__init__.py": ('"""\n', '"""\n' + probe, )})
    status, report, _ = graded(judge, directory, "1")
    said = report.get("output", [])
    assert said and not any(line.startswith(("READ", "REACHED")) for line in said), said
    user = next(line for line in said if line.startswith("user"))
    assert not user.startswith("user 0 ") and user.endswith("[]"), user  # a user of its own, no groups
    assert status == 0 and statuses(report) == {"1": "pass"}


def test_grading_where_it_cannot_be_done_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from checks import cli
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert cli.main(["--grade", "--target", "starter"]) == 2
    said = capsys.readouterr()
    assert said.out == "" and said.err.count("\n") == 1
    assert said.err.startswith("cannot grade here: grading mode runs as root")
    monkeypatch.setattr(sys, "platform", "darwin")
    assert cli.main(["--grade", "--target", "starter"]) == 2
    assert capsys.readouterr().err == ("cannot grade here: grading mode runs on Linux only: each worker needs "
                                       "namespaces and a user of its own\n")


def test_a_judge_commit_that_is_not_there_is_one_line_and_exit_2(judge: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "checks", "--grade", "--judge-repo", str(judge), "--judge-commit",
                           "no-such-commit"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"cannot grade: --judge-commit no-such-commit: no such commit in {judge}\n"


def test_a_region_right_on_the_wire_but_not_by_its_contract_fails_by_the_runners_comparison(
        judge: Path, tmp_path: Path) -> None:
    from checks.dev.mutants.catalogue import CATALOGUE
    mutant = next(m for m in CATALOGUE if m.name == "a completed task's isError result rewrapped as a failure")
    package = tmp_path / "mutant"
    shutil.copytree(ROOT / "solution", package, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (package / mutant.where).write_text(mutant.text())
    status, report, _ = graded(judge, package, "E6")
    verdict = report["extensions"][0]
    assert status == 1 and verdict["status"] == "fail" and "clause E6.1" in verdict["message"], verdict
    assert verdict["where"]["file"] == f"{package}/tasks.py"


# The worker keeps what the region did from the runner: the comparison cannot be made.
WITHHELD = '''
import checks.contracts as _contracts
_contracts.observe_for_the_runner({}, lambda region, seen: None)
'''


def test_a_pass_whose_region_observations_never_reach_the_runner_is_not_counted(judge: Path, variant: Variant) -> None:
    directory = variant("solution", edits={"__init__.py": ('"""\n', '"""\n' + WITHHELD)})
    status, report, _ = graded(judge, directory, "3")
    verdict = report["items"][0]
    assert status == 2 and verdict["status"] == "error", verdict
    assert verdict["message"] == ("not counted: what region 2 did on the contract's inputs did not reach the runner "
                                  "whole")


# A process of the submission's own that connects where the servers send their
# accounts and sends one saying every request was answered.
IMPOSTOR = '''
import os, subprocess, sys
subprocess.run([sys.executable, "-c", """
import json, os, socket, time
runner = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
runner.settimeout(30)
runner.connect(os.environ["MCP_LAB_EVIDENCE"])
runner.recv(1)
place = os.path.join(os.environ["MCP_LAB_RUN_DIR"], "mcp-lab-1-forged", "notes-0.jsonl")
runner.sendall((json.dumps({"journal": place}) + "\\\\n").encode())
"""], timeout=60)
'''


def test_a_process_that_is_no_fixture_server_cannot_send_an_account(judge: Path, variant: Variant) -> None:
    directory = variant("starter", edits={"__init__.py": ('"""\n', '"""\n' + IMPOSTOR)})
    status, report, _ = graded(judge, directory, "1")
    assert status == 2 and report["passed"] == 0, report
    refused = [p for p in report["problems"] if "not one of the item's fixture servers" in p]
    assert refused and "not started in isolated mode" in refused[0], report["problems"]
