"""The command line and tasks: status lines, Ctrl-C cancels the task on the
server, and `tasks` asks again about what an interrupted run left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from solution.tests.conftest import ROOT

EXPORT = "mcp__tickets__export_tickets"
# Run from another directory, `-m solution` must still be this checkout's, not whichever one is installed.
THIS_CHECKOUT = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}


def config(tmp_path: Path, *extra: str) -> Path:
    journal = tmp_path / "tickets.jsonl"
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"tickets": {
        "command": sys.executable, "args": [str(ROOT / "servers" / "tickets.py"), "--journal", str(journal),
                                            *extra]}}}))
    return path


def journal(tmp_path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "tickets.jsonl").read_text().splitlines()]


def received(tmp_path: Path, method: str) -> List[Dict[str, Any]]:
    return [e["msg"] for e in journal(tmp_path) if e["kind"] == "in" and e.get("msg", {}).get("method") == method]


def test_call_shows_task_status_lines_and_ends_with_the_result(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "solution", "call", "--yes", "--config", str(config(tmp_path)),
                           "--tasks-file", str(tmp_path / "tasks.json"), EXPORT, '{"format": "json"}'],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env=THIS_CHECKOUT)
    assert done.returncode == 0, done.stderr
    assert "Exported 3 tickets as JSON" in done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip().startswith("task ")]
    assert lines and "on tickets: working" in lines[0] and "completed" in lines[-1]
    assert not (tmp_path / "tasks.json").exists()  # nothing left to resume


def http_config(tmp_path: Path, serve: Any, *extra: str) -> Path:
    """The same tickets fixture, over Streamable HTTP (its journal in the same place)."""
    url = serve(str(ROOT / "servers" / "tickets.py"), "--http", "PORT", "--journal",
                str(tmp_path / "tickets.jsonl"), *extra)
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"tickets": {"url": url}}}))
    return path


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("signal_name, status", [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_cancels_the_task_on_the_server_before_exiting(tmp_path: Path, serve: Any, transport: str,
                                                                signal_name: str, status: int) -> None:
    """Ctrl-C, SIGTERM and SIGHUP end a run alike on either transport: `tasks/cancel`
    goes out and is answered, the work stops, and nothing is left to resume."""
    steps = ("--task-steps", "400")
    cfg = config(tmp_path, *steps) if transport == "stdio" else http_config(tmp_path, serve, *steps)
    process = subprocess.Popen([sys.executable, "-m", "solution", "call", "--yes", "--config", str(cfg),
                                "--tasks-file", str(tmp_path / "tasks.json"), EXPORT, '{"format": "csv"}'],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                               env=THIS_CHECKOUT)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait for the work to be under way (a status line says so)
            line = process.stderr.readline()
            if "Exported batch" in line or not line:
                break
        process.send_signal(getattr(signal, signal_name))
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == status, err
    cancels = received(tmp_path, "tasks/cancel")
    assert len(cancels) == 1, err
    answered = [e for e in journal(tmp_path) if e["kind"] == "out" and e.get("msg", {}).get("id") == cancels[0]["id"]]
    assert answered and "result" in answered[0]["msg"]  # the server confirmed it
    stopped = [e for e in journal(tmp_path) if e["kind"] == "work-stopped"]
    assert stopped and stopped[0]["reason"] == "cancelled"
    assert not (tmp_path / "tasks.json").exists()  # cancelled and confirmed: nothing to resume


def test_tasks_asks_again_about_an_unfinished_task_and_reports_a_forgotten_one(tmp_path: Path) -> None:
    book = tmp_path / "tasks.json"
    book.write_text(json.dumps([{"alias": "tickets", "tool": "export_tickets", "task_id": "gone-123",
                                 "era": "current"}]))
    done = subprocess.run([sys.executable, "-m", "solution", "tasks", "--config", str(config(tmp_path)),
                           "--tasks-file", str(book)], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env=THIS_CHECKOUT)
    assert done.returncode == 1
    assert "no longer knows task gone-123" in done.stdout
    assert [m["params"]["taskId"] for m in received(tmp_path, "tasks/get")] == ["gone-123"]
    assert not book.exists()
