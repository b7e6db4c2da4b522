"""The worker: the one process in which the code under test runs.

    python -m checks.worker '{"target": ..., "items": [1, 2, 11, ...],
                              "limit": 20.0, "fd": N}'
    python -m checks.worker --request FILE      (the same, from a file)

Started by the runner (`checks.isolation`) in a session of its own. It loads
the target, judges the items and tells the runner what happened as JSON
lines on file descriptor `fd`: `start` (model, path, what the import
printed), `begin`, `end` and `verdict` per item (with its wire and trace,
read from the servers' journals), `done` (threads still running), or
`load-error` / `crash`; and `print` for what the code under test printed,
labelled with its item (`checks.capture`); in grading mode, `observed` for
what a region did on the inputs the request gives (`checks.contracts`). The
worker's own stdout is never read as a report. The worker always ends with
`os._exit`, so no thread the code started can keep it alive; whatever the
code left running is the runner's to find and end.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, Dict, List

from checks.capture import OutputRouter


class Channel:
    """JSON lines to the runner, whole lines only, from any thread."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._lock = threading.Lock()

    def send(self, event: str, **fields: Any) -> None:
        data = (json.dumps({"event": event, **fields}) + "\n").encode("utf-8", "backslashreplace")
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]


def leftover_threads(hung: List[int]) -> List[str]:
    """Threads that would keep an ordinary process alive, and items' blocked threads."""
    found = [f"{t.name} (started by the code under test)" for t in threading.enumerate()
             if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    return found + [f"item-{n} (blocked; its event loop never returned)" for n in hung]


def run(request: Dict[str, Any], channel: Channel) -> None:
    # Imported here, after stdout is captured: nothing the target prints at
    # import time may reach the real stdout.
    from checks.harness import Item, Verdict, run_items
    from checks.hybrid import Hybrids
    from checks.items import EXTENSION_ITEMS, ITEMS
    from checks.target import TargetError, load_target

    send = channel.send
    if request.get("inputs"):  # grading mode: what the region does on them goes to the runner
        from checks.contracts import observe_for_the_runner
        observe_for_the_runner(dict(request["inputs"]), lambda region, seen: send("observed", region=region, seen=seen))
    try:
        target = load_target(str(request["target"]), Path(request["shown"]) if request.get("shown") else None)
    except TargetError as exc:
        send("load-error", message=str(exc))
        return
    except BaseException as exc:  # SystemExit or worse, at import time
        send("load-error", message=f"importing {request['target']} raised {type(exc).__name__}({exc}): not judged")
        return
    lines = request.get("lines")  # grading mode: the package is a region's copy (checks.hybrid)
    if isinstance(lines, dict):
        target.lines = {str(name): [(int(a), int(b), int(c), int(d)) for a, b, c, d in shifts]
                        for name, shifts in lines.items()}
    try:
        note = str(target.module("model_apis").choose_model()[1])
    except BaseException as exc:
        note = f"model: none could be chosen ({type(exc).__name__}: {exc})"
    send("start", model=note, display=target.display_path(""))
    wanted = set(request["items"])
    items: List[Item] = [i for i in ITEMS + EXTENSION_ITEMS if i.number in wanted]

    def verdict(v: Verdict) -> None:
        send("verdict", verdict=v.to_json(with_trace=True, with_wire=True), hung=v.hung)

    # The copies each region is judged in were made by the runner (checks.hybrid).
    hybrids = Hybrids(target, dict(request.get("regions") or {}))
    verdicts = run_items(items, target, on_verdict=verdict, limit=float(request["limit"]),
                         on_phase=lambda item, phase: send(phase, number=item.number), hybrids=hybrids)
    send("done", threads=leftover_threads([v.number for v in verdicts if v.hung]))


def serve(request: Dict[str, Any]) -> None:
    """Run `request` and end this process (never returns)."""
    channel = Channel(int(request["fd"]))
    sys.stdout = sys.stderr = OutputRouter(lambda label, text: channel.send("print", label=label, text=text))
    try:
        run(request, channel)
    except BaseException:
        try:
            channel.send("crash", message=traceback.format_exc()[-2000:])
        except OSError:
            pass
        os._exit(70)
    os._exit(0)


def main() -> None:
    if sys.argv[1:2] == ["--request"]:  # grading mode: the request in a file of the runner's
        with open(sys.argv[2], encoding="utf-8") as file:
            serve(json.load(file))
    serve(json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
