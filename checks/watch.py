"""`python -m checks --watch`: run again on every save, and say what changed.

Polls file modification times with the standard library (so it works on WSL,
network drives and containers where file events do not arrive). Each run is a
fresh `python -m checks --json` process, so edited modules are imported anew.
The screen is cleared only on a terminal.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, TextIO, Tuple

POLL = 0.1  # seconds between looks at the files' modification times (a stat of some thirty files)

Snapshot = Dict[Path, Tuple[float, int]]


def snapshot(directory: Path) -> Snapshot:
    found: Snapshot = {}
    for path in directory.rglob("*.py"):
        try:
            stat = path.stat()
        except OSError:
            continue  # saved by renaming: the new file is picked up next time
        found[path] = (stat.st_mtime, stat.st_size)
    return found


def changes(before: Dict[int, str], after: Dict[int, str]) -> List[str]:
    words = {"pass": "turned green", "fail": "turned red", "error": "could not be judged"}
    return [f"item {n} {words.get(status, status)}" for n, status in sorted(after.items())
            if before.get(n) not in (None, status)]


def run_once(argv: List[str]) -> Tuple[int, Dict[str, Any]]:
    done = subprocess.run([sys.executable, "-m", "checks", *argv, "--json"], capture_output=True,
                          text=True, timeout=120)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        report = {"items": [], "message": done.stderr.strip()[-500:]}
    return done.returncode, report


def watch(directory: Path, argv: List[str], render: Callable[[Dict[str, Any]], None],
          out: TextIO, clear: bool) -> int:
    """Run, then run again after each change under `directory`, until interrupted."""
    before: Dict[int, str] = {}
    seen = snapshot(directory)
    try:
        while True:
            if clear:
                out.write("\x1b[2J\x1b[H")
            _, report = run_once(argv)
            render(report)
            items = report.get("items")
            after = {int(i["number"]): str(i["status"]) for i in items} if isinstance(items, list) else {}
            for line in changes(before, after):
                out.write(f"{line}\n")
            before = after
            out.write(f"watching {directory} for changes (Ctrl-C to stop)\n")
            out.flush()
            while snapshot(directory) == seen:
                time.sleep(POLL)
            seen = snapshot(directory)
    except KeyboardInterrupt:
        out.write("stopped watching\n")
    return 0
