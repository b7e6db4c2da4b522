"""The ticketing system: a `search` that collides with the note library's, a
destructive tool, a tool execution error the model can fix, and tool names a
model API cannot take once prefixed (too long, twins that share their first
70 characters, and one with a dot). `--lifecycle-tools` adds two tools that ask
the client for what only it has: a sampling from its model (`draft_reply`) and
its roots (`scan_roots`), as `set_priority` asks it a question.

Run it as `python -m servers.tickets` or `python servers/tickets.py`.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import sys
import time
from typing import Dict, List, Optional

if __package__ in (None, ""):  # run as a file path: make `servers` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from servers.asking import NeedInput  # noqa: E402
from servers.core import Report, Server, Tool  # noqa: E402
from servers.launch import run  # noqa: E402
from servers.rpc import INTERNAL_ERROR, Json, RpcError, ToolFailed, ToolOutput  # noqa: E402
from servers.tasks import Lapsed, TaskWork, Withdrawn  # noqa: E402

TICKETS: Dict[str, Dict[str, str]] = {
    "T-101": {"title": "Login page times out", "status": "open", "queue": "web"},
    "T-102": {"title": "Search returns stale results", "status": "open", "queue": "search"},
    "T-103": {"title": "Export to CSV drops the header row", "status": "closed", "queue": "reports"},
}

LONG_NAME = "summarize_open_tickets_by_queue_priority_and_assignee_for_weekly_review"
TWIN_CSV = "export_ticket_history_including_comments_and_attachments_for_audit_as_csv"
TWIN_JSON = "export_ticket_history_including_comments_and_attachments_for_audit_as_json"
DOTTED_NAME = "queue.stats"
UNDERSCORED_TWIN = "queue_stats"

TICKET_ID = {"type": "string", "pattern": "^T-[0-9]+$"}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def ticket(ticket_id: str) -> Dict[str, str]:
    found = TICKETS.get(ticket_id)
    if found is None:
        raise ToolFailed(f"No ticket {ticket_id!r}. Known tickets: {', '.join(TICKETS)}.")
    return found


def search(arguments: Json) -> ToolOutput:
    words = str(arguments["query"]).lower().split()
    hits: List[Json] = [
        {"id": tid, "title": t["title"], "status": t["status"]}
        for tid, t in TICKETS.items() if any(w in t["title"].lower() for w in words)
    ]
    data = {"tickets": hits}
    return ToolOutput(json.dumps(data), data)


def close_ticket(arguments: Json) -> ToolOutput:
    ticket(arguments["ticket_id"])["status"] = "closed"
    return ToolOutput(f"Ticket {arguments['ticket_id']} is closed.")


def schedule_followup(arguments: Json) -> ToolOutput:
    date = str(arguments["date"])
    today = datetime.date.today().isoformat()
    # The classic self-healing error: the model reads this and retries.
    if not DATE.match(date):
        raise ToolFailed(f"The date must be in YYYY-MM-DD form (got {date!r}); today is {today}.")
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        raise ToolFailed(f"{date!r} is not a real calendar date; today is {today}.") from None
    ticket(arguments["ticket_id"])
    return ToolOutput(f"Follow-up for {arguments['ticket_id']} scheduled on {date}.")


def summary(arguments: Json) -> ToolOutput:
    open_count = sum(t["status"] == "open" for t in TICKETS.values())
    return ToolOutput(f"{open_count} open tickets.")


def export(kind: str) -> ToolOutput:
    return ToolOutput(f"export ({kind}) of {len(TICKETS)} tickets queued")


def queue_stats(arguments: Json) -> ToolOutput:
    counts: Dict[str, int] = {}
    for t in TICKETS.values():
        if arguments.get("open") and t["status"] != "open":
            continue
        counts[t["queue"]] = counts.get(t["queue"], 0) + 1
    return ToolOutput(json.dumps(counts), counts)


def rebuild_index(steps: int, gap: float, report: Report) -> ToolOutput:
    for step in range(1, steps + 1):
        time.sleep(gap)  # simulated work between progress reports
        report(step, steps, f"indexed {round(step * 100 / steps)}% of the tickets")
    return ToolOutput(f"Index rebuilt: {len(TICKETS)} tickets.", {"tickets": len(TICKETS)})


EXPORT = "export_tickets"
FORMATS = ("csv", "json")
# The question the export asks when no format was given: a form with an enum and a boolean.
FORMAT_QUESTION: Json = {
    "mode": "form",
    "message": "Which format should the ticket export use?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "format": {"type": "string", "title": "Format", "description": "The file format of the export",
                       "oneOf": [{"const": "csv", "title": "CSV (spreadsheets)"},
                                 {"const": "json", "title": "JSON (programs)"}]},
            "include_closed": {"type": "boolean", "title": "Include closed tickets", "default": True},
        },
        "required": ["format"],
    },
}


def export_tickets(arguments: Json, work: TaskWork, steps: int, gap: float) -> ToolOutput:
    """A long export, run as a task: it asks for a format if none was given,
    reports each step in its status, and stops at once when cancelled."""
    work.status("Collecting the tickets")
    queue = arguments.get("queue")
    if queue == "archive":  # the failing case: a JSON-RPC error, so the task fails
        raise RpcError(INTERNAL_ERROR, "The archive queue's store is offline; nothing was exported")
    if queue == "retired":  # the server calls the task off itself: it ends cancelled
        raise Withdrawn("The retired queue was removed by an administrator; the export was called off")
    if queue == "lapsed":  # failed with a message and no error object (a server dropping it)
        raise Lapsed("The export outlived its time on the server and was dropped")
    chosen, include_closed, note = arguments.get("format"), True, ""
    if chosen is None:
        answer = work.ask(FORMAT_QUESTION)
        if answer is None:
            chosen, note = "csv", " (nobody to ask: CSV by default)"
        elif answer.get("action") != "accept":
            raise ToolFailed(f"The user answered {answer.get('action')!r} to the format question; "
                             "nothing was exported.")
        else:
            given = answer.get("content")
            content: Json = given if isinstance(given, dict) else {}
            chosen, include_closed = content.get("format"), content.get("include_closed", True) is not False
            if chosen not in FORMATS:
                raise ToolFailed(f"The answer named no known format ({chosen!r}); nothing was exported.")
    picked = [tid for tid, t in TICKETS.items()
              if (include_closed or t["status"] == "open") and queue in (None, t["queue"])]
    for step in range(1, steps + 1):
        work.sleep(gap)  # simulated work; a cancel ends it here
        work.status(f"Exported batch {step} of {steps}")
    data = {"format": chosen, "tickets": picked}
    return ToolOutput(f"Exported {len(picked)} tickets as {str(chosen).upper()}{note}: {', '.join(picked)}.", data)


PRIORITIES = ("low", "normal", "high")
PRIORITY_QUESTION: Json = {
    "mode": "form",
    "message": "What priority should the ticket get?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "priority": {"type": "string", "title": "Priority", "enum": list(PRIORITIES)},
            "note": {"type": "string", "title": "Note for the assignee", "maxLength": 200},
        },
        "required": ["priority"],
    },
}


def set_priority(arguments: Json, answers: Optional[Dict[str, Json]]) -> ToolOutput:
    """Asks for the priority when none is given (and someone can answer)."""
    found, priority, note = ticket(arguments["ticket_id"]), arguments.get("priority"), ""
    if priority is None:
        if answers is None:
            priority, note = "normal", " (nobody to ask: normal by default)"
        elif "priority" not in answers:
            raise NeedInput("priority", PRIORITY_QUESTION)
        else:
            answer = answers["priority"]
            if answer.get("action") != "accept":
                raise ToolFailed(f"The user answered {answer.get('action')!r} to the priority question; "
                                 "the priority was not changed.")
            content = answer.get("content")
            priority = content.get("priority") if isinstance(content, dict) else None
            if priority not in PRIORITIES:
                raise ToolFailed(f"The answer named no known priority ({priority!r}); nothing changed.")
            if isinstance(content, dict) and content.get("note"):
                note = f" with the note {str(content['note'])!r}"
    found["priority"] = str(priority)
    return ToolOutput(f"Ticket {arguments['ticket_id']} now has priority {priority}{note}.",
                      {"ticket": arguments["ticket_id"], "priority": priority})


def sampling_request(ticket_id: str, found: Dict[str, str]) -> Json:
    text = (f"Draft a short reply to the customer who opened ticket {ticket_id}, "
            f"\"{found['title']}\" (status: {found['status']}, queue: {found['queue']}).")
    return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "systemPrompt": "You are a support agent. Reply in two or three plain sentences.",
            "maxTokens": 200}


def sampled_text(answer: Json) -> str:
    """The text of a CreateMessageResult: one content block, or (newer revisions) a list of them."""
    given = answer.get("content")
    blocks = given if isinstance(given, list) else [given]
    return "\n".join(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                     and isinstance(b.get("text"), str))


def draft_reply(arguments: Json, answers: Optional[Dict[str, Json]]) -> ToolOutput:
    """Asks the client's model for a draft (sampling) and hands it back as the result."""
    ticket_id = arguments["ticket_id"]
    found = ticket(ticket_id)
    if answers is None:
        raise ToolFailed("This client did not declare the sampling capability, so the server cannot ask its "
                         "model for a draft; write the reply yourself.")
    if "draft" not in answers:
        raise NeedInput("draft", sampling_request(ticket_id, found), "sampling/createMessage")
    draft = sampled_text(answers["draft"])
    if not draft:
        raise ToolFailed("The client's sampling answer carried no text, so there is no draft.")
    model = str(answers["draft"].get("model") or "unknown model")
    return ToolOutput(f"Draft reply to {ticket_id} ({model}):\n{draft}",
                      {"ticket": ticket_id, "draft": draft, "model": model})


def scan_roots(arguments: Json, answers: Optional[Dict[str, Json]]) -> ToolOutput:
    """Asks the client for its roots, where ticket attachments would be looked for."""
    if answers is None:
        raise ToolFailed("This client did not declare the roots capability, so the server cannot know "
                         "where to look for attachments.")
    if "roots" not in answers:
        raise NeedInput("roots", {}, "roots/list")
    given = answers["roots"].get("roots")
    if not isinstance(given, list):
        raise ToolFailed("The client's roots/list answer carried no list of roots.")
    roots = [{"uri": r["uri"], "name": str(r.get("name") or "")} for r in given
             if isinstance(r, dict) and isinstance(r.get("uri"), str)]
    listing = "; ".join(f"{r['uri']} ({r['name']})" if r["name"] else r["uri"] for r in roots)
    return ToolOutput(f"{len(roots)} roots to look for attachments under: {listing or 'none'}.", {"roots": roots})


def lifecycle_tools() -> List[Tool]:
    """Behind `--lifecycle-tools`: the default list is what the items count and name."""
    return [
        Tool("draft_reply", "Draft a reply to a ticket's customer, written by the client's model (sampling).",
             {"type": "object", "properties": {"ticket_id": TICKET_ID},
              "required": ["ticket_id"], "additionalProperties": False},
             draft_reply, title="Draft a reply", asks_user=True, asks="sampling/createMessage",
             annotations=READ_ONLY,
             output_schema={"type": "object", "properties": {"ticket": {"type": "string"},
                                                             "draft": {"type": "string"},
                                                             "model": {"type": "string"}},
                            "required": ["ticket", "draft", "model"]}),
        Tool("scan_roots", "List the client's roots, where ticket attachments are looked for.", NO_ARGS,
             scan_roots, title="Scan the roots", asks_user=True, asks="roots/list", annotations=READ_ONLY,
             output_schema={"type": "object", "properties": {"roots": {"type": "array"}}, "required": ["roots"]}),
    ]


def needs_a_task(arguments: Json) -> ToolOutput:
    raise ToolFailed(f"{EXPORT} runs only as a task")


PLUGIN_REPORT = "plugin.weekly_report"


def plugin_report(arguments: Json) -> ToolOutput:
    return ToolOutput(f"Weekly report: {len(TICKETS)} tickets, "
                      f"{sum(t['status'] == 'open' for t in TICKETS.values())} open.")


NO_ARGS = {"type": "object", "additionalProperties": False}
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}


def build() -> Server:
    tools = [
        Tool("search", "Search support tickets by words in their title.",
             {"type": "object", "properties": {"query": {"type": "string"}},
              "required": ["query"], "additionalProperties": False},
             search, title="Search tickets", annotations=READ_ONLY,
             output_schema={"type": "object",
                            "properties": {"tickets": {"type": "array"}}, "required": ["tickets"]}),
        Tool("close_ticket", "Close a ticket. It cannot be reopened.",
             {"type": "object", "properties": {"ticket_id": TICKET_ID},
              "required": ["ticket_id"], "additionalProperties": False},
             close_ticket, title="Close a ticket",
             annotations={"readOnlyHint": False, "destructiveHint": True,
                          "idempotentHint": True, "openWorldHint": False}),
        Tool("schedule_followup", "Schedule a follow-up on a ticket for a date (YYYY-MM-DD).",
             {"type": "object",
              "properties": {"ticket_id": TICKET_ID, "date": {"type": "string"}},
              "required": ["ticket_id", "date"], "additionalProperties": False},
             schedule_followup, title="Schedule a follow-up",
             annotations={"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}),
        Tool(LONG_NAME, "Summarise open tickets for the weekly review.", NO_ARGS,
             summary, title="Weekly summary", annotations=READ_ONLY),
        Tool(TWIN_CSV, "Export every ticket's history for an audit, as CSV.", NO_ARGS,
             lambda _: export("csv"), title="Audit export (CSV)", annotations=READ_ONLY),
        Tool(TWIN_JSON, "Export every ticket's history for an audit, as JSON.", NO_ARGS,
             lambda _: export("json"), title="Audit export (JSON)", annotations=READ_ONLY),
        Tool(DOTTED_NAME, "Count tickets per queue.", NO_ARGS,
             queue_stats, title="Queue statistics", annotations=READ_ONLY,
             output_schema={"type": "object", "additionalProperties": {"type": "integer"}}),
        # The dotted name's twin once the dot is replaced: only a hash keeps them apart.
        Tool(UNDERSCORED_TWIN, "Count open tickets per queue.", NO_ARGS,
             lambda _: queue_stats({"open": True}), title="Open-queue statistics", annotations=READ_ONLY,
             output_schema={"type": "object", "additionalProperties": {"type": "integer"}}),
        Tool("rebuild_index", "Rebuild the search index; takes a moment and reports its progress.",
             NO_ARGS, lambda _, report: rebuild_index(server.progress_steps, server.progress_gap, report),
             title="Rebuild the index", reports_progress=True,
             annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,
                          "openWorldHint": False},
             output_schema={"type": "object", "properties": {"tickets": {"type": "integer"}},
                            "required": ["tickets"]}),
        Tool("set_priority", "Set a ticket's priority; asks the user when no priority is given.",
             {"type": "object", "properties": {"ticket_id": TICKET_ID,
                                               "priority": {"type": "string", "enum": list(PRIORITIES)}},
              "required": ["ticket_id"], "additionalProperties": False},
             set_priority, title="Set a ticket's priority", asks_user=True,
             annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,
                          "openWorldHint": False}),
        Tool(EXPORT, "Export the tickets to a file; long work, run as a task. Asks for the format "
             "when none is given.",
             {"type": "object", "properties": {"format": {"type": "string", "enum": list(FORMATS)},
                                               "queue": {"type": "string"}},
              "additionalProperties": False},
             needs_a_task, title="Export tickets",
             job=lambda arguments, work: export_tickets(arguments, work, server.task_steps, server.task_gap),
             task_support="required", annotations=READ_ONLY,
             output_schema={"type": "object", "properties": {"format": {"type": "string"},
                                                             "tickets": {"type": "array"}},
                            "required": ["format", "tickets"]}),
    ]
    server = Server("tickets", "1.0.0",
                    "A ticketing system. Dates are YYYY-MM-DD. Closing a ticket is permanent.", tools,
                    list_changes=True)

    def install_plugin(arguments: Json) -> ToolOutput:
        # The tool list changes under the client's feet: listeners are told.
        added = server.add_tool(Tool(PLUGIN_REPORT, "The weekly report, from the reports plugin.", NO_ARGS,
                                     plugin_report, title="Weekly report (plugin)", annotations=READ_ONLY))
        return ToolOutput("Reports plugin installed." if added else "Reports plugin was already installed.")

    server.add_tool(Tool("install_plugin", "Install the reports plugin, which adds a tool.", NO_ARGS,
                         install_plugin, title="Install the reports plugin",
                         annotations={"readOnlyHint": False, "destructiveHint": False,
                                      "idempotentHint": True, "openWorldHint": False}))

    def add_lifecycle_tools() -> None:
        for tool in lifecycle_tools():
            server.add_tool(tool)

    server.switchable["lifecycle-tools"] = add_lifecycle_tools
    return server


def main(argv: Optional[List[str]] = None) -> None:
    run(build(), argv)


if __name__ == "__main__":
    main()
