"""`python -m checks --html FILE`: the run as one page, each item's conversation
drawn as a sequence diagram.

One self-contained file (no script, no outside resource), readable offline,
on a phone as on a desktop, and attachable to a grade. At the top: when the run
was made, on which target, commit, Python and lab version, and a table of the
items, those that need attention first, each linked to its section. Then a
legend, and per item the verdict, its message, and the messages between the
client and each server from the servers' own accounts, as a diagram
(checks.page_parts), and all of them indented under "the messages in full".

Everything here that came from a server or the code under test is escaped
(and its control characters shown as escapes): text, never markup.
"""

from __future__ import annotations

import json
import platform
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from checks.harness import Verdict
from checks.intake import commit_of
from checks.items import label
from checks.page_parts import Fold, diagram, esc, esc_lines, folded, legend, raised_in
from checks.target import ROOT

__all__ = ["Fold", "diagram", "folded", "page"]  # the diagram's parts, as the tests have always imported them

# The page never scrolls sideways: a word too long for its line breaks, and each diagram
# (drawn at its own size, so its text keeps its size) scrolls in a box of its own.
STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; padding: 0 12px; max-width: 1100px;
       color: #111827; overflow-wrap: break-word; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
.pass { color: #15803d; } .fail { color: #b91c1c; } .error { color: #a16207; }
.badge { font-weight: 700; } pre { background: #f3f4f6; padding: .6em; white-space: pre-wrap; }
table { border-collapse: collapse; margin: .6em 0; }
th, td { text-align: left; padding: .15em .7em .15em 0; vertical-align: top; }
.summary td.time, .summary td.badge { white-space: nowrap; } .summary td.time { text-align: right; }
.about th { font-weight: 600; color: #4b5563; white-space: nowrap; } .diagram { overflow-x: auto; margin: .5em 0; }
svg { display: block; max-width: none; background: #fff; }
svg text { font: 12px ui-monospace, monospace; }
.legend { list-style: none; padding: 0; columns: 2 22em; font-size: .93em; } .legend li { margin: .15em 0; }
.legend svg { display: inline-block; vertical-align: middle; } .mark { display: inline-block; width: 48px;
  text-align: center; font-size: 16px; } details pre { max-height: 30em; overflow: auto; }
pre.full { word-break: break-all; } pre.full b { word-break: normal; }  /* JSON wraps as a terminal does */
"""


def anchor(number: int) -> str:
    return f"item-{label(number)}"


def in_full(events: Sequence[Dict[str, Any]]) -> str:
    """Every message of the item as it went, indented, each under when and which way."""
    if not events:
        return ""
    return (f"<details><summary>the messages in full ({len(events)})</summary>"
            f"<pre class=\"full\">{chr(10).join(one_in_full(e) for e in events)}</pre></details>")


def one_in_full(event: Dict[str, Any]) -> str:
    when = f"+{float(event.get('ms', 0)):.1f} ms  "
    if event.get("kind") == "omitted":
        return f"<b>{esc(when)}⋯ {esc(event.get('label'))}</b>\n"
    return f"<b>{esc(when + heading(event))}</b>\n{esc_lines(indented(str(event.get('full', ''))))}\n"


def heading(event: Dict[str, Any]) -> str:
    """Which way a message went, in words: the direction, not the server, is what a reader looks for."""
    server, toward, kind = event.get("server"), event.get("toward"), event.get("kind")
    if toward == "server":
        return f"client → {server} · to the server{' (not JSON)' if kind == 'not-json' else ''}"
    if toward == "client":
        return f"{server} → client · to the client"
    if kind == "start":
        return f"{server} · started as {event.get('label')}"
    return f"{server} · at the server"


def indented(full: str) -> str:
    """A message's JSON indented; a line that was not JSON (or was cut short) as it came."""
    try:
        return json.dumps(json.loads(full), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser goes
        return full


def section(verdict: Verdict) -> str:
    name = label(verdict.number)
    where = ""
    if verdict.where is not None:
        where = f"<p>look at: <code>{esc(verdict.where.file)}</code>, <code>{esc(verdict.where.function)}</code></p>"
    return (f'<section id="{anchor(verdict.number)}"><h2><span class="badge {esc(verdict.status)}">'
            f'{esc(verdict.status.upper())}</span> {esc(name)}. {esc(verdict.title)} '
            f'<small>({verdict.duration:.2f} s)</small></h2>'
            f'<pre>{esc_lines(verdict.message)}</pre>{where}'
            f'{diagram(verdict.wire, anchor(verdict.number), raised_in(verdict.message))}{in_full(verdict.wire)}</section>')


@dataclass(frozen=True)
class About:
    """What a page says of its run at the top: when, on what, with what (an
    instructor with thirty pages tells them apart by these)."""

    date: str
    target: str
    commit: Optional[str]  # None: the target is not in a git checkout, or its HEAD could not be read
    python: str
    version: str  # the lab's, from its pyproject.toml




def about_run(target: str, directory: Path) -> About:
    """The header's facts for a run of `target` (the code in `directory`)."""
    now = datetime.now().astimezone()
    commit = commit_of(directory)
    return About(date=f"{now:%Y-%m-%d %H:%M %Z}", target=f"{target} ({directory})", commit=commit and commit[:12],
                 python=f"{platform.python_version()} ({platform.python_implementation()})", version=lab_version())


def lab_version() -> str:
    """The version in the lab's pyproject.toml (the tree that runs, not whichever copy pip installed)."""
    try:
        text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    project = text.split("[project]", 1)[-1].split("\n[", 1)[0]
    found = re.search(r'^version\s*=\s*"([^"]+)"', project, re.M)
    return found.group(1) if found else "unknown"


def header(title: str, summary: str, about: Optional[About]) -> str:
    facts = [] if about is None else [
        ("date", about.date), ("target", about.target), ("commit", about.commit or "none (not a git checkout)"),
        ("Python", about.python), ("lab version", about.version)]
    rows = "".join(f"<tr><th>{esc(name)}</th><td>{esc(value)}</td></tr>" for name, value in facts)
    return (f'<header><h1>{esc(title)}</h1><p>{esc(summary)}</p>'
            f'{f"<table class=about>{rows}</table>" if rows else ""}</header>')


ATTENTION = {"fail": 0, "error": 1, "pass": 2}  # the summary's order: what needs attention first


def summary_table(verdicts: Sequence[Verdict]) -> str:
    """One row per item, failures first, the status in words, each linked to its item."""
    order = sorted(verdicts, key=lambda v: (ATTENTION.get(v.status, 1), v.number))
    rows = "".join(f'<tr><td class="badge {esc(v.status)}">{esc(v.status.upper())}</td>'
                   f'<td><a href="#{anchor(v.number)}">{esc(label(v.number))}</a></td><td>{esc(v.title)}</td>'
                   f'<td class="time">{v.duration:.2f} s</td></tr>' for v in order)
    return ('<table class="summary"><tr><th>result</th><th>item</th><th>what it judges</th><th>time</th></tr>'
            f'{rows}</table>')


def page(title: str, summary: str, verdicts: Sequence[Verdict], problems: Sequence[str] = (),
         about: Optional[About] = None) -> str:
    """The whole report as one HTML document."""
    trouble = "".join(f"<li>{esc(p)}</li>" for p in problems)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
            f"{header(title, summary, about)}{summary_table(verdicts)}"
            f"{f'<ul class=fail>{trouble}</ul>' if trouble else ''}{legend()}"
            f"{''.join(section(v) for v in verdicts)}</body></html>\n")
