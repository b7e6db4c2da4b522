"""`python -m checks --html FILE`: the run as one page, each item's conversation
drawn as a sequence diagram.

One self-contained file (no script, no outside resource), readable offline and
attachable to a grade. Per item: the verdict, its message, and the messages
between the client and each server from the servers' journals, as arrows
between lifelines in time order, with the time on the left. Requests are solid,
replies dashed, errors red, isError results orange, notifications grey; a request
never answered is red and says so; a reply withheld (cancelled) or a server that
exited is marked on its lifeline where it happened. A run of alike messages is folded; each arrow's full message shows on
hover, and all of them under "the messages in full".

Everything here that came from a server or the code under test is escaped
(and its control characters shown as escapes): text, never markup.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Union

from checks.harness import Verdict
from checks.items import label
from checks.visible import visible

ROW = 26  # pixels per message
LANE = 190  # pixels between lifelines
LEFT = 80  # the time column
TOP = 40  # the lifelines' names
FOLD_AFTER = 4  # a run of more alike messages than this is folded
KEEP = 2  # of a folded run: the first KEEP and the last one are drawn
MAX_ROWS = 400  # rows drawn per item; the rest are counted
COLOURS = {"request": "#1f2937", "notification": "#6b7280", "reply": "#1f2937", "error": "#dc2626",
           "iserror": "#c2410c", "server-request": "#1d4ed8", "server-notification": "#6b7280",
           "not-json": "#dc2626", "dropped": "#dc2626", "exit": "#dc2626", "unanswered": "#dc2626"}
# The page never scrolls sideways: text wraps anywhere it must, and each diagram
# (drawn at its own size, so its text keeps its size) scrolls in a box of its own.
STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; padding: 0 12px; max-width: 1100px;
       color: #111827; overflow-wrap: anywhere; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
.pass { color: #15803d; } .fail { color: #b91c1c; } .error { color: #a16207; }
.badge { font-weight: 700; } pre { background: #f3f4f6; padding: .6em; white-space: pre-wrap; }
nav a { margin-right: .8em; } .diagram { overflow-x: auto; margin: .5em 0; }
svg { display: block; max-width: none; background: #fff; }
svg text { font: 12px ui-monospace, monospace; } details pre { max-height: 30em; overflow: auto; }
"""


def esc(text: Any) -> str:
    """Untrusted text as HTML text: escaped, controls made visible."""
    return html.escape(visible(str(text)), quote=True)


def esc_lines(text: Any) -> str:
    """Like esc, keeping the line breaks (for a <pre>)."""
    return "\n".join(esc(line) for line in str(text).split("\n"))


def anchor(number: int) -> str:
    return f"item-{label(number)}"


def shape(event: Dict[str, Any]) -> str:
    """What makes two messages alike for folding: who, which way, which method (not ids)."""
    return f"{event.get('server')}|{event.get('toward')}|{event.get('kind')}|" + \
        re.sub(r"#\S+|\d+", "", str(event.get("label", "")).split(" ")[0])


@dataclass(frozen=True)
class Fold:
    """A drawn row that stands for `count` alike messages with `server`: a type of
    its own, so no message (whatever keys it carries) can pass for one."""

    count: int
    server: str


Row = Union[Dict[str, Any], Fold]


def folded(events: Sequence[Dict[str, Any]]) -> List[Row]:
    """`events` with each run of more than FOLD_AFTER alike ones cut to its ends and a fold row."""
    rows: List[Row] = []
    at = 0
    while at < len(events):
        end = at
        while end + 1 < len(events) and shape(events[end + 1]) == shape(events[at]):
            end += 1
        run = events[at:end + 1]
        if len(run) > FOLD_AFTER:
            rows += [*run[:KEEP], Fold(len(run) - KEEP - 1, str(run[0].get("server"))), run[-1]]
        else:
            rows += run
        at = end + 1
    return rows


def diagram(events: Sequence[Dict[str, Any]]) -> str:
    """The conversation as an SVG sequence diagram (empty when there was none)."""
    if not events:
        return "<p>No message reached a fixture server in this item.</p>"
    servers: List[str] = []
    for event in events:
        if str(event.get("server")) not in servers and event.get("kind") != "omitted":
            servers.append(str(event.get("server")))
    answered = {(e.get("server"), e.get("id")) for e in events if e.get("toward") == "client"}
    rows = folded([{**e, "label": f"{e.get('label')}: never answered", "kind": "unanswered"}
                   if e.get("kind") == "request" and (e.get("server"), e.get("id")) not in answered
                   and not str(e.get("label")).startswith("subscriptions/listen") else e  # open by design
                   for e in events])
    hidden = max(0, len(rows) - MAX_ROWS)
    rows = rows[:MAX_ROWS]
    x = {"client": LEFT + 40, **{name: LEFT + 40 + LANE * (i + 1) for i, name in enumerate(servers)}}
    width = LEFT + 40 + LANE * len(servers) + 150
    height = TOP + ROW * (len(rows) + 1) + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img" aria-label="the conversation as a sequence diagram">',
             '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>']
    for name, at in x.items():
        parts.append(f'<text x="{at}" y="{TOP - 18}" text-anchor="middle" font-weight="bold">{esc(name)}</text>'
                     f'<line x1="{at}" y1="{TOP - 10}" x2="{at}" y2="{height - 5}" stroke="#9ca3af" '
                     f'stroke-dasharray="2,3"/>')
    parts += [drawn(row, TOP + ROW * (i + 1), x) for i, row in enumerate(rows)]
    if hidden:
        parts.append(f'<text x="{x["client"] + 10}" y="{height - 8}" fill="#6b7280">and {hidden} more '
                     f'row(s), in the messages in full</text>')
    parts.append("</svg>")
    return f'<div class="diagram" tabindex="0" role="region" aria-label="the conversation">{"".join(parts)}</div>'



def drawn(row: Row, y: int, x: Dict[str, int]) -> str:
    """One row of the diagram at height `y`, with the lifelines at `x`."""
    if isinstance(row, Fold):
        return (f'<text x="{x["client"] + 10}" y="{y}" fill="#6b7280">⋯ {row.count:d} alike '
                f'message(s) with {esc(row.server)} folded</text>')
    if row.get("kind") == "omitted":  # the verdict left them out (checks.trace.WIRE_ROWS)
        return f'<text x="{x["client"] + 10}" y="{y}" fill="#6b7280">⋯ {esc(row.get("label"))}</text>'
    kind = str(row.get("kind"))
    colour = COLOURS.get(kind, "#1f2937")
    server_x = x.get(str(row.get("server")), x["client"])
    said = esc(str(row.get("label", ""))[:70])
    head = (f'<g class="message {esc(kind)}"><title>{esc(row.get("full", ""))}</title>'
            f'<text x="{LEFT - 8}" y="{y + 4}" text-anchor="end" fill="#6b7280">'
            f'+{float(row.get("ms", 0)):.1f} ms</text>')
    toward = row.get("toward")
    if toward in ("server", "client"):
        start, end = (x["client"], server_x) if toward == "server" else (server_x, x["client"])
        dash = ' stroke-dasharray="6,4"' if kind in ("reply", "error", "iserror") else \
            ' stroke-dasharray="2,3"' if "notification" in kind else ""
        return (f'{head}<line x1="{start}" y1="{y}" x2="{end}" y2="{y}" stroke="{colour}" stroke-width="1.5"'
                f'{dash} marker-end="url(#head)"/><text x="{min(start, end) + 8}" y="{y - 5}" fill="{colour}">'
                f'{said}</text></g>')
    # at the server: a reply withheld, or the process gone
    return (f'{head}<text x="{server_x}" y="{y + 5}" text-anchor="middle" fill="{colour}" font-size="16">✕</text>'
            f'<text x="{server_x + 12}" y="{y + 4}" fill="{colour}">{said}</text></g>')


def in_full(events: Sequence[Dict[str, Any]]) -> str:
    if not events:
        return ""
    lines = [f"+{float(e.get('ms', 0)):.1f} ms  ⋯ {e.get('label')}" if e.get("kind") == "omitted" else
             f"+{float(e.get('ms', 0)):.1f} ms  {e.get('server')} {e.get('toward') or 'at the server'}  "
             f"{e.get('full', '')}" for e in events]
    return (f"<details><summary>the messages in full ({len(events)})</summary>"
            f"<pre>{esc_lines(chr(10).join(lines))}</pre></details>")


def section(verdict: Verdict) -> str:
    name = label(verdict.number)
    where = ""
    if verdict.where is not None:
        where = f"<p>look at: <code>{esc(verdict.where.file)}</code>, <code>{esc(verdict.where.function)}</code></p>"
    return (f'<section id="{anchor(verdict.number)}"><h2><span class="badge {esc(verdict.status)}">'
            f'{esc(verdict.status.upper())}</span> {esc(name)}. {esc(verdict.title)} '
            f'<small>({verdict.duration:.2f} s)</small></h2>'
            f'<pre>{esc_lines(verdict.message)}</pre>{where}'
            f'{diagram(verdict.wire)}{in_full(verdict.wire)}</section>')


def page(title: str, summary: str, verdicts: Sequence[Verdict], problems: Sequence[str] = ()) -> str:
    """The whole report as one HTML document."""
    nav = " ".join(f'<a href="#{anchor(v.number)}" class="{esc(v.status)}">{esc(label(v.number))}</a>'
                   for v in verdicts)
    trouble = "".join(f"<li>{esc(p)}</li>" for p in problems)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{esc(title)}</h1><p>{esc(summary)}</p><nav>{nav}</nav>"
            f"{f'<ul class=fail>{trouble}</ul>' if trouble else ''}"
            f"{''.join(section(v) for v in verdicts)}</body></html>\n")
