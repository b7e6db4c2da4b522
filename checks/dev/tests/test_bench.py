"""The benchmark runs end to end (a smoke run: it measures, it asserts no timings)."""

from __future__ import annotations

import subprocess
import sys

from checks.dev.bench import aggregation, in_flight
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
