"""`python -m checks.dev.load`: the verdicts under load, as a grader's busy machine sees them.

    python -m checks.dev.load [--copies 8] [--rounds 3] [--cpus 0,1]

Each round starts `--copies` self-checks of the reference solution at once,
pinned to two CPUs (with `taskset`, where there is one), then as many of the
shipped starter. A verdict that depends on the machine's speed shows up here
as a run that differs from the others. Expected: every solution run 9/9; every
starter run green on exactly 1, 4, 7 and 9 and red (not "error") on the rest.
Exit status 0 when every run says what it should, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from typing import Dict, List, Optional, Set, Tuple

from checks.target import ROOT

STARTER_GREEN = {1, 4, 7, 9}
RUN_LIMIT = 300  # seconds for one self-check under load; only a hang reaches it


def command(target: str, cpus: str) -> List[str]:
    pin = ["taskset", "-c", cpus] if cpus and shutil.which("taskset") else []
    return [*pin, sys.executable, "-m", "checks", "--target", target, "--json"]


def judge_run(target: str, status: int, stdout: str) -> Optional[str]:
    """None when the run says what it should; otherwise what differs."""
    try:
        report = json.loads(stdout)
    except ValueError:
        return f"exit {status}, and stdout is not one JSON document: {stdout[:200]!r}"
    items = report.get("items", [])
    green = {i["number"] for i in items if i["status"] == "pass"}
    errors = {i["number"] for i in items if i["status"] == "error"}
    wanted = set(range(1, 10)) if target == "solution" else STARTER_GREEN
    if green == wanted and not errors and status == (0 if target == "solution" else 1):
        return None
    wrong = [f"{i['number']} {i['status']}: {i['message'].splitlines()[0][:160]}"
             for i in items if (i["number"] in wanted) != (i["status"] == "pass") or i["status"] == "error"]
    return f"exit {status}; green {sorted(green)}; " + " | ".join(wrong + report.get("problems", []))


def one_round(target: str, copies: int, cpus: str) -> List[Optional[str]]:
    env = {**os.environ, "MOCK": "1"}
    runs = [subprocess.Popen(command(target, cpus), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, cwd=ROOT, env=env) for _ in range(copies)]
    found: List[Optional[str]] = []
    for run in runs:
        try:
            stdout, _ = run.communicate(timeout=RUN_LIMIT)
            found.append(judge_run(target, run.returncode, stdout))
        except subprocess.TimeoutExpired:
            run.kill()
            run.communicate()
            found.append(f"did not finish in {RUN_LIMIT} s")
    return found


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checks.dev.load", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=8, help="self-checks at once (default 8)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per target (default 3)")
    parser.add_argument("--cpus", default="0,1", help="CPUs to pin to with taskset ('' for none)")
    options = parser.parse_args(argv)
    tally: Dict[str, Tuple[int, int]] = {}
    differences: List[str] = []
    for target in ("solution", "starter"):
        good = total = 0
        for round_number in range(1, options.rounds + 1):
            began = time.perf_counter()
            found = one_round(target, options.copies, options.cpus)
            good += sum(f is None for f in found)
            total += len(found)
            differences += [f"{target} round {round_number}: {f}" for f in found if f is not None]
            print(f"{target:<8} round {round_number}: {sum(f is None for f in found)}/{len(found)} as expected "
                  f"({time.perf_counter() - began:.1f} s for {options.copies} at once)", flush=True)
        tally[target] = (good, total)
    for line in differences:
        print(f"  differs: {line}")
    expected: Set[str] = {"solution 9/9", "starter 1, 4, 7, 9 green"}
    summary = "; ".join(f"{t}: {g}/{n} runs as expected" for t, (g, n) in tally.items())
    print(f"load: {summary} ({', '.join(sorted(expected))})")
    return 0 if not differences else 1


if __name__ == "__main__":
    sys.exit(main())
