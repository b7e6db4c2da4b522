"""The benchmark runs end to end (a smoke run: it measures, it asserts no timings)."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path
from unittest import mock

from checks.dev import bench
from checks.dev.bench import aggregation, in_flight, server_start, written_out
from checks.target import ROOT

import anyio
import pytest


def test_in_flight_calls_are_all_matched_to_their_requests() -> None:
    rate, wrong = anyio.run(in_flight, 300)
    assert wrong == 0 and rate > 0


def test_aggregation_builds_every_entry() -> None:
    took, peak = aggregation(5, 20)
    assert took > 0 and peak > 0


@pytest.mark.timeout(600)  # a minute's work on a busy machine; only a hang should reach this
def test_the_bench_command_prints_its_table() -> None:
    done = subprocess.run([sys.executable, "-m", "checks.dev.bench", "--quick"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert any(line.strip().startswith("1. sequential tools/call") for line in lines)
    assert any("matched" in line for line in lines) and lines[-1].startswith("bench: 19 rows")
    assert any(line.strip().startswith("7. code mode, demo question: tokens sent") for line in lines)
    for rules in ("8. billed, Anthropic's rules", "9. billed, OpenAI's rules"):  # the cost row, both modes
        first = next(i for i, line in enumerate(lines) if line.strip().startswith(rules))
        assert all(" full " in line and " vs meta " in line and line.rstrip().endswith("met")
                   for line in lines[first:first + 4]), lines[first:first + 4]


def test_a_commit_is_written_out_as_it_was_committed(tmp_path: Path) -> None:
    repository = tmp_path / "repository"
    (repository / "servers").mkdir(parents=True)
    (repository / "servers" / "notes.py").write_text("committed\n")

    def git(*words: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *words], cwd=repository,
                       check=True, capture_output=True)
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    (repository / "servers" / "notes.py").write_text("changed since\n")
    tree = written_out("HEAD", tmp_path / "tree", repository)
    assert (tree / "servers" / "notes.py").read_text() == "committed\n" and not (tree / ".git").exists()


def test_a_fixture_start_is_timed_to_its_answer_and_its_cpu_counted_to_its_exit() -> None:
    took, cpu = server_start(ROOT)
    assert took > 0 and cpu > 0


def test_against_prints_each_measurement_for_both_checkouts_with_their_ratio(tmp_path: Path) -> None:
    """The table's layout and arithmetic, with the measurements put in: this checkout's
    fixture takes twice as long, its self-check half as long."""
    def start(root: Path) -> "tuple[float, float]":
        return (0.08, 0.04) if root == ROOT else (0.04, 0.02)

    def wall(target: str, root: Path = ROOT) -> float:
        return 1.0 if root == ROOT else 2.0

    def saves(root: Path, count: int) -> "list[float]":
        return [1.5 if root == ROOT else 1.0] * count
    printed = io.StringIO()
    with mock.patch.multiple(bench, server_start=start, checks_time=wall, watch_times=saves,
                             written_out=lambda rev, into: tmp_path), contextlib.redirect_stdout(printed):
        assert bench.main(["--against", "main", "--quick"]) == 0
    lines = printed.getvalue().splitlines()
    assert lines[0].split()[-3:] == ["checkout", "main", "ratio"]
    assert lines[1].split()[-7:] == "80.0 ms (80.0-80.0) 40.0 ms (40.0-40.0) 2.00x".split()
    assert lines[2].split()[-7:] == "40.0 ms (40.0-40.0) 20.0 ms (20.0-20.0) 2.00x".split()
    assert [line.split()[-1] for line in lines[3:]] == ["0.50x", "0.50x", "1.50x"] and len(lines) == 6
