"""`python -m checks`: the nine items, streamed as they are judged.

    python -m checks [ITEM ...] [--only 3,5] [--target starter|solution|DIR]
                     [--json] [--trace] [--watch] [--hint N [--all]]

Exit status: 0 when every selected item passes, 1 when any fails, 2 when the
harness could not judge (bad arguments, a package that does not import, a
fixture that would not start).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from typing import Any, Dict, List, Optional

from checks.extensions import EXTENSION_ITEMS, label
from checks.harness import Item, Verdict, Where, run_items
from checks.hints import HINTS, next_hints
from checks.items import ITEMS
from checks.style import Style
from checks.target import TargetError, load_target

WIDTH = 96
TITLE_WIDTH = 9 + max(len(item.title) for item in ITEMS + EXTENSION_ITEMS)
FAILED_TRACE_LINES = 12
MEANING = {0: "all passed", 1: "some items failed", 2: "the harness could not judge"}
NEXT_STEPS = """\
All nine pass. Next:
  QUESTION="Read note n-2" python -m {package}     the agent loop, end to end
  python -m {package} tools                        the table the model sees
  labs/GUIDE.md, section 10                         three interview questions"""


def exit_status(verdicts: List[Verdict]) -> int:
    if any(v.status == "error" for v in verdicts):
        return 2
    return 0 if all(v.status == "pass" for v in verdicts) else 1


def verdict_from_json(data: Dict[str, Any]) -> Verdict:
    where = data.get("where")
    return Verdict(int(data["number"]), str(data["id"]), str(data["title"]), str(data["status"]),
                   float(data["duration"]), str(data["message"]),
                   Where(**where) if isinstance(where, dict) else None, trace=list(data.get("trace", [])))


def render(verdict: Verdict, style: Style, full_trace: bool = False) -> str:
    word, colour = {"pass": ("PASS", "green"), "fail": ("FAIL", "red"),
                    "error": ("ERROR", "yellow")}[verdict.status]
    head = f"{label(verdict.number):>2} {word:<5} {verdict.title}"
    padded = f"{head:<{TITLE_WIDTH}} {verdict.duration:5.2f} s"
    lines = [padded.replace(word, style.paint(word, colour, "bold"), 1)]
    if verdict.status != "pass":
        for line in verdict.message.splitlines():
            tag, sep, _ = line.partition(": ")
            indent = " " * (9 + len(tag) + 2) if sep and len(tag) <= 8 else " " * 11
            lines.append(textwrap.fill(line, WIDTH, initial_indent=" " * 9,
                                       subsequent_indent=indent, break_on_hyphens=False))
        if verdict.where and verdict.where.exercise is None:
            lines.append(f"         look at: {verdict.where.file}, {verdict.where.function}")
    shown = verdict.trace if full_trace else (verdict.trace[-FAILED_TRACE_LINES:]
                                              if verdict.status != "pass" else [])
    if shown:
        more = len(verdict.trace) - len(shown)
        lines.append(style.paint(f"         wire{f' (last {len(shown)} lines; --trace for all)' if more else ''}:",
                                 "dim"))
        lines += [style.paint(f"           {line}", "dim") for line in shown]
    return "\n".join(lines)


def summary(verdicts: List[Verdict], seconds: float, style: Style) -> str:
    nine = [v for v in verdicts if v.number <= len(ITEMS)]
    extra = [v for v in verdicts if v.number > len(ITEMS)]
    passed = sum(v.status == "pass" for v in nine)
    failed = sum(v.status == "fail" for v in verdicts)
    errors = sum(v.status == "error" for v in verdicts)
    parts = [f"{passed}/{len(nine)} passed"]
    if extra:
        parts.append(f"extensions {sum(v.status == 'pass' for v in extra)}/{len(extra)} passed")
    if failed:
        parts.append(style.paint(f"{failed} failed", "red"))
    if errors:
        parts.append(style.paint(f"{errors} not judged", "yellow"))
    status = exit_status(verdicts)
    return " · ".join(parts) + f" · {seconds:.1f} s · exit {status} ({MEANING[status]})"


def parse(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m checks",
                                     description="The MCP client lab's nine self-check items.")
    parser.add_argument("items", nargs="*", type=int, metavar="ITEM", help="run only these items")
    parser.add_argument("--only", default="", help="run only these items, e.g. 3,5")
    parser.add_argument("--target", default="starter",
                        help="starter (default), solution, or a client package directory")
    parser.add_argument("--json", action="store_true", help="print the verdicts as one JSON document")
    parser.add_argument("--trace", action="store_true",
                        help="show the wire conversation of every item (failing items always show its end)")
    parser.add_argument("--watch", action="store_true", help="run again on every save under the target")
    parser.add_argument("--extensions", action="store_true",
                        help="after the nine, run E1-E5 (consent, list changes, progress, many tools, "
                             "structured results); they then count in the exit status")
    parser.add_argument("--hint", type=int, metavar="N", help="the next hint for item N")
    parser.add_argument("--all", action="store_true", help="with --hint: all three hints")
    options = parser.parse_args(argv)
    try:
        chosen = set(options.items) | {int(n) for n in options.only.replace(" ", "").split(",") if n}
    except ValueError:
        parser.error(f"--only wants item numbers like 3,5; got {options.only!r}")
    known = {item.number for item in ITEMS}
    if chosen - known or (options.hint is not None and options.hint not in HINTS):
        parser.error(f"items are numbered 1 to {len(ITEMS)}")
    options.chosen = chosen
    return options


def run(options: argparse.Namespace) -> int:
    began = time.perf_counter()
    try:
        target = load_target(options.target)
    except TargetError as exc:
        if options.json:
            print(json.dumps({"target": options.target, "status": "error", "message": str(exc),
                              "exit_status": 2, "items": []}, indent=2))
        else:
            print(f"cannot judge: {exc}", file=sys.stderr)
        return 2
    items: List[Item] = [i for i in ITEMS if not options.chosen or i.number in options.chosen]
    if options.extensions:
        items += EXTENSION_ITEMS
    note = str(target.models.choose_model()[1])
    style = Style(sys.stdout)
    live = style.live and not options.json

    def tick(item: Item, elapsed: float, limit: float) -> None:
        doing = f"waiting on {item.waits}" if item.waits else item.title
        text = f"{label(item.number):>2} ....  {elapsed:4.1f} s (gives up at {limit:g} s)  {doing}"
        sys.stdout.write("\r" + text[:WIDTH].ljust(WIDTH))
        sys.stdout.flush()

    def show(verdict: Verdict) -> None:
        if live:
            sys.stdout.write("\r" + " " * WIDTH + "\r")
        print(render(verdict, style, options.trace), flush=True)

    if not options.json:
        print(f"MCP client lab · checking {target.display_path('')} · {note}", flush=True)
    verdicts = run_items(items, target, on_verdict=None if options.json else show,
                         on_tick=tick if live else None)
    status = exit_status(verdicts)
    if options.json:
        nine = [v for v in verdicts if v.number <= len(ITEMS)]
        report: Dict[str, Any] = {"target": options.target, "model": note,
                                  "passed": sum(v.status == "pass" for v in nine), "total": len(nine),
                                  "exit_status": status,
                                  "items": [v.to_json(with_trace=options.trace) for v in nine]}
        if options.extensions:
            report["extensions"] = [dict(v.to_json(with_trace=options.trace), name=label(v.number))
                                    for v in verdicts if v.number > len(ITEMS)]
        print(json.dumps(report, indent=2))
    else:
        print(summary(verdicts, time.perf_counter() - began, style))
        if status == 0 and len([v for v in verdicts if v.number <= len(ITEMS)]) == len(ITEMS):
            print(NEXT_STEPS.format(package=target.package if target.name in ("starter", "solution")
                                    else "starter"))
    if any(v.hung for v in verdicts):
        sys.stdout.flush()
        os._exit(status)  # a blocked worker thread must not keep the runner alive
    return status


def main(argv: Optional[List[str]] = None) -> int:
    try:
        options = parse(argv)
    except SystemExit as exc:  # argparse's own exit (2 for bad arguments, 0 for --help)
        return int(exc.code or 0)
    if options.hint is not None:
        for line in next_hints(options.hint, options.all):
            print(textwrap.fill(line, WIDTH, subsequent_indent="    "))
        return 0
    if options.watch:
        from pathlib import Path

        from checks.target import ROOT
        from checks.watch import watch
        directory = ROOT / options.target if options.target in ("starter", "solution") else Path(options.target)
        style = Style(sys.stdout)
        forwarded = [*(str(n) for n in sorted(options.chosen)), "--target", str(directory), "--trace"]

        def show(report: Dict[str, Any]) -> None:
            if report.get("message"):
                print(f"cannot judge: {report['message']}")
            verdicts = [verdict_from_json(i) for i in report.get("items", [])]
            for verdict in verdicts:
                print(render(verdict, style))
            if verdicts:
                print(summary(verdicts, sum(v.duration for v in verdicts), style))
        return watch(directory, forwarded, show, sys.stdout, clear=style.live)
    return run(options)
