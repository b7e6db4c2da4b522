"""The runner decides, the code under test only runs: each way that code can try
to end, hang, outlive or forge the run ends in exit 2 (or its own verdicts),
with valid JSON, nothing left running, and the report saying what happened."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict

import jsonschema
import pytest

from checks.reaper import Proc, descendants, parse_stat, sleeping
from checks.target import ROOT
from checks.tests.conftest import Variant

SCHEMA = json.loads((ROOT / "checks" / "report.schema.json").read_text())
ANCHOR = '    name = f"mcp__{alias}__{tool_name}"\n'  # inside model_tool_name, called by items 4-9
RUN_LIMIT = 120  # seconds for one runner process; only a hang reaches it


def marker() -> str:
    """A sleep argument no other process on the machine uses."""
    return str(900000 + (os.getpid() * 7 + time.monotonic_ns()) % 99999)


def checks(directory: Path, *args: str) -> "tuple[int, Dict[str, Any], str]":
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "checks", "--target", str(directory), "--json", *args],
                          capture_output=True, text=True, timeout=RUN_LIMIT, cwd=ROOT,
                          env={**os.environ, "MOCK": "1"})
    report = json.loads(done.stdout)  # always exactly one JSON document
    jsonschema.validate(report, SCHEMA)
    assert time.monotonic() - began < RUN_LIMIT
    return done.returncode, report, done.stderr


def at_import(variant: Variant, code: str) -> Path:
    return variant("solution", edits={"naming.py": ("import hashlib\n", "import hashlib\n" + code + "\n")})


def in_item(variant: Variant, code: str) -> Path:
    body = "".join(f"        {line}\n" for line in code.splitlines())
    return variant("solution", edits={"naming.py": (ANCHOR, f'    if tool_name == "close_ticket":\n{body}{ANCHOR}')})


def test_os_exit_at_import_is_exit_2_and_names_the_import(variant: Variant) -> None:
    status, report, _ = checks(at_import(variant, "import os; os._exit(0)"))
    assert status == 2 and report["exit_status"] == 2
    assert "ended the process (exit status 0)" in " ".join(report["problems"])
    assert {i["status"] for i in report["items"]} == {"error"}


def test_system_exit_at_import_cannot_be_judged(variant: Variant) -> None:
    status, report, _ = checks(at_import(variant, "raise SystemExit(0)"))
    assert status == 2 and report["status"] == "error" and "SystemExit(0)" in report["message"]


def test_os_exit_in_the_middle_of_an_item_is_exit_2(variant: Variant) -> None:
    status, report, _ = checks(in_item(variant, "import os; os._exit(0)"), "5")
    assert status == 2
    assert "ended the process (exit status 0) while item(s) 5 ran" in report["problems"][0]
    assert report["items"][0]["status"] == "error" and report["items"][0]["message"].startswith("not judged")


def test_system_exit_in_an_item_is_not_judged(variant: Variant) -> None:
    status, report, _ = checks(in_item(variant, "raise SystemExit(0)"), "5")
    assert status == 2
    assert report["items"][0]["status"] == "error"
    assert "tried to end the process (SystemExit(0))" in report["items"][0]["message"]


def test_a_forged_report_printed_before_exiting_is_shown_as_output_not_taken_as_the_grade(variant: Variant) -> None:
    forged = json.dumps({"target": "solution", "passed": 9, "total": 9, "exit_status": 0, "items": []})
    status, report, _ = checks(in_item(variant, f"print({forged!r}, flush=True)\nimport os; os._exit(0)"), "5")
    assert status == 2 and report["exit_status"] == 2 and report["passed"] == 0
    assert report["items"][0]["output"] == [forged]


def test_a_non_daemon_thread_cannot_keep_the_runner_alive(variant: Variant) -> None:
    code = "import threading, time\nthreading.Thread(target=time.sleep, args=(3600,), name='sleeper').start()"
    status, report, _ = checks(at_import(variant, code), "5")
    assert status == 2 and report["items"][0]["status"] == "pass"
    assert any("sleeper (started by the code under test)" in p for p in report["problems"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process table is read from /proc")
def test_spawned_and_daemonised_processes_are_killed_and_named(variant: Variant) -> None:
    spawned, daemonised = marker(), marker() + "1"
    code = (f"import os, subprocess\nfor _ in range(5): subprocess.Popen(['sleep', '{spawned}'])\n"
            f"if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            f"        os.execvp('sleep', ['sleep', '{daemonised}'])\n    os._exit(0)")
    status, report, _ = checks(at_import(variant, code), "5")
    assert status == 2
    assert len([k for k in report["killed"] if k.startswith("sleep ")]) == 6, report["killed"]
    assert sleeping(spawned) == [] and sleeping(daemonised) == []


def test_an_endless_loop_at_import_is_stopped_and_reported(variant: Variant) -> None:
    status, report, _ = checks(at_import(variant, "while True: pass"), "5", "--limit", "1")
    assert status == 2
    assert "no progress" in report["problems"][0] and "being imported" in report["problems"][0]


def test_an_endless_loop_in_an_item_fails_it_and_the_blocked_thread_is_reported(variant: Variant) -> None:
    status, report, _ = checks(in_item(variant, "while True: pass"), "5", "--limit", "1")
    assert status == 2
    assert report["items"][0]["status"] == "fail" and "blocks the event loop" in report["items"][0]["message"]
    assert re.search(r"\n  at \S*solution_copy/naming\.py:\d+ in model_tool_name: while True: pass$",
                     report["items"][0]["message"])  # where it is stuck
    assert any("item-5 (blocked" in p for p in report["problems"])


def test_prints_are_kept_under_their_item_and_never_reach_the_report_raw(variant: Variant) -> None:
    noise = "print('9/9 passed \\x1b[2J\\x1b]0;owned\\x07')"
    directory = in_item(variant, noise)
    status, report, _ = checks(directory, "5")
    assert status == 0 and report["items"][0]["output"] == ["9/9 passed \x1b[2J\x1b]0;owned\x07"]
    text = subprocess.run([sys.executable, "-m", "checks", "--target", str(directory), "5"],
                          capture_output=True, text=True, timeout=RUN_LIMIT, cwd=ROOT,
                          env={**os.environ, "MOCK": "1"}).stdout
    assert "\x1b" not in text and "\x07" not in text
    lines = text.splitlines()
    assert [line for line in lines if "9/9 passed" in line] == \
        ["           | 9/9 passed \\x1b[2J\\x1b]0;owned\\x07"]
    assert any(line.startswith("         your code printed (1 line(s)") for line in lines)


def test_the_process_tree_is_read_from_proc_stat_lines() -> None:
    assert parse_stat("42 (a (b) c) S 7 42 42 0") == Proc(42, 7, "S", "a (b) c")
    assert parse_stat("garbage") is None
    table = {p.pid: p for p in [Proc(2, 1, "S", "worker"), Proc(3, 2, "S", "server"), Proc(4, 3, "Z", "child"),
                                Proc(5, 1, "S", "other"), Proc(6, 4, "S", "grandchild")]}
    assert [p.pid for p in descendants(table, 2)] == [3, 4, 6]
    assert descendants(table, 9) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process table is read from /proc")
def test_sigterm_to_the_runner_ends_the_worker_and_what_it_started(variant: Variant) -> None:
    planted = marker()
    directory = in_item(variant, f"import subprocess, time\nsubprocess.Popen(['sleep', '{planted}'])\n"
                                 "time.sleep(600)")
    runner = subprocess.Popen([sys.executable, "-m", "checks", "--target", str(directory), "5"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                              env={**os.environ, "MOCK": "1"})
    try:
        with_deadline = time.monotonic() + RUN_LIMIT
        while not sleeping(planted) and time.monotonic() < with_deadline:
            time.sleep(0.01)  # bounded: until the code under test has started its process
        assert sleeping(planted)
        runner.terminate()
        _, stderr = runner.communicate(timeout=RUN_LIMIT)
    finally:
        runner.kill()
    assert runner.returncode == 143 and "stopped (SIGTERM)" in stderr
    assert sleeping(planted) == []
