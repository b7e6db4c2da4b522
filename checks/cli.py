"""`python -m checks [--target starter|solution|DIR] [--json]`: the nine items.

Exit status: 0 when every item passes, 1 when any fails, 2 when the harness
could not judge (bad arguments, a package that does not import, a fixture
that would not start).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from typing import List, Optional

from checks.harness import Verdict, run_items
from checks.items import ITEMS
from checks.target import TargetError, load_target

WIDTH = 96
TITLE_WIDTH = 9 + max(len(item.title) for item in ITEMS)


def exit_status(verdicts: List[Verdict]) -> int:
    if any(v.status == "error" for v in verdicts):
        return 2
    return 0 if all(v.status == "pass" for v in verdicts) else 1


def render(verdict: Verdict) -> str:
    word = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[verdict.status]
    head = f"{verdict.number:>2} {word:<5} {verdict.title}"
    lines = [f"{head:<{TITLE_WIDTH}} {verdict.duration:5.2f} s"]
    if verdict.status != "pass":
        for line in verdict.message.splitlines():
            label, sep, rest = line.partition(": ")
            indent = " " * (9 + len(label) + 2) if sep and len(label) <= 8 else " " * 11
            lines.append(textwrap.fill(line, WIDTH, initial_indent=" " * 9,
                                       subsequent_indent=indent, break_on_hyphens=False))
        if verdict.where and verdict.where.exercise is None:
            lines.append(f"         look at: {verdict.where.file}, {verdict.where.function}")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checks",
                                     description="The MCP client lab's nine self-check items.")
    parser.add_argument("--target", default="starter",
                        help="starter (default), solution, or a client package directory")
    parser.add_argument("--json", action="store_true", help="print the verdicts as one JSON document")
    try:
        options = parser.parse_args(argv)
    except SystemExit as exc:  # argparse's own exit (2 for bad arguments, 0 for --help)
        return int(exc.code or 0)
    began = time.perf_counter()
    try:
        target = load_target(options.target)
    except TargetError as exc:
        if options.json:
            print(json.dumps({"target": options.target, "status": "error", "message": str(exc),
                              "items": []}, indent=2))
        else:
            print(f"cannot judge: {exc}", file=sys.stderr)
        return 2
    note = str(target.models.choose_model()[1])
    if not options.json:
        print(f"MCP client lab · checking {target.display_path('')} · {note}", flush=True)
    verdicts = run_items(ITEMS, target,
                         on_verdict=None if options.json else lambda v: print(render(v), flush=True))
    status = exit_status(verdicts)
    passed = sum(v.status == "pass" for v in verdicts)
    if options.json:
        print(json.dumps({"target": options.target, "model": note, "passed": passed,
                          "total": len(verdicts), "exit_status": status,
                          "items": [v.to_json() for v in verdicts]}, indent=2))
    else:
        failed = len(verdicts) - passed
        summary = f"{passed}/{len(verdicts)} passed" + (f" · {failed} failed" if failed else "")
        print(f"{summary} · {time.perf_counter() - began:.1f} s")
    if any(v.hung for v in verdicts):
        sys.stdout.flush()
        os._exit(status)  # a blocked worker thread must not keep the runner alive
    return status
