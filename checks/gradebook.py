"""`python -m checks.gradebook REPORT.json... [--html class.html] [--csv grades.csv]`:
a whole class at once, from each learner's `python -m checks --json` report.

One row per learner, one column per item, the items the class fails most
first (ties in item order), so an instructor sees where to spend the next
lesson before who to chase. Each cell links to that learner's page anchor
(`report.html#item-3`) when a page sits beside the report (the same name with
`.html`), as the Classroom workflow in labs/ keeps them. A learner is named by
the report's file name, or by its folder when the file is called report.json
(one folder per learner, as artifacts are downloaded).

A file that is not JSON, or not a report of this lab, is named and skipped,
never a traceback: one broken artifact must not hide the other twenty-nine.
Exit 0 when something was written, 2 when no report could be read.
"""

from __future__ import annotations

import argparse
import csv
import html
import io
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

from checks.visible import visible

SCHEMA = Path(__file__).resolve().parent / "report.schema.json"
GENERIC = {"report", "checks", "results", "self-check"}  # file names that say nothing about who
WORDS = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}


@dataclass
class Learner:
    name: str
    report: Path
    page: Optional[Path]
    cells: Dict[str, str] = field(default_factory=dict)  # item label ("3", "E2") -> status
    exit_status: int = 0

    @property
    def passed(self) -> int:
        return sum(status == "pass" for status in self.cells.values())


def learner_name(path: Path) -> str:
    return path.parent.name if path.stem.lower() in GENERIC and path.parent.name else path.stem


def read(path: Path) -> Tuple[Optional[Learner], Optional[str]]:
    """A learner from one report, or why the file was skipped."""
    import jsonschema

    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot be read ({type(exc).__name__}: {exc})"
    except ValueError as exc:
        return None, f"is not JSON ({exc})"
    try:
        jsonschema.validate(report, json.loads(SCHEMA.read_text(encoding="utf-8")))
    except jsonschema.ValidationError as exc:
        return None, f"is not a python -m checks --json report ({exc.message[:120]})"
    page = path.with_suffix(".html")
    learner = Learner(learner_name(path), path, page if page.is_file() else None,
                      exit_status=int(report["exit_status"]))
    for item in [*report["items"], *report.get("extensions", [])]:
        learner.cells[str(item.get("name") or item["number"])] = str(item["status"])
    return learner, None


def order(learners: Sequence[Learner]) -> List[str]:
    """Item labels, the most failed first, then in the items' own order."""
    labels = sorted({label for learner in learners for label in learner.cells}, key=item_key)
    failing = {label: sum(learner.cells.get(label, "pass") != "pass" for learner in learners) for label in labels}
    return sorted(labels, key=lambda label: -failing[label])


def item_key(label: str) -> Tuple[int, int]:
    return (1, int(label[1:])) if label.startswith("E") else (0, int(label))


def to_csv(learners: Sequence[Learner], labels: Sequence[str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["learner", "passed", "judged", "exit_status", *labels])
    for learner in learners:
        writer.writerow([learner.name, learner.passed, len(learner.cells), learner.exit_status,
                         *(learner.cells.get(label, "") for label in labels)])
    return out.getvalue()


def esc(text: Any) -> str:
    return html.escape(visible(str(text)), quote=True)


def link(page: Path, base: Path) -> str:
    """The page as seen from the gradebook's folder: relative, so the two can move together."""
    try:
        return Path(os.path.relpath(page.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive (Windows): only an absolute link works
        return page.resolve().as_uri()


def cell(learner: Learner, label: str, base: Path) -> str:
    status = learner.cells.get(label)
    if status is None:
        return "<td>–</td>"
    word = WORDS.get(status, esc(status))
    if learner.page is None:
        return f'<td class="{esc(status)}">{word}</td>'
    href = quote(link(learner.page, base), safe="/:.-_~")
    return f'<td class="{esc(status)}"><a href="{esc(href)}#item-{esc(label)}">{word}</a></td>'


def to_html(learners: Sequence[Learner], labels: Sequence[str], skipped: Sequence[str], base: Path) -> str:
    failing = {label: sum(learner.cells.get(label, "pass") != "pass" for learner in learners) for label in labels}
    head = "".join(f"<th>{esc(label)}</th>" for label in labels)
    rows = [f"<tr><th>{esc(learner.name)}</th><td>{learner.passed}/{len(learner.cells)}</td>"
            + "".join(cell(learner, label, base) for label in labels) + "</tr>" for learner in learners]
    counts = "".join(f"<td>{failing[label]}</td>" for label in labels)
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
.pass {{ color: #15803d; }} .fail {{ color: #b91c1c; font-weight: bold; }} .error {{ color: #a16207; }}
</style></head><body>
<h1>MCP client lab: {len(learners)} learner(s)</h1>
<p>Items the class fails most come first. Each verdict links to that learner's page, where one was kept.</p>
<div class="scroll"><table>
<tr><th>learner</th><th>passed</th>{head}</tr>
{chr(10).join(rows)}
<tr><th>failed by</th><td></td>{counts}</tr>
</table></div>
{f"<h2>Skipped</h2><ul>{notes}</ul>" if notes else ""}
</body></html>
"""


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m checks.gradebook",
                                     description="a class's python -m checks --json reports as one table")
    parser.add_argument("reports", nargs="+", metavar="REPORT.json")
    parser.add_argument("--html", metavar="FILE", help="write the table as a page")
    parser.add_argument("--csv", metavar="FILE", help="write the table as CSV")
    args = parser.parse_args(argv)
    learners: List[Learner] = []
    skipped: List[str] = []
    for given in args.reports:
        learner, why = read(Path(given))
        if learner is None:
            skipped.append(f"{given} {why}")
            print(f"gradebook: skipped {given}: it {why}", file=sys.stderr)
        else:
            learners.append(learner)
    if not learners:
        print("gradebook: no report could be read; nothing written", file=sys.stderr)
        return 2
    learners.sort(key=lambda learner: learner.name.lower())
    labels = order(learners)
    written: List[str] = []
    outputs: List[Tuple[Optional[str], Callable[[], str]]] = [
        (args.csv, lambda: to_csv(learners, labels)),
        (args.html, lambda: to_html(learners, labels, skipped, Path(args.html or ".").resolve().parent))]
    for option, text in outputs:
        if option:
            try:
                Path(option).write_text(text(), encoding="utf-8")
            except OSError as exc:
                print(f"gradebook: cannot write {option}: {exc.strerror or exc}", file=sys.stderr)
                return 2
            written.append(option)
    if not written:
        sys.stdout.write(to_csv(learners, labels))
    for option in written:
        print(f"gradebook: {len(learners)} learner(s) written to {Path(option).resolve().as_uri()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
