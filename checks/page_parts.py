"""The parts the page (checks.page) is drawn from: each item's conversation as
an SVG sequence diagram, its legend, and the escaping every text from a server
goes through.

The diagram: the client's lifeline and one per server, named for what the
server was started as when the item broke one on purpose ("tickets (exits at
start)"), and named again every LANE_REPEAT rows. Arrows in time order, the time
on the left: requests solid, replies dashed, notifications dotted, errors red,
isError results orange; a request never answered is red and says so; a reply
withheld, a server's exit (✕) or its restart (↻) is marked on its lifeline, and
where the client raised (✖) on the client's, when the verdict says so. A run of
alike messages is folded. Labels are cut with "…", whole on hover; a tool
name sent in a tools/call is whole and bold. Drawn at its own size in a box that
scrolls, so its text never shrinks and the page never scrolls sideways.

Everything here that came from a server or the code under test is escaped
(and its control characters shown as escapes): text, never markup.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Set, Union

from checks.trace import clipped
from checks.visible import visible

ROW = 26  # pixels per message
LANE = 190  # pixels between lifelines, at least (more when a name is longer)
LEFT = 80  # the time column
TOP = 40  # the lifelines' names
FOLD_AFTER = 4  # a run of more alike messages than this is folded
KEEP = 2  # of a folded run: the first KEEP and the last one are drawn
MAX_ROWS = 400  # rows drawn per item; the rest are counted
LANE_REPEAT = 16  # rows between the lanes' names, drawn again down a tall diagram
LABEL_CHARS = 96  # characters of a label drawn (a cut one ends in "…"); the whole label shows on hover
TITLE_TEXT = 2_000  # characters of a message shown on hover; all of it is in "the messages in full"
COLOURS = {"request": "#1f2937", "notification": "#6b7280", "reply": "#1f2937", "error": "#dc2626",
           "iserror": "#c2410c", "server-request": "#1d4ed8", "server-notification": "#6b7280",
           "not-json": "#dc2626", "dropped": "#dc2626", "exit": "#dc2626", "unanswered": "#dc2626",
           "restart": "#1d4ed8"}


def esc(text: Any) -> str:
    """Untrusted text as HTML text: escaped, controls made visible."""
    return html.escape(visible(str(text)), quote=True)


def esc_lines(text: Any) -> str:
    """Like esc, keeping the line breaks (for a <pre>)."""
    return "\n".join(esc(line) for line in str(text).split("\n"))


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


@dataclass(frozen=True)
class Names:
    """A drawn row that names the lanes again, so a tall diagram's lanes are
    named wherever one reads it (an SVG without script cannot keep them in view)."""


@dataclass(frozen=True)
class Raised:
    """A drawn row on the client's lifeline: where the client raised `said`, as the
    verdict tells it. The verdict carries no time for it, so it is drawn just after
    the last thing the broken server `after` did (or at the end, when it names none)."""

    said: str
    after: Optional[str]


Row = Union[Dict[str, Any], Fold, Names, Raised]


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


@dataclass(frozen=True)
class Lanes:
    """Where each lifeline is, and what each server was (a broken server's item names them all)."""

    x: Dict[str, int]
    titles: Dict[str, str]
    width: int


RAISED = re.compile(r"\b(\w+\(\)) raised (\w+)")
BROKEN = re.compile(r"\bwith (\S+) broken\b")
CHAR = 7.3  # pixels one character of the diagram's 12 px monospace takes


def raised_in(message: str) -> Optional[Raised]:
    """Where the client raised, when the verdict's message says it did ("refresh() raised ServerGone")."""
    found = RAISED.search(message)
    if found is None:
        return None
    broken = BROKEN.search(message)
    return Raised(f"{found.group(1)} raised {found.group(2)}", broken.group(1) if broken else None)


def lanes_of(events: Sequence[Dict[str, Any]]) -> Lanes:
    """The client's lifeline and one per server, in the order they first appear, as
    far apart as their longest name needs; each titled by its first start row."""
    titles: Dict[str, str] = {}
    servers: List[str] = []
    for event in events:
        name = str(event.get("server"))
        if event.get("kind") == "omitted":
            continue
        if name not in servers:
            servers.append(name)
        if event.get("kind") == "start":
            titles.setdefault(name, clipped(str(event.get("label", "")), 40))
    apart = max([LANE, *(int(CHAR * len(t)) + 24 for t in [*servers, *titles.values()])])
    x = {"client": LEFT + 40, **{name: LEFT + 40 + apart * (i + 1) for i, name in enumerate(servers)}}
    return Lanes(x, titles, LEFT + 40 + apart * len(servers) + 150)


def diagram(events: Sequence[Dict[str, Any]], key: str = "conversation", raised: Optional[Raised] = None) -> str:
    """The conversation as an SVG sequence diagram (empty when there was none).
    `key` makes its ids its own: every diagram of a page is in one document."""
    if not any(e.get("kind") != "start" for e in events):
        return "<p>No message reached a fixture server in this item.</p>"
    lanes = lanes_of(events)
    rows = folded(unanswered_marked(restarts_only(events)))
    hidden = max(0, len(rows) - MAX_ROWS)
    rows = named_again(with_raised(rows[:MAX_ROWS], raised))
    head, top = f"head-{key}", TOP + (14 if lanes.titles else 0)
    height = top + ROW * (len(rows) + 1) + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{lanes.width}" height="{height}" '
             f'role="img" aria-label="the conversation as a sequence diagram">',
             f'<defs><marker id="{head}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>',
             lifelines(lanes, top, height)]
    for i, row in enumerate(rows):
        y = top + ROW * (i + 1)
        parts.append(lane_names(lanes, y) if isinstance(row, Names) else drawn(row, y, lanes.x, head))
    if hidden:
        parts.append(f'<text x="{lanes.x["client"] + 10}" y="{height - 8}" fill="#6b7280">and {hidden} more '
                     f'row(s), in the messages in full</text>')
    parts.append("</svg>")
    return f'<div class="diagram" tabindex="0" role="region" aria-label="the conversation">{"".join(parts)}</div>'


def restarts_only(events: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The rows to draw: a lane's first start titles the lane instead; a later one is a restart."""
    seen: Set[str] = set()
    kept: List[Dict[str, Any]] = []
    for event in events:
        if event.get("kind") == "start":
            if str(event.get("server")) not in seen:
                seen.add(str(event.get("server")))
                continue
            event = {**event, "kind": "restart", "label": f"started again: {event.get('label')}"}
        kept.append(event)
    return kept


def unanswered_marked(events: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """`events` with each request that no reply answered marked as such (but the
    subscription stream, which stays open by design)."""
    answered = {(e.get("server"), e.get("id")) for e in events if e.get("toward") == "client"}
    return [{**e, "label": f"{e.get('label')}: never answered", "kind": "unanswered"}
            if e.get("kind") == "request" and (e.get("server"), e.get("id")) not in answered
            and not str(e.get("label")).startswith("subscriptions/listen") else e
            for e in events]


def with_raised(rows: List[Row], raised: Optional[Raised]) -> List[Row]:
    """`rows` with the point where the client raised after the broken server's last row (or last)."""
    if raised is None:
        return rows
    ends = [i + 1 for i, row in enumerate(rows) if isinstance(row, dict) and row.get("server") == raised.after]
    at = ends[-1] if ends else len(rows)
    return [*rows[:at], raised, *rows[at:]]


def lifelines(lanes: Lanes, top: int, height: int) -> str:
    """Each lane's name at the top (what the server is, then the name the run knew
    it by when they differ) and its dotted line down the diagram."""
    parts = []
    for name, at in lanes.x.items():
        title = lanes.titles.get(name, name)
        parts.append(f'<text x="{at}" y="{TOP - 18}" text-anchor="middle" font-weight="bold">{esc(title)}</text>')
        if title != name:
            parts.append(f'<text x="{at}" y="{TOP - 4}" text-anchor="middle" fill="#6b7280">{esc(name)}</text>')
        parts.append(f'<line x1="{at}" y1="{top - 10}" x2="{at}" y2="{height - 5}" stroke="#9ca3af" '
                     f'stroke-dasharray="2,3"/>')
    return "".join(parts)


def named_again(rows: List[Row]) -> List[Row]:
    """`rows` with a row of the lanes' names after every LANE_REPEAT of them (but not at the very end)."""
    out: List[Row] = []
    for at, row in enumerate(rows):
        if at and at % LANE_REPEAT == 0:
            out.append(Names())
        out.append(row)
    return out


def lane_names(lanes: Lanes, y: int) -> str:
    """The lanes' names across the diagram at height `y`, haloed in white so the lifelines do not cross them."""
    return "".join(f'<text x="{at}" y="{y}" text-anchor="middle" font-weight="bold" fill="#4b5563" '
                   f'stroke="#fff" stroke-width="4" paint-order="stroke">{esc(lanes.titles.get(name, name))}</text>'
                   for name, at in lanes.x.items())


def drawn(row: Union[Dict[str, Any], Fold, Raised], y: int, x: Dict[str, int], head: str) -> str:
    """One row of the diagram at height `y`, with the lifelines at `x` and arrows ending in marker `head`."""
    if isinstance(row, Fold):
        return (f'<text x="{x["client"] + 10}" y="{y}" fill="#6b7280">⋯ {row.count:d} alike '
                f'message(s) with {esc(row.server)} folded</text>')
    if isinstance(row, Raised):
        after = f" here, after {row.after}'s last event" if row.after else " (the verdict says; its time is not kept)"
        return (f'<g class="raised"><title>{esc(row.said)}{esc(after)}</title>'
                f'<text x="{x["client"]}" y="{y + 5}" text-anchor="middle" fill="#dc2626" font-size="16">✖</text>'
                f'<text x="{x["client"] + 12}" y="{y + 4}" fill="#dc2626" font-weight="bold">{esc(row.said)}</text>'
                f'<text x="{x["client"] + 12 + int(CHAR * (len(row.said) + 1))}" y="{y + 4}" fill="#dc2626">'
                f'{esc(after.strip())}</text></g>')
    if row.get("kind") == "omitted":  # the verdict left them out (checks.trace.WIRE_ROWS)
        return f'<text x="{x["client"] + 10}" y="{y}" fill="#6b7280">⋯ {esc(row.get("label"))}</text>'
    kind = str(row.get("kind"))
    colour = COLOURS.get(kind, "#1f2937")
    server_x = x.get(str(row.get("server")), x["client"])
    said = label_markup(row)
    opening = (f'<g class="message {esc(kind)}"><title>{esc(hover_text(row))}</title>'
               f'<text x="{LEFT - 8}" y="{y + 4}" text-anchor="end" fill="#6b7280">'
               f'+{float(row.get("ms", 0)):.1f} ms</text>')
    toward = row.get("toward")
    if toward in ("server", "client"):
        start, end = (x["client"], server_x) if toward == "server" else (server_x, x["client"])
        dash = ' stroke-dasharray="6,4"' if kind in ("reply", "error", "iserror") else \
            ' stroke-dasharray="2,3"' if "notification" in kind else ""
        return (f'{opening}<line x1="{start}" y1="{y}" x2="{end}" y2="{y}" stroke="{colour}" stroke-width="1.5"'
                f'{dash} marker-end="url(#{head})"/><text x="{min(start, end) + 8}" y="{y - 5}" fill="{colour}">'
                f'{said}</text></g>')
    # at the server: a reply withheld, the process gone, or started again
    mark = "↻" if kind == "restart" else "✕"
    return (f'{opening}<text x="{server_x}" y="{y + 5}" text-anchor="middle" fill="{colour}" font-size="16">'
            f'{mark}</text><text x="{server_x + 12}" y="{y + 4}" fill="{colour}">{said}</text></g>')


def label_markup(row: Dict[str, Any]) -> str:
    """A row's label as SVG text: cut to LABEL_CHARS with "…", but for the tool
    name a tools/call carried, which is what the server received (items 5, 6 and
    9 judge it) and is drawn whole, in bold."""
    text = str(row.get("label", ""))
    name = called_name(row)
    method, _, rest = text.partition(" ")
    number, _, rest = rest.partition(" ")
    if name is None or method != "tools/call" or not rest.startswith(name):
        return esc(clipped(text, LABEL_CHARS))
    lead, after = f"{method} {number} ", rest[len(name):]
    room = max(LABEL_CHARS - len(lead) - len(name), 12)  # a long name still leaves its arguments a glimpse
    return f'{esc(lead)}<tspan font-weight="bold">{esc(name)}</tspan>{esc(clipped(after, room))}'


def called_name(row: Dict[str, Any]) -> Optional[str]:
    """The tool name in a tools/call request's message, or None (another message, or one cut short)."""
    if not str(row.get("label", "")).startswith("tools/call "):
        return None
    try:
        message = json.loads(str(row.get("full", "")))
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) and name else None


def hover_text(row: Dict[str, Any]) -> str:
    """What hovering over an arrow shows: its whole label, then the message (the start of a long one)."""
    full = str(row.get("full", ""))
    if len(full) > TITLE_TEXT:
        full = full[:TITLE_TEXT] + "… (the rest under the messages in full)"
    return f"{row.get('label', '')}\n{full}"


# The legend: each way a diagram draws, drawn the same way, then said in words.
LEGEND = [("", COLOURS["request"], "solid: a request, client to server"),
          (' stroke-dasharray="6,4"', COLOURS["reply"], "dashed: a reply"),
          (' stroke-dasharray="2,3"', COLOURS["notification"], "dotted: a notification (no reply expected)"),
          ("", COLOURS["server-request"], "blue: a request from the server to the client"),
          (' stroke-dasharray="6,4"', COLOURS["error"],
           "red: an error reply, a line that was not JSON, or a request never answered (its label says so)"),
          (' stroke-dasharray="6,4"', COLOURS["iserror"], "orange: an isError result (the tool failed; the "
                                                          "protocol did not)")]
MARKS = [("✕", COLOURS["exit"], "on a server's line: a reply withheld (the client cancelled it) or the server exited"),
         ("↻", COLOURS["restart"], "on a server's line: the server started again (a restart)"),
         ("✖", COLOURS["exit"], "on the client's line: where the client raised, as the verdict says"),
         ("⋯", COLOURS["notification"], "alike messages folded, or left out; every one is in the messages in full")]


def legend() -> str:
    """What the diagrams' lines, colours and marks mean, each drawn as the diagrams draw it."""
    lines = [f'<li><svg width="48" height="12" aria-hidden="true"><line x1="2" y1="6" x2="40" y2="6" '
             f'stroke="{colour}" stroke-width="1.5"{dash}/><path d="M38,2 L46,6 L38,10 z" fill="{colour}"/></svg> '
             f'{esc(said)}</li>' for dash, colour, said in LEGEND]
    marks = [f'<li><span class="mark" style="color: {colour}">{esc(mark)}</span> {esc(said)}</li>'
             for mark, colour, said in MARKS]
    return (f'<ul class="legend" aria-label="how to read the diagrams">{"".join(lines + marks)}'
            '<li>Hover over an arrow for its whole label and message; every message is also under the messages in '
            'full.</li></ul>')
