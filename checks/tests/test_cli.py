"""`python -m checks` as learners and autograders run it."""

from __future__ import annotations

import pytest

import json
import os
import subprocess
import sys
from pathlib import Path

from checks.target import ROOT
from checks.tests.conftest import Variant


def run(*args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "checks", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, "MOCK": "1"})


def test_json_gives_every_verdict_with_its_fields_and_the_exit_status() -> None:
    done = run("--target", "solution", "--json")
    assert done.returncode == 0, done.stdout
    report = json.loads(done.stdout)
    assert report["passed"] == report["total"] == 9 and report["exit_status"] == 0
    first = report["items"][0]
    assert set(first) == {"number", "id", "title", "status", "duration", "message", "where"}
    assert [i["number"] for i in report["items"]] == list(range(1, 10))


@pytest.mark.shipped_starter
def test_the_starter_text_report_streams_items_and_ends_with_a_summary() -> None:
    done = run()
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    numbered = [line.split()[0] for line in lines if line[:2].strip().isdigit()]
    assert numbered == [str(n) for n in range(1, 10)]
    assert lines[-1].startswith("4/9 passed · 5 failed")
    assert "\x1b[" not in done.stdout  # no escape codes in a pipe


@pytest.mark.shipped_starter
def test_starter_json_names_where_to_edit() -> None:
    report = json.loads(run("--json").stdout)
    item2 = report["items"][1]
    assert item2["status"] == "fail"
    assert item2["where"] == {"file": "starter/stdio_client.py", "function": "StdioClient.on_line",
                              "exercise": 1}


def test_a_target_that_cannot_be_loaded_exits_2_with_the_reason(variant: Variant, tmp_path: Path) -> None:
    missing = run("--target", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "not 'starter', 'solution' or a package directory" in missing.stderr
    broken = variant(edits={"naming.py": ("def model_tool_name", "def model_tool_name(:")})
    done = run("--target", str(broken))
    assert done.returncode == 2 and "naming.py" in done.stderr and "SyntaxError" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("file", ["sampler.py", "elicitation.py"])
def test_a_syntax_error_in_any_region_is_told_at_its_own_file_before_any_item(variant: Variant, file: str) -> None:
    # sampler.py is imported by no module the items load first (it was reported as
    # "the check itself failed" in E11's temporary copy); elicitation.py is imported
    # through stdio_client.py (whose name the message gave).
    broken = variant()
    (broken / file).write_text((broken / file).read_text() + "\ndef oops(:\n")
    done = run("--target", str(broken), "--extensions")
    assert done.returncode == 2 and f"cannot import {broken / file}: SyntaxError" in done.stderr, done.stderr


def test_bad_arguments_exit_2() -> None:
    assert run("--no-such-flag").returncode == 2


def test_extension_items_are_chosen_by_name_like_the_nine() -> None:
    done = run("--target", "solution", "--json", "E5", "--only", "e1,5")
    report = json.loads(done.stdout)
    assert done.returncode == 0, done.stdout
    assert [i["number"] for i in report["items"]] == [5]
    assert [i["name"] for i in report["extensions"]] == ["E1", "E5"]


def test_an_unknown_item_name_is_refused_naming_what_exists() -> None:
    done = run("--only", "E12,x")
    assert done.returncode == 2 and "items are 1 to 9 and E1 to E11; got E12, x" in done.stderr


def test_a_python_without_the_labs_packages_is_told_to_activate_the_environment(tmp_path: Path) -> None:
    # A second terminal without `. .venv/bin/activate`: one line, exit 2, no traceback.
    import venv
    venv.EnvBuilder(with_pip=False).create(tmp_path / "bare")
    bare = tmp_path / "bare" / "bin" / "python"
    for package in ("checks", "solution", "starter"):
        done = subprocess.run([str(bare), "-m", package], capture_output=True, text=True, timeout=60, cwd=ROOT,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 2 and done.stdout == "", (package, done.stderr)
        assert done.stderr.count("\n") == 1 and "activate the lab's virtual environment" in done.stderr


def test_a_file_at_the_repositorys_root_named_like_a_dependency_is_not_imported_by_the_judge(tmp_path: Path) -> None:
    # The lab's tracked files in a repository of their own, with an anyio.py at its root
    # (observed: `python -m checks` from the root imported it in place of the library).
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "checks", "servers", "solution", "starter"], capture_output=True,
                            text=True, cwd=ROOT, check=True, timeout=60).stdout.split()
    for name in listed:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    (tmp_path / "anyio.py").write_text("raise SystemExit('the anyio.py at the root was imported')\n")
    done = subprocess.run([sys.executable, "-m", "checks", "1"], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 0 and "the anyio.py" not in done.stdout + done.stderr, done.stdout + done.stderr


def test_a_json_report_carries_the_targets_commit_and_the_time_of_the_run() -> None:
    from datetime import datetime, timezone
    began = datetime.now(timezone.utc).replace(microsecond=0)
    done = run("--target", "solution", "1", "--json")
    report = json.loads(done.stdout)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    assert report["commit"] == (head.stdout.strip() if head.returncode == 0 else None)
    assert began <= datetime.fromisoformat(report["date"]) <= datetime.now(timezone.utc)
    missing = run("--target", "/nonexistent", "--json")
    assert missing.returncode == 2 and set(json.loads(missing.stdout)) >= {"commit", "date"}
