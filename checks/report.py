"""What the runner shows: verdicts as text for a person, or one JSON document.

Everything that came from the code under test (messages quoting it, what it
printed) passes through `visible` before it reaches a terminal, and is shown
under a label that says where it came from, so it can never pass for the
runner's own lines. The JSON document is built here only, from the runner's
own account of the run.
"""

from __future__ import annotations

import textwrap
from typing import Any, Dict, List, Optional

from checks.items import EXTENSION_ITEMS, ITEMS, label
from checks.harness import Verdict
from checks.outcome import Outcome
from checks.style import Style
from checks.visible import visible, visible_lines

WIDTH = 96
TITLE_WIDTH = 9 + max(len(item.title) for item in ITEMS + EXTENSION_ITEMS)
FAILED_TRACE_LINES = 12
OUTPUT_LINES = 12  # lines of a learner's prints shown under an item (all of them in --json)
MEANING = {0: "all passed", 1: "some items failed", 2: "the harness could not judge"}


def exit_status(verdicts: List[Verdict], problems: Optional[List[str]] = None) -> int:
    if problems or any(v.status == "error" for v in verdicts):
        return 2
    return 0 if all(v.status == "pass" for v in verdicts) else 1


def render(verdict: Verdict, style: Style, full_trace: bool = False, printed: str = "") -> str:
    word, colour = {"pass": ("PASS", "green"), "fail": ("FAIL", "red"),
                    "error": ("ERROR", "yellow")}[verdict.status]
    head = f"{label(verdict.number):>2} {word:<5} {visible(verdict.title)}"
    padded = f"{head:<{TITLE_WIDTH}} {verdict.duration:5.2f} s"
    lines = [padded.replace(word, style.paint(word, colour, "bold"), 1)]
    if verdict.status != "pass":
        for line in verdict.message.splitlines():
            tag, sep, _ = line.partition(": ")
            indent = " " * (9 + len(tag) + 2) if sep and len(tag) <= 8 else " " * 11
            lines.append(textwrap.fill(visible(line), WIDTH, initial_indent=" " * 9,
                                       subsequent_indent=indent, break_on_hyphens=False,
                                       break_long_words=False))  # an identifier stays whole
        said = any(line.startswith("edit: ") for line in verdict.message.splitlines())
        if verdict.where and verdict.where.exercise is None and not said:  # one place, said once
            lines.append(f"         look at: {verdict.where.file}, {verdict.where.function}")
    elif verdict.message:  # the evidence behind a pass, on one line (never cut mid-name)
        lines.append(style.paint(" " * 9 + visible(" ".join(verdict.message.split())), "dim"))
    lines += printed_block(printed, "your code printed", style)
    shown = verdict.trace if full_trace else (verdict.trace[-FAILED_TRACE_LINES:]
                                              if verdict.status != "pass" else [])
    if shown:
        more = len(verdict.trace) - len(shown)
        lines.append(style.paint(f"         wire{f' (last {len(shown)} lines; --trace for all)' if more else ''}:",
                                 "dim"))
        lines += [style.paint(f"           {visible(line)}", "dim") for line in shown]
    return "\n".join(lines)


def printed_block(printed: str, what: str, style: Style, indent: str = "         ") -> List[str]:
    """The learner's output, labelled and made harmless: each line behind a bar."""
    if not printed.strip():
        return []
    lines = visible_lines(printed.rstrip("\n"), OUTPUT_LINES)
    return [style.paint(f"{indent}{what} ({len(printed.splitlines())} line(s); not part of the report):",
                        "cyan")] + [f"{indent}  | {line}" for line in lines]


def summary(verdicts: List[Verdict], seconds: float, style: Style, problems: Optional[List[str]] = None) -> str:
    nine = [v for v in verdicts if v.number <= len(ITEMS)]
    extra = [v for v in verdicts if v.number > len(ITEMS)]
    passed = sum(v.status == "pass" for v in nine)
    failed = sum(v.status == "fail" for v in verdicts)
    errors = sum(v.status == "error" for v in verdicts)
    parts = [f"{passed}/{len(nine)} passed"] if nine or not extra else []
    if extra:
        parts.append(f"extensions {sum(v.status == 'pass' for v in extra)}/{len(extra)} passed")
    # The last line of a long run names what to look at, not only how many.
    if failed:
        names = ", ".join(label(v.number) for v in verdicts if v.status == "fail")
        parts.append(style.paint(f"{failed} failed ({names})", "red"))
    if errors:
        names = ", ".join(label(v.number) for v in verdicts if v.status == "error")
        parts.append(style.paint(f"{errors} not judged ({names})", "yellow"))
    status = exit_status(verdicts, problems)
    return " · ".join(parts) + f" · {seconds:.1f} s · exit {status} ({MEANING[status]})"


def runner_lines(outcome: Outcome, style: Style) -> List[str]:
    """What the runner itself has to say about the run: its problems, what it killed."""
    lines = printed_block(outcome.outside, "printed outside any item", style, indent="")
    for problem in outcome.problems:
        lines.append(style.paint("runner: ", "yellow", "bold") + visible(problem))
    if outcome.killed:
        shown = ", ".join(visible(k) for k in outcome.killed[:8])
        more = f" and {len(outcome.killed) - 8} more" if len(outcome.killed) > 8 else ""
        lines.append(style.paint("runner: ", "yellow", "bold") + f"killed: {shown}{more}")
    return lines


def json_report(target: str, outcome: Outcome, verdicts: List[Verdict], extensions: bool,
                with_trace: bool, facts: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The run as one JSON document (report.schema.json); `facts`: the run's
    own (its target's commit, its date), written at the top."""
    def item(verdict: Verdict) -> Dict[str, Any]:
        data = verdict.to_json(with_trace=with_trace)
        printed = outcome.outputs.get(verdict.number, "")
        if printed:
            data["output"] = printed.splitlines()
        if verdict.number > len(ITEMS):
            data["name"] = label(verdict.number)
        return data

    nine = [v for v in verdicts if v.number <= len(ITEMS)]
    report: Dict[str, Any] = {"target": target, **(facts or {}), "model": outcome.model.removeprefix("model: "),
                              "passed": sum(v.status == "pass" for v in nine), "total": len(nine),
                              "exit_status": exit_status(verdicts, outcome.problems),
                              "items": [item(v) for v in nine],
                              "problems": list(outcome.problems), "killed": list(outcome.killed)}
    if outcome.outside.strip():
        report["output"] = outcome.outside.splitlines()
    if extensions:
        extra = [v for v in verdicts if v.number > len(ITEMS)]
        report["extensions"] = [item(v) for v in extra]
        # Counted at the top too: "passed": 9 of 9 beside an exit status of 1 says nothing of why.
        report["extensions_passed"] = sum(v.status == "pass" for v in extra)
        report["extensions_total"] = len(extra)
    return report
