"""`python -m checks.gradebook REPORT.json... [--html class.html] [--csv grades.csv]`:
a whole class at once, from each learner's `python -m checks --json` report.

One row per learner: the score ("core 9/9 · extensions 3/11"), whether the run
was judged (and if not, why), the commit and date the report carries, and one
column per item headed by its title. The CSV keeps the lab's own item order, so
a spreadsheet's formulas keep pointing at the same columns from one export to
the next; the page puts the items the class fails most first (ties in item
order), so an instructor sees where to spend the next lesson before who to
chase. Each cell of the page links to that learner's page anchor
(`report.html#item-3`) when a page sits beside the report (the same name with
`.html`), as the Classroom workflow in labs/ keeps them. A learner is named by
the report's file name, or by its folder when the file is called report.json
(one folder per learner, as artifacts are downloaded).

Reports are read as hostile (checks/gradebook_row.py): a file that is not a
bounded, regular, readable report of this lab is named and skipped, never a
traceback: one broken artifact must not hide the other twenty-nine. Every text
a report or a file name brings is shown with its control and bidirectional
characters as escapes, and a CSV cell that a spreadsheet would run as a formula
(one starting with =, +, -, @, a tab or a carriage return) is written as text.
Exit 0 when something was written, 2 when no report could be read or the
arguments cannot be used (one line on stderr).
"""

from __future__ import annotations

import argparse
import csv
import html
import io
import os
import re
import sys
from pathlib import Path
from typing import Callable, List, NoReturn, Optional, Sequence, Tuple, Union
from urllib.parse import quote

from checks.files import write_whole
from checks.gradebook_row import (CORE, EXTENSIONS, FAIL, NOT_JUDGED, NOT_RUN, PASS, TITLES, TWICE, Learner, read,
                                  shown)
from checks.items import label

NUMBERS = CORE + EXTENSIONS  # every item of the lab, in its own order: the CSV's columns
WORDS = {PASS: "PASS", FAIL: "FAIL", NOT_JUDGED: "not judged", TWICE: "listed twice", NOT_RUN: "–"}
CLASSES = {PASS: "pass", FAIL: "fail", NOT_JUDGED: "unjudged", TWICE: "unjudged", NOT_RUN: "notrun"}
# OWASP's advice for CSV injection: a cell a spreadsheet could read as a formula starts with a
# quote. Leading blanks are looked past too, since some spreadsheets trim them on import.
FORMULA = re.compile(r"\s*[=+\-@]|[\t\r]")


def heading(number: int) -> str:
    return f"{label(number)} {TITLES[number]}"


def failed_by(learners: Sequence[Learner], number: int) -> int:
    """How many learners failed item `number` (a run not judged, or not run, failed nothing)."""
    return sum(learner.status(number) == FAIL for learner in learners)


def order(learners: Sequence[Learner]) -> List[int]:
    """Item numbers for the page, the most failed first, then in the items' own order."""
    return sorted(NUMBERS, key=lambda number: -failed_by(learners, number))


def text_cell(value: str) -> str:
    cell = shown(value, 1000)
    return "'" + cell if FORMULA.match(cell) else cell


def to_csv(learners: Sequence[Learner]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL)  # quoted as OWASP advises, with text_cell
    writer.writerow([text_cell(name) for name in ["learner", "judged", "score", "core passed", "extensions passed",
                                                  "commit", "date", "exit status", *map(heading, NUMBERS)]])
    for learner in learners:
        judged = learner.unjudged is None
        row: List[Union[str, int]] = [
            text_cell(learner.name), text_cell(learner.judged()), text_cell(learner.score()),
            learner.passed(CORE) if judged else "",
            learner.passed(EXTENSIONS) if judged and learner.ran_extensions else "",
            text_cell(learner.commit or "not in report"), text_cell(learner.date or "not in report"),
            learner.exit_status, *(text_cell(learner.status(number)) for number in NUMBERS)]
        writer.writerow(row)
    return out.getvalue()


def esc(text: str) -> str:
    return html.escape(shown(text, 1000), quote=True)


def link(page: Path, base: Path) -> str:
    """The page as seen from the gradebook's folder: relative, so the two can move together."""
    try:
        return Path(os.path.relpath(page.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive (Windows): only an absolute link works
        return page.resolve().as_uri()


def cell(learner: Learner, number: int, base: Path) -> str:
    status = learner.status(number)
    word = WORDS[status]
    if learner.page is None or status == NOT_RUN:
        return f'<td class="{CLASSES[status]}">{word}</td>'
    href = quote(link(learner.page, base), safe="/:.-_~", errors="surrogateescape")  # a name not UTF-8: its bytes
    return f'<td class="{CLASSES[status]}"><a href="{esc(href)}#item-{label(number)}">{word}</a></td>'


def fact_cell(value: Optional[str]) -> str:
    return f'<td class="fact">{esc(value)}</td>' if value else '<td class="missing">not in report</td>'


def row(learner: Learner, numbers: Sequence[int], base: Path) -> str:
    judged = learner.judged()
    score = " · ".join(f'<span class="part">{esc(part)}</span>' for part in learner.score().split(" · "))
    return (f'<tr><th>{esc(learner.name)}</th><td>{score}</td>'
            f'<td title="{esc(judged)}">{esc(judged.split(":", 1)[0])}</td>'
            f"{fact_cell(learner.commit)}{fact_cell(learner.date)}"
            + "".join(cell(learner, number, base) for number in numbers) + "</tr>")


def to_html(learners: Sequence[Learner], skipped: Sequence[str], base: Path) -> str:
    numbers = order(learners)
    head = "".join(f'<th class="item"><b>{label(number)}</b> {esc(TITLES[number])}</th>' for number in numbers)
    rows = [row(learner, numbers, base) for learner in learners]
    counts = "".join(f"<td>{failed_by(learners, number)}</td>" for number in numbers)
    unjudged = "".join(f"<li><b>{esc(learner.name)}</b>: {esc(learner.judged())}</li>"
                       for learner in learners if learner.judged() != "yes")
    notes = "".join(f"<li>{esc(line)}</li>" for line in skipped)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>MCP client lab: the class</title>
<style>
body {{ font: 14px/1.45 system-ui, sans-serif; margin: 1em; color: #111827; }}
.scroll {{ overflow-x: auto; }} table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #d1d5db; padding: 0.2em 0.5em; text-align: center; }}
th:first-child {{ text-align: left; }} a {{ color: inherit; }}
th.item {{ font-weight: normal; font-size: 12px; min-width: 7em; max-width: 10em; vertical-align: bottom; }}
.pass {{ color: #15803d; }} .fail {{ color: #b91c1c; font-weight: bold; }}
.unjudged {{ color: #a16207; font-style: italic; }} .notrun, .missing {{ color: #6b7280; }}
.part, .fact, .missing {{ white-space: nowrap; }}
</style></head><body>
<h1>MCP client lab: {len(learners)} learner(s)</h1>
<p>Items the class fails most come first. Each verdict links to that learner's page, where one was kept.
A run the runner could not judge shows no verdict, only why (below).</p>
<div class="scroll"><table>
<tr><th>learner</th><th>score</th><th>judged</th><th>commit</th><th>date</th>{head}</tr>
{chr(10).join(rows)}
<tr><th>failed by</th><td></td><td></td><td></td><td></td>{counts}</tr>
</table></div>
{f"<h2>Not judged, in whole or in part</h2><ul>{unjudged}</ul>" if unjudged else ""}
{f"<h2>Skipped</h2><ul>{notes}</ul>" if notes else ""}
</body></html>
"""


class Parser(argparse.ArgumentParser):
    """argparse, with its complaint on one line (usage follows --help)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"gradebook: {message} (see python -m checks.gradebook --help)\n")


def unusable(args: argparse.Namespace) -> Optional[str]:
    """Why the output options cannot be used as given, or None."""
    reports = {os.path.realpath(given) for given in args.reports}
    outputs = [(option, value) for option, value in (("--csv", args.csv), ("--html", args.html)) if value]
    for option, value in outputs:
        if os.path.isdir(value):
            return f"{option} wants a file, and '{shown(value)}' is a folder"
        if not os.path.isdir(os.path.dirname(os.path.realpath(value))):
            return f"{option} wants a file in a folder that exists; got '{shown(value)}'"
        if os.path.realpath(value) in reports:
            return f"{option} '{shown(value)}' is one of the reports; writing it would lose that report"
    if len(outputs) == 2 and os.path.realpath(outputs[0][1]) == os.path.realpath(outputs[1][1]):
        return "--csv and --html name the same file; one would overwrite the other"
    return None


def main(argv: Sequence[str]) -> int:
    parser = Parser(prog="python -m checks.gradebook",
                    description="a class's python -m checks --json reports as one table")
    parser.add_argument("reports", nargs="+", metavar="REPORT.json")
    parser.add_argument("--html", metavar="FILE", help="write the table as a page")
    parser.add_argument("--csv", metavar="FILE", help="write the table as CSV (without --html or --csv: to stdout)")
    args = parser.parse_args(argv)
    wrong = unusable(args)
    if wrong:
        print(f"gradebook: {wrong}", file=sys.stderr)
        return 2
    learners: List[Learner] = []
    skipped: List[str] = []
    for given in args.reports:
        learner, why = read(Path(given))
        if learner is None:
            skipped.append(f"{given} {why}")
            print(f"gradebook: skipped {shown(given)}: it {why}", file=sys.stderr)
        else:
            learners.append(learner)
    if not learners:
        print("gradebook: no report could be read; nothing written", file=sys.stderr)
        return 2
    learners.sort(key=lambda learner: learner.name.lower())
    for learner in learners:
        verdict, _, why = learner.judged().partition(": ")
        if verdict != "yes":
            said = "not judged" if verdict == "no" else "judged in part"
            print(f"gradebook: {shown(learner.name)} {said}: {shown(why, 400)}", file=sys.stderr)
    written: List[str] = []
    outputs: List[Tuple[Optional[str], Callable[[], str]]] = [
        (args.csv, lambda: to_csv(learners)),
        (args.html, lambda: to_html(learners, skipped, Path(args.html or ".").resolve().parent))]
    for option, text in outputs:
        if option:
            try:
                write_whole(Path(option), text())
            except OSError as exc:
                print(f"gradebook: cannot write {shown(option)}: {exc.strerror or exc}", file=sys.stderr)
                return 2
            written.append(option)
    if not written:
        sys.stdout.write(to_csv(learners))
    for option in written:
        print(f"gradebook: {len(learners)} learner(s) written to {Path(option).resolve().as_uri()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
