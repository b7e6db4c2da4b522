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
from typing import Any, Dict, List, Optional, Tuple

from checks.fixtures import Entry, Journal

WIDTH = 110


def short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_request(msg: Dict[str, Any]) -> str:
    method = str(msg.get("method"))
    raw = msg.get("params")
    params: Dict[str, Any] = raw if isinstance(raw, dict) else {}
    head = f"{method} #{msg['id']}" if "id" in msg else method
    if method == "tools/call":
        return f"{head} {params.get('name')} {short(params.get('arguments', {}), 40)}"
    if method == "tools/list" and "cursor" in params:
        return f"{head} cursor={short(params['cursor'], 24)}"
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
        return str(msg["method"])
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
    if "tools" in result:
        cursor = result.get("nextCursor")
        more = (" (last page)" if cursor is None else ' nextCursor=""' if cursor == ""
                else f" nextCursor={short(cursor, 24)}")
        return f"{head} {len(result['tools'])} tool(s){more}"
    if "content" in result:
        text = " ".join(str(b.get("text", "")) for b in result["content"] if isinstance(b, dict))
        flag = " isError" if result.get("isError") else ""
        return f"{head}{flag} {short(text)}"
    if "supportedVersions" in result or "protocolVersion" in result:
        return f"{head} discover/initialize result"
    return f"{head} result {short(result, 40)}"


def line_for(alias: str, entry: Entry) -> Optional[str]:
    if entry.kind == "in":
        if "raw" in entry.raw:
            return f"client -> {alias:<8} {short(entry.raw['raw'])} (not JSON)"
        return f"client -> {alias:<8} {describe_request(entry.msg)}"
    if entry.kind == "out":
        return f"{alias:<8} -> client {describe_reply(entry.msg)}"
    if entry.kind == "dropped":
        return f"{alias:<8}    (reply #{entry.raw.get('id')} withheld: cancelled)"
    if entry.kind == "exit" and entry.raw.get("status"):
        return f"{alias:<8}    exited with status {entry.raw['status']}"
    return None


def trace_lines(journals: List[Journal], limit: Optional[int] = None) -> List[str]:
    """The item's wire conversation, oldest first; with `limit`, its last lines."""
    events: List[Tuple[float, str]] = []
    for journal in journals:
        for entry in journal.entries():
            text = line_for(journal.alias, entry)
            if text is not None:
                events.append((entry.t, text))
    if not events:
        return []
    events.sort(key=lambda e: e[0])
    start = events[0][0]
    lines = [f"+{(t - start) * 1000:7.1f} ms  {text}"[:WIDTH] for t, text in events]
    if limit is not None and len(lines) > limit:
        return [f"({len(lines) - limit} earlier lines; --trace shows all)"] + lines[-limit:]
    return lines
