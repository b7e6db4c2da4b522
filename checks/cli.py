"""`python -m checks`: the nine items, streamed as they are judged.

    python -m checks [ITEM ...] [--only 3,5] [--target starter|solution|DIR]
                     [--json] [--trace] [--html FILE] [--watch] [--hint N [--all]] [--limit S]
    python -m checks --grade --target DIR [--judge-commit REV] [--judge-repo REPO] ...   (checks.grading)

The code under test runs in a worker process (`checks.isolation`); this
process alone writes the report and chooses the exit status: 0 when every
selected item passes, 1 when any fails, 2 when the harness could not judge
(bad arguments, a package that does not import, a fixture that would not
start, or code under test that ended, blocked or outlived the run).
"""

from __future__ import annotations

import argparse
import io
import json
import signal
import sys
import tempfile
import textwrap
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from checks import grading, reaper
from checks.items import EXTENSION_ITEMS, ITEMS, label
from checks.files import write_whole
from checks.harness import ITEM_LIMIT, Item, Verdict, verdict_from_json
from checks.hints import HINTS, next_hints
from checks.hybrid import prepare, region_of
from checks.intake import IntakeError, commit_of, place, read_files
from checks.isolation import run_isolated
from checks.outcome import Outcome
from checks.report import WIDTH, exit_status, json_report, render, runner_lines, summary
from checks.style import Style
from checks.target import target_directory
from checks.typecount import type_count
from checks.visible import visible

NEXT_STEPS = (("QUESTION=\"Read note n-2\" python -m {package}", "the agent loop, end to end"),
              ("python -m {package} tools", "the table the model sees"),
              ("labs/GUIDE.md, section 10", "three interview questions"))


def next_steps(package: str) -> str:
    """What to do once all nine pass, the descriptions in one column whatever the package's name."""
    steps = [(command.format(package=package), what) for command, what in NEXT_STEPS]
    width = max(len(command) for command, _ in steps) + 5
    return "All nine pass. Next:\n" + "\n".join(f"  {command:<{width}}{what}" for command, what in steps)


def parse(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m checks",
                                     description="The MCP client lab's nine self-check items.")
    parser.add_argument("items", nargs="*", metavar="ITEM", help="run only these items (1-9, E1-E11)")
    parser.add_argument("--only", default="", help="run only these items, e.g. 3,5 or E3,E5")
    parser.add_argument("--target", default="starter",
                        help="starter (default), solution, or a client package directory")
    parser.add_argument("--json", action="store_true", help="print the verdicts as one JSON document")
    parser.add_argument("--trace", action="store_true",
                        help="show the wire conversation of every item (failing items always show its end)")
    parser.add_argument("--watch", action="store_true", help="run again on every save under the target")
    parser.add_argument("--extensions", action="store_true",
                        help="after the nine, run E1-E11 (consent, list changes, progress, many tools, "
                             "structured results, tasks, elicitation, code mode, remote servers, resources, "
                             "sampling); they then count in the exit status")
    parser.add_argument("--hint", metavar="N", help="the next hint for item N (1-9, or E1-E11)")
    parser.add_argument("--all", action="store_true", help="with --hint: all three hints")
    parser.add_argument("--types", action="store_true",
                        help="after the verdicts, one line with mypy --strict's count for the target "
                             "(not a verdict; the exit status stays the verdicts')")
    parser.add_argument("--html", metavar="FILE",
                        help="also write the run as one HTML page, each item's conversation drawn as a "
                             "sequence diagram (with --watch: rewritten on every run)")
    parser.add_argument("--grade", action="store_true",
                        help="grading mode, for collected submissions and CI: a clone of the template judges the "
                             "target's starter/, each item in a sandbox of its own, every pass checked against "
                             "evidence the code under test cannot write (Linux, as root; labs/INSTRUCTORS.md)")
    parser.add_argument("--judge-commit", default="HEAD", metavar="REV",
                        help="with --grade: the template's commit that judges (default: HEAD)")
    parser.add_argument("--judge-repo", metavar="REPO",
                        help="with --grade: the template repository to clone the judge from, a path or URL "
                             "(default: the repository this judge runs from)")
    parser.add_argument("--limit", type=float, default=ITEM_LIMIT, metavar="S",
                        help=f"seconds each item may take before it is stopped (default {ITEM_LIMIT:g})")
    options = parser.parse_args(argv)
    wanted = [*options.items, *(n for n in options.only.replace(" ", "").split(",") if n)]
    numbers = {label(item.number): item.number for item in ITEMS + EXTENSION_ITEMS}
    unknown = [n for n in wanted if n.upper() not in numbers]
    if unknown:
        parser.error(f"items are 1 to {len(ITEMS)} and E1 to E{len(EXTENSION_ITEMS)}; got {', '.join(unknown)}")
    chosen = {numbers[n.upper()] for n in wanted}
    if options.hint is not None and options.hint.upper() not in HINTS:
        parser.error(f"--hint wants an item: 1 to {len(ITEMS)}, or E1 to E{len(EXTENSION_ITEMS)}; got {options.hint!r}")
    if options.html is not None:
        page_file = Path(options.html)
        if page_file.is_dir() or not page_file.resolve().parent.is_dir():
            parser.error(f"--html wants a file in a directory that exists; got {options.html!r}")
    if options.grade and (options.watch or options.types or options.hint is not None):
        parser.error("--grade judges a submission once: it does not go with --watch, --types or --hint")
    if not 0 < options.limit < 3600:
        parser.error(f"--limit wants seconds between 0 and 3600; got {options.limit:g}")
    options.chosen = chosen
    return options


def not_judged(items: List[Item], outcome: Outcome) -> List[Verdict]:
    """Verdicts for the items the worker never reported: ERROR, with the reason."""
    seen = {v.number for v in outcome.verdicts}
    why = outcome.problems[0] if outcome.problems else "the worker ended without judging it"
    return [Verdict(i.number, i.id, i.title, "error", 0.0, f"not judged: {why}") for i in items
            if i.number not in seen]


def run(options: argparse.Namespace) -> int:
    began = time.perf_counter()
    # Nothing chosen: the nine (and E1-E11 with --extensions); otherwise just those chosen.
    items: List[Item] = [i for i in ITEMS + EXTENSION_ITEMS
                         if (i.number in options.chosen) or (i.number <= len(ITEMS) and not options.chosen)
                         or (i.number > len(ITEMS) and options.extensions)]
    style = Style(sys.stdout)
    live = style.live and not options.json
    shown: List[int] = []
    waiting = {"since": time.perf_counter()}

    def tick() -> None:
        item = next((i for i in items if i.number not in shown), None)
        if item is None or not shown and not waiting.get("started"):
            return
        doing = f"waiting on {item.waits}" if item.waits else item.title
        elapsed = time.perf_counter() - waiting["since"]
        text = f"{label(item.number):>2} ....  {elapsed:4.1f} s (gives up at {options.limit:g} s)  {doing}"
        sys.stdout.write("\r" + text[:WIDTH].ljust(WIDTH))
        sys.stdout.flush()

    def on_event(kind: str, so_far: Outcome) -> None:
        if kind == "start":
            waiting["since"] = time.perf_counter()
            if not options.json and not waiting.get("started"):  # once (grading mode starts a worker an item)
                print(f"MCP client lab · {'grading' if options.grade else 'checking'} {visible(so_far.display)} · "
                      f"{visible(so_far.model)}", flush=True)
            waiting["started"] = waiting["since"]
        elif kind == "verdict" and not options.json:
            verdict = so_far.verdicts[-1]
            if live:
                sys.stdout.write("\r" + " " * WIDTH + "\r")
            print(render(verdict, style, options.trace, so_far.outputs.get(verdict.number, "")), flush=True)
            shown.append(verdict.number)
            waiting["since"] = time.perf_counter()

    judge = grading.judge_items if options.grade else self_check
    outcome, facts = judge(options, items, on_event, tick if live else None)
    if live:
        sys.stdout.write("\r" + " " * WIDTH + "\r")
    if outcome.load_error is not None and not outcome.verdicts:
        if options.html is not None:  # a page left as it was would still show the last run's verdicts
            write_page(options, [], outcome, time.perf_counter() - began,
                       f"cannot judge: {outcome.load_error}")
        return cannot_judge(options, outcome, facts)
    verdicts = outcome.verdicts + not_judged(items, outcome)
    status = exit_status(verdicts, outcome.problems)
    if options.html is not None:
        write_page(options, verdicts, outcome, time.perf_counter() - began)
    types = type_count(target_directory(options.target)) if options.types else None
    if options.json:
        chose_extensions = options.extensions or any(i.number > len(ITEMS) for i in items)
        report = json_report(options.target, outcome, verdicts, chose_extensions, options.trace, facts)
        if types is not None:
            report["types"] = types.to_json()
        print(json.dumps(report, indent=2))
        if options.html is not None:  # on stderr: --json stays one document
            print(page_written(options), file=sys.stderr)
        return status
    for verdict in verdicts[len(outcome.verdicts):]:
        print(render(verdict, style))
    for line in runner_lines(outcome, style):
        print(line)
    print(summary(verdicts, time.perf_counter() - began, style, outcome.problems))
    if options.html is not None:
        print(page_written(options))
    if types is not None:
        print(types.line(options.target if options.target in ("starter", "solution") else options.target))
    if status == 0 and len([v for v in verdicts if v.number <= len(ITEMS)]) == len(ITEMS):
        print(next_steps(options.target if options.target in ("starter", "solution") else "starter"))
    return status


def self_check(options: argparse.Namespace, items: List[Item], on_event: Callable[[str, Outcome], None],
               on_idle: Optional[Callable[[], None]]) -> Tuple[Outcome, Dict[str, Any]]:
    """The items in one worker: the learner's own check of their own work."""
    facts = run_facts(target_directory(options.target))
    request: Dict[str, Any] = {"items": [i.number for i in items], "limit": options.limit}
    with tempfile.TemporaryDirectory(prefix="mcp-lab-run-") as lab_dir:
        # The learner's files, taken once (checks.intake) into a package of the run's own,
        # which the worker imports; and each region judged on its own code: the copies
        # are made here, where reading the reference is allowed (checks.hybrid).
        try:
            own = taken(options.target, Path(lab_dir) / "package")
        except IntakeError as refused:
            return Outcome(load_error=str(refused)), facts
        request.update(target=str(own), shown=str(target_directory(options.target).resolve()),
                       regions=prepare(own, {region_of(i) for i in items}, Path(lab_dir) / "regions"))
        return run_isolated(request, lab_dir, on_event, on_idle), facts


def run_facts(directory: Path) -> Dict[str, Any]:
    """What a report says of the run itself: the commit the target is checked out
    at (None outside a git repository) and when the run began, in UTC."""
    return {"commit": commit_of(directory.resolve()),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def taken(target: str, into: Path) -> Path:
    """The target's files as the intake takes them, placed in `into` beside the
    reference's layers: the package the worker imports."""
    directory = target_directory(target)
    if not (directory / "__init__.py").is_file():
        raise IntakeError(f"--target {target}: not 'starter', 'solution' or a package directory")
    return place(read_files(directory.resolve()), into)


def page_written(options: argparse.Namespace) -> str:
    """Where the page went, as a link a terminal can open."""
    return f"page written to {Path(options.html).resolve().as_uri()}"


def write_page(options: argparse.Namespace, verdicts: List[Verdict], outcome: Outcome, took: float,
               judged: Optional[str] = None) -> None:
    """The page, written whole and then renamed into place, so a browser that
    reloads while a run ends never reads half of it (`judged`: the line that says
    why nothing was judged, in place of the summary)."""
    from checks.page import about_run, page  # only a run asked for a page pays for building one

    plain = Style(io.StringIO())
    text = page(f"MCP client lab · {options.target}", judged or summary(verdicts, took, plain, outcome.problems),
                verdicts, outcome.problems, about_run(options.target, target_directory(options.target)))
    write_whole(Path(options.html), text)


def cannot_judge(options: argparse.Namespace, outcome: Outcome, facts: Dict[str, Any]) -> int:
    message = outcome.load_error or ""
    if options.json:
        report: Dict[str, Any] = {"target": options.target, **facts, "status": "error", "message": message,
                                  "exit_status": 2, "items": [], "problems": outcome.problems,
                                  "killed": outcome.killed}
        if outcome.outside.strip():
            report["output"] = outcome.outside.splitlines()
        print(json.dumps(report, indent=2))
    else:
        for line in runner_lines(outcome, Style(sys.stderr)):
            print(line, file=sys.stderr)
        print(f"cannot judge: {visible(message)}", file=sys.stderr)
    if options.html is not None:
        print(page_written(options), file=sys.stderr)
    return 2


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
        from checks.watch import watch
        directory = target_directory(options.target)
        style = Style(sys.stdout)
        forwarded = [*(label(n) for n in sorted(options.chosen)), "--target", str(directory), "--trace",
                     *(["--extensions"] if options.extensions else []),
                     *(["--html", str(Path(options.html).resolve())] if options.html else [])]

        def show(report: Dict[str, Any]) -> None:
            if report.get("message"):
                print(f"cannot judge: {report['message']}")
            verdicts = [v for v in map(verdict_from_json, report.get("items", [])) if v is not None]
            for verdict in verdicts:
                print(render(verdict, style))
            if verdicts:
                print(summary(verdicts, sum(v.duration for v in verdicts), style))
        return watch(directory, forwarded, show, sys.stdout, clear=style.live)
    if options.grade and not grading.inside_clone():  # first the judge's clone, which runs again from there
        return grading.enter(options, list(sys.argv[1:] if argv is None else argv))
    reaper.become_subreaper()  # whatever the code under test starts stays ours to end
    for number in (signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)):
        signal.signal(number, stop)
    try:
        return run(options)
    except KeyboardInterrupt:
        print("\nstopped (Ctrl-C); the worker and everything it started were ended", file=sys.stderr)
        return 130
    except Stopped as signalled:
        print(f"\nstopped ({signal.Signals(signalled.signal).name}); the worker and everything it "
              "started were ended", file=sys.stderr)
        return 128 + signalled.signal


class Stopped(BaseException):
    """SIGTERM or SIGHUP: end the run as Ctrl-C would, cleaning up on the way out."""

    def __init__(self, number: int) -> None:
        super().__init__(number)
        self.signal = number


def stop(number: int, frame: Any) -> None:
    raise Stopped(number)
