"""Files the client writes: never through a link, only regular files, bounded
reads, whole writes by rename under a shared lock, and one line when refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable, List

import pytest

from solution.host import safe_files
from solution.host.safe_files import UnsafeFile
from solution.task_calls.task_runner import TaskBook, TaskRecord
from solution.tests.conftest import ROOT


def test_a_link_is_refused_for_reading_appending_and_replacing(tmp_path: Path) -> None:
    target = tmp_path / "bashrc"
    target.write_text("echo hello\n")
    link = tmp_path / ".mcp-tasks.json"
    link.symlink_to(target)
    attempts: List[Callable[[], object]] = [lambda: safe_files.read(link), lambda: safe_files.append(link, b"x"),
                                            lambda: safe_files.replace(link, "[]"), lambda: safe_files.check(link)]
    for attempt in attempts:
        with pytest.raises(UnsafeFile, match="symbolic link"):
            attempt()
    assert target.read_text() == "echo hello\n"


def test_a_fifo_and_a_device_are_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "audit.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeFile, match="FIFO"):
        safe_files.append(fifo, b"x")  # no reader: a blocking open would wait for ever
    with pytest.raises(UnsafeFile, match="FIFO"):
        safe_files.read(fifo)
    with pytest.raises(UnsafeFile, match="device"):
        safe_files.read(Path("/dev/zero"))  # would otherwise grow without end


def test_a_huge_file_is_not_read_whole(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2000)
    with pytest.raises(UnsafeFile, match="larger than 1000 bytes"):
        safe_files.read(big, limit=1000)


def test_a_full_disk_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UnsafeFile) as caught:
        safe_files.append(Path("/dev/full"), b"x")  # a device: refused before any write
    assert "\n" not in str(caught.value)


def test_tasks_of_two_clients_in_one_file_survive_each_others_finish(tmp_path: Path) -> None:
    path = str(tmp_path / ".mcp-tasks.json")
    first, second = TaskBook(path), TaskBook(path)
    first.add(TaskRecord("tickets", "export_tickets", "t-1", "current"))
    second.add(TaskRecord("tickets", "export_tickets", "t-2", "current"))
    first.done("t-1")  # must not take t-2 with it
    assert [r["task_id"] for r in json.loads(Path(path).read_text())] == ["t-2"]
    second.done("t-2")
    assert not Path(path).exists()


def test_many_writers_at_once_lose_no_record(tmp_path: Path) -> None:
    path = str(tmp_path / ".mcp-tasks.json")

    def write(n: int) -> None:
        TaskBook(path).add(TaskRecord("tickets", "export_tickets", f"t-{n}", "current"))
    threads = [threading.Thread(target=write, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(json.loads(Path(path).read_text())) == 20
    assert [p.name for p in tmp_path.iterdir()] == [".mcp-tasks.json"]  # no lock or temporary file left


def test_a_planted_tasks_link_is_never_written_through(tmp_path: Path) -> None:
    target = tmp_path / "bashrc"
    target.write_text("echo hello\n")
    (tmp_path / ".mcp-tasks.json").symlink_to(target)
    with pytest.raises(UnsafeFile):
        TaskBook(str(tmp_path / ".mcp-tasks.json"))
    assert target.read_text() == "echo hello\n"


def cli(*args: str, cwd: Path) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "solution", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env={**os.environ, "MOCK": "1", "PYTHONPATH": str(ROOT)},
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("planted", [".mcp-tasks.json", ".mcp-audit.jsonl"])
def test_the_command_line_refuses_a_planted_link_in_one_line_before_any_call(tmp_path: Path, planted: str) -> None:
    target = tmp_path / "bashrc"
    target.write_text("echo hello\n")
    (tmp_path / planted).symlink_to(target)
    done = cli("call", "mcp__notes__read_note", '{"id": "n-2"}', cwd=tmp_path)
    assert done.returncode == 2 and "symbolic link" in done.stderr, done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("error")] == [done.stderr.strip()
                                                                                      .splitlines()[-1]]
    assert "Traceback" not in done.stderr
    assert target.read_text() == "echo hello\n"


def test_a_fifo_as_the_tasks_file_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".mcp-tasks.json")
    done = cli("call", "mcp__notes__read_note", '{"id": "n-2"}', cwd=tmp_path)
    assert done.returncode == 2 and "FIFO" in done.stderr, done.stderr


def test_an_audit_log_that_fails_mid_run_is_one_line_saying_the_call_went_out(tmp_path: Path) -> None:
    # The log's directory is fine at the start, then the file is swapped for a FIFO with no reader.
    log = tmp_path / "audit.jsonl"
    script = (
        "import os, sys, runpy, pathlib\n"
        "from solution.host import audit\n"
        "real = audit.AuditLog.record\n"
        "def record(self, **fields):\n"
        f"    os.unlink({str(log)!r}); os.mkfifo({str(log)!r})\n"
        "    return real(self, **fields)\n"
        "audit.AuditLog.record = record\n"
        "sys.argv = ['solution', 'call', 'mcp__notes__read_note', '{\"id\": \"n-2\"}', '--audit', "
        f"{str(log)!r}]\n"
        "runpy.run_module('solution', run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, env={**os.environ, "MOCK": "1", "PYTHONPATH": str(ROOT)},
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert len([line for line in done.stderr.splitlines() if line.startswith("error")]) == 1
    assert "Traceback" not in done.stderr
    assert "cannot write the audit log" in done.stderr and "went out to the server" in done.stderr
