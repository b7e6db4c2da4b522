"""How the test suite runs, whoever starts it. Loaded by `-p` in pyproject.toml's
addopts, so `pytest solution` gets it as well as `pytest`.

- `-n auto` starts twice as many test processes as there are CPUs. Most of the
  suite's time is spent waiting (for fixture servers to start and answer, for
  a subprocess's verdict, for a limit only a wrong path reaches), so one
  process per CPU leaves the CPUs idle much of the run: on 2 CPUs the suite
  took 120 s with 2 and 89 s with 4, with the same verdicts. The tests' limits
  are generous enough for the extra load (they also hold with two suites at
  once). `PYTEST_XDIST_AUTO_NUM_WORKERS` still wins when set.
- Ctrl-C works in the programs the tests start. A shell without job control
  starts a background command (`pytest &` in a script) with SIGINT ignored,
  and an ignored signal is inherited across exec: the tests that press Ctrl-C
  on the client or on `--watch` would then wait for an exit that cannot come.
"""

from __future__ import annotations

import os
import signal
from typing import Optional

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Optional[int]:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 * max(1, cpus)


def pytest_configure(config: pytest.Config) -> None:
    # Runs before xdist starts its workers, and again in each worker.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
