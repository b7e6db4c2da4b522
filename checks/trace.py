"""The wire conversation of one item, from its servers' journals.

    +  0.4 ms  client -> notes    tools/call #4 read_note {"id": "n-1"}
    +  1.1 ms  notes  -> client   #4 result: Paging tools/list ...

Times are from the first journal entry of the item. What the client sent is
what the server received, so this is the ground truth a learner can compare
with their own mental model ("the model chose mcp__tickets__search; the
server received search").
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any, Dict, List, Optional, Set, Tuple

from checks.fixtures import Entry, Journal

WIDTH = 110


def short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clipped(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, its last one "…" when it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_request(msg: Dict[str, Any]) -> str:
    if "method" not in msg and ("result" in msg or "error" in msg):  # the client answering a server's request
        return f"reply {describe_reply(msg)}"
    method = str(msg.get("method"))
    raw = msg.get("params")
    params: Dict[str, Any] = raw if isinstance(raw, dict) else {}
    head = f"{method} #{msg['id']}" if "id" in msg else method
    if method == "tools/call":
        return f"{head} {params.get('name')} {short(params.get('arguments', {}), 40)}"
    if method == "tools/list" and "cursor" in params:
        cursor = params["cursor"]  # "" is a real cursor: shown as one, as the reply shows it
        return f"{head} cursor={short(cursor, 24) if cursor != '' else chr(34) * 2}"
    if method == "notifications/cancelled":
        return f"{head} #{params.get('requestId')}"
    if "_meta" not in params and method not in ("initialize",) and "id" in msg:
        return f"{head} (no envelope)"
    return head


def describe_reply(msg: Dict[str, Any]) -> str:
    if "method" in msg:  # a notification from the server, not a reply
        raw_params = msg.get("params")
        params: Dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if msg["method"] == "notifications/progress":
            return f"{msg['method']} {params.get('progress')}/{params.get('total', '?')}"
        task = task_of(params)
        return f"{msg['method']} {task_status(task)}" if task is not None else str(msg["method"])
    head = f"#{msg.get('id')}"
    if "unrecorded" in msg:  # servers/misbehave.py keeps what a reply was, not its body
        return f"{head} {short(msg['unrecorded'], 10)} (body not kept in this server's journal)"
    if "result" not in msg and "error" not in msg:
        return f"{head} (neither result nor error)"
    error = msg.get("error")
    if isinstance(error, dict):
        return f"{head} error {error.get('code')} {short(error.get('message', ''), 50)}"
    raw = msg.get("result")
    result: Dict[str, Any] = raw if isinstance(raw, dict) else {}
    task = task_of(result)
    if task is not None:  # E6 judges the status, so it goes first; the id is the least of it
        created = result.get("resultType") == "task" or "task" in result
        return f"{head} task {'created, ' if created else ''}{task_status(task)}"
    if "tools" in result:
        cursor = result.get("nextCursor")
        more = (" (last page)" if cursor is None else ' nextCursor=""' if cursor == ""
                else f" nextCursor={short(cursor, 24)}")
        return f"{head} {len(result['tools'])} tool(s){more}"
    if "content" in result:
        content = result["content"]  # a list of blocks; one block alone in a sampling result
        blocks = content if isinstance(content, list) else [content]
        text = " ".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
        flag = " isError" if result.get("isError") else ""
        return f"{head}{flag} {short(text)}"
    if "supportedVersions" in result or "protocolVersion" in result:
        return f"{head} discover/initialize result"
    return f"{head} result {short(result, 40)}"


def task_of(value: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The task a result or notification describes: flat (2026-07-28's handle and
    tasks/get) or nested under "task" (2025-11-25's), or None."""
    nested = value.get("task")
    task = nested if isinstance(nested, dict) else value
    return task if "taskId" in task and "status" in task else None


def task_status(task: Dict[str, Any]) -> str:
    said = task.get("statusMessage")
    message = f': "{short(said, 60)}"' if isinstance(said, str) and said else ""
    return f"{short(task['status'], 20)}{message} (task {short(task['taskId'], 9)})"


FULL_TEXT = 20_000  # characters of one message kept for the page's "in full"
WIRE_ROWS = 1_000  # rows one verdict carries: the first ones, and the last WIRE_TAIL (where it ended)
WIRE_TAIL = 200
WIRE_TEXT = 250_000  # characters of messages in full one verdict carries in all: a page is read, not searched
LABEL_TEXT = 200  # characters of a row's label: the page draws 96 (all on hover), the trace 110
KINDS = frozenset({"request", "notification", "not-json", "reply", "error", "iserror", "server-request",
                   "server-notification", "dropped", "exit", "omitted", "start"})
TOWARD = frozenset({"server", "client", ""})  # "": what happened at the server
ROW_TEXT = ("server", "kind", "toward", "label", "full", "id")  # a row's fields besides `ms`


def kind_of(entry: Entry) -> Optional[str]:
    """What one journal entry was on the wire, for drawing; None: not a message."""
    if entry.kind == "in":
        if "raw" in entry.raw:
            return "not-json"
        msg = entry.msg
        if "method" not in msg and ("result" in msg or "error" in msg):  # the client answering the server
            return "error" if isinstance(msg.get("error"), dict) else "reply"
        return "request" if "id" in msg else "notification"
    if entry.kind == "out":
        msg = entry.msg
        if "method" in msg:
            return "server-request" if "id" in msg else "server-notification"
        if isinstance(msg.get("error"), dict):
            return "error"
        result = msg.get("result")
        return "iserror" if isinstance(result, dict) and result.get("isError") else "reply"
    if entry.kind == "dropped":
        return "dropped"
    if entry.kind == "exit" and entry.raw.get("status"):
        return "exit"
    return None


def wire_events(journals: List[Journal]) -> List[Dict[str, Any]]:
    """The item's conversation, oldest first, one dict per message or mishap:
    `ms` (since the first), `server`, `kind`, `toward` ("server" or "client";
    "" for what happened at the server), `label` (short), `full` (the JSON) and
    `id` (the message's JSON-RPC id as JSON, "null" for none).

    At most WIRE_ROWS of them, the first and the last (where it ended), with one
    row of kind "omitted" between that says how many more there were; the
    messages in full share WIRE_TEXT characters. A client in an endless loop
    writes tens of thousands of messages: every verdict crosses a pipe, and the
    page draws them, so what a verdict carries is bounded whatever the client did.

    A server's start is a row (kind "start", labelled with what the server was
    started as) only where it tells something: in an item that started a server
    to fail or to be slow, every start (so the page can name each lane for what
    it is), and anywhere a server is started again under a name already used."""
    entries = [(journal.alias, entry) for journal in journals for entry in journal.entries()]
    drawn_starts = starts_drawn(entries)
    found = sorted(((entry.t, alias, entry, kind) for alias, entry in entries
                    for kind in ["start" if id(entry) in drawn_starts else kind_of(entry)] if kind is not None),
                   key=lambda e: e[0])
    if not found:
        return []
    start, budget = found[0][0], WIRE_TEXT
    kept = found if len(found) <= WIRE_ROWS else [*found[:WIRE_ROWS - WIRE_TAIL], *found[-WIRE_TAIL:]]
    rows: List[Dict[str, Any]] = []
    for at, (t, alias, entry, kind) in enumerate(kept):
        if len(kept) < len(found) and at == WIRE_ROWS - WIRE_TAIL:
            rows.append(omitted(len(found) - len(kept), round((t - start) * 1000, 1)))
        row = {"ms": round((t - start) * 1000, 1), **described(alias, entry, kind)}
        if kind == "start":
            row["label"] = drawn_starts[id(entry)]
        row["full"] = row["full"][:min(FULL_TEXT, budget)] if budget > 0 else UNKEPT
        budget -= len(row["full"])
        rows.append(row)
    return rows


FAULTS = {"exit-at-start": "exits at start", "never-answer": "never answers", "garbage": "writes garbage",
          "exit-on-discover": "exits on server/discover"}  # servers/switches.py's --fail modes, in words


def fault_of(start: Entry) -> Optional[str]:
    """What a server was started to get wrong (its --fail, or a --delay on every reply), in words; None: nothing."""
    fail = start.raw.get("fail")
    if isinstance(fail, str) and fail:
        return FAULTS.get(fail, f"--fail {fail}")
    argv = start.raw.get("argv")
    if isinstance(argv, list) and "--delay" in argv[:-1]:
        return f"slow: {argv[argv.index('--delay') + 1]} s a reply"
    return None


def starts_drawn(entries: List[Tuple[str, Entry]]) -> Dict[int, str]:
    """The start entries (by id()) that become rows, each with its label: in an item
    with a broken server all of them, saying what each is ("notes (healthy)");
    elsewhere only those of a server started again under one name, first start
    included (it titles the lane; the page draws the later ones as restarts)."""
    starts = sorted(((alias, entry) for alias, entry in entries if entry.kind == "start"), key=lambda s: s[1].t)
    if any(fault_of(entry) for _, entry in starts):
        return {id(entry): f"{entry.raw.get('server', alias)} ({fault_of(entry) or 'healthy'})"
                for alias, entry in starts}
    times = Counter(alias for alias, _ in starts)
    return {id(entry): str(entry.raw.get("server", alias)) for alias, entry in starts if times[alias] > 1}


UNKEPT = f"(not kept: this item's messages in full passed {WIRE_TEXT:,} characters)"


def omitted(count: int, ms: float) -> Dict[str, Any]:
    """The row that stands for `count` messages left out of the middle."""
    return {"ms": ms, "server": "", "kind": "omitted", "toward": "", "label": f"{count} more message(s) not shown",
            "full": "", "id": "null"}


def described(alias: str, entry: Entry, kind: str) -> Dict[str, Any]:
    """One journal entry as a row, but for its time."""
    if entry.kind == "in":
        label = f"{short(entry.raw['raw'])} (not JSON)" if kind == "not-json" else describe_request(entry.msg)
        full: Any = entry.raw.get("raw") if kind == "not-json" else entry.msg
        toward = "server"
    elif entry.kind == "out":
        label, full, toward = describe_reply(entry.msg), entry.msg, "client"
    elif kind == "dropped":
        label, full, toward = f"reply #{entry.raw.get('id')} withheld: cancelled", entry.raw, ""
    elif kind == "start":  # labelled by wire_events, which knows the item's other servers
        label, full, toward = "started", entry.raw, ""
    else:
        label, full, toward = f"exited with status {entry.raw['status']}", entry.raw, ""
    text = full if isinstance(full, str) else json.dumps(full, ensure_ascii=False)
    return {"server": alias, "kind": kind, "toward": toward, "label": label, "full": text,
            "id": json.dumps(entry.msg.get("id"))}


def wire_row(raw: Any) -> Optional[Dict[str, Any]]:
    """One row of a wire as the runner takes it from the worker: exactly the
    fields `wire_events` makes, each of its type and within its length, or None.
    The worker runs the code under test, so nothing it sends is trusted as it is."""
    if not isinstance(raw, dict):
        return None
    at = raw.get("ms")
    texts = {name: raw.get(name) for name in ROW_TEXT}
    if not isinstance(at, (int, float)) or isinstance(at, bool) or not math.isfinite(at):
        return None
    if not all(isinstance(value, str) for value in texts.values()):
        return None
    if texts["kind"] not in KINDS or texts["toward"] not in TOWARD:
        return None
    return {"ms": float(at), **texts, "label": clipped(str(texts["label"]), LABEL_TEXT),
            "full": str(texts["full"])[:FULL_TEXT]}


def line_for(event: Dict[str, Any]) -> str:
    alias, label = event["server"], event["label"]
    if event["toward"] == "server":
        return f"client -> {alias:<8} {label}"
    if event["toward"] == "client":
        return f"{alias:<8} -> client {label}"
    if event["kind"] == "dropped":
        return f"{alias:<8}    ({label})"
    return f"{alias:<8}    {label}"


def trace_lines(journals: List[Journal], limit: Optional[int] = None,
                events: Optional[List[Dict[str, Any]]] = None) -> List[str]:
    """The item's wire conversation as text, oldest first; with `limit`, its last lines."""
    events = wire_events(journals) if events is None else events
    lines = [f"+{event['ms']:7.1f} ms  {line_for(event)}"[:WIDTH] for event in events
             if event["kind"] != "start"]  # the page's lane names; a terminal's lines are messages
    if limit is not None and len(lines) > limit:
        return [f"({len(lines) - limit} earlier lines; --trace shows all)"] + lines[-limit:]
    return lines
