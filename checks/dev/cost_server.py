"""A workplace server for the bench's cost row: fourteen tools described the way
real servers describe theirs (a paragraph each, every parameter explained), so
that with the notes and tickets fixtures the table is 29 tools of about 4,700
tokens. `reports_export_report` answers with `--result-tokens` tokens (2,000 by
default), the long result a model pays for on every later turn; `--tools N`
makes a bigger workplace of the same kinds of tool, for tables of other sizes.

Built on the fixture servers' strict core and shell (`servers.core`,
`servers.launch`), so every fixture switch works here too. Standard library.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

if __package__ in (None, ""):  # run as a file path: make `servers` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from servers.core import Server, Tool  # noqa: E402
from servers.rpc import ToolOutput  # noqa: E402

Json = Dict[str, Any]
from servers.launch import run  # noqa: E402

READ_ONLY: Json = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
# What a careful server author adds to every description: limits, formats, what comes back.
HOUSE_RULES = ("Dates are ISO 8601 (YYYY-MM-DD) in the workspace's time zone; people are named by "
               "e-mail address. Results are paged: at most `limit` items come back, newest first, with "
               "a `next` token when there are more. Nothing is changed unless the tool says so, and "
               "every call is written to the workspace's audit trail. A call the user's role does not "
               "allow comes back as an error naming the permission it needs; an identifier that no longer "
               "exists comes back as an error saying so, with the search to run instead. Free text is "
               "matched word by word, ignoring case and accents, and quoted phrases are kept together.")
PARAMETERS: Dict[str, Json] = {
    "query": {"type": "string", "maxLength": 200, "description": "Words to look for, as a person would type them."},
    "person": {"type": "string", "maxLength": 200, "description": "The person's e-mail address."},
    "date": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$", "description": "A day, YYYY-MM-DD."},
    "id": {"type": "string", "maxLength": 64, "description": "The identifier a search returned."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10,
              "description": "How many items to return at most."},
}
# name, what it does, its parameters (the first is required)
TOOLS: List[Tuple[str, str, Tuple[str, ...]]] = [
    ("calendar_find_events", "Find calendar events by words in their title, agenda or attendees.",
     ("query", "date", "limit")),
    ("calendar_create_event", "Create a calendar event and invite people to it.", ("query", "date", "person")),
    ("mail_search_messages", "Search the mailbox: subject, body and correspondents.", ("query", "person", "limit")),
    ("mail_send_message", "Send an e-mail on the user's behalf.", ("person", "query")),
    ("files_search_documents", "Search shared documents by title and content.", ("query", "person", "limit")),
    ("files_read_document", "Read one shared document as plain text.", ("id",)),
    ("contacts_lookup_person", "Look up a colleague: role, team, manager, office and phone.", ("person",)),
    ("expenses_list_claims", "List expense claims and their approval state.", ("person", "date", "limit")),
    ("expenses_submit_claim", "Submit an expense claim for approval.", ("query", "date")),
    ("rooms_book_room", "Book a meeting room for a time slot.", ("query", "date")),
    ("reports_export_report", "Export a named report (sales, hiring, support, finance) as text.", ("query", "date")),
    ("timesheets_log_hours", "Log hours worked against a project.", ("query", "date")),
    ("travel_find_flights", "Find flights between two cities on a day.", ("query", "date", "limit")),
    ("wiki_search_pages", "Search the company wiki.", ("query", "limit")),
]


def schema_for(parameters: Tuple[str, ...]) -> Json:
    return {"type": "object", "additionalProperties": False, "required": [parameters[0]],
            "properties": {name: PARAMETERS[name] for name in parameters}}


def report_text(topic: str, size: int) -> str:
    """`size` tokens (4 characters each) of a report's lines, the same for the same topic."""
    lines: List[str] = []
    length = 0
    while length < size * 4:
        number = len(lines) + 1
        lines.append(f"{topic} report, line {number:04d}: figures for week {number % 52 + 1}, "
                     f"region {number % 7 + 1}, within the plan.")
        length += len(lines[-1]) + 1
    return "\n".join(lines)[: size * 4]


def build(result_tokens: int, count: int = len(TOOLS)) -> Server:
    def answer(name: str) -> Callable[[Json], ToolOutput]:
        def handler(arguments: Json) -> ToolOutput:
            if name == "reports_export_report":
                return ToolOutput(report_text(str(arguments.get("query", "")), result_tokens))
            return ToolOutput(f"{name}: 2 items for {json.dumps(arguments, sort_keys=True)}: "
                              "item-1 (2026-05-04, confirmed), item-2 (2026-05-06, pending).")
        return handler
    tools = [Tool(name, f"{summary} {HOUSE_RULES}", schema_for(parameters), answer(name),
                  title=name.replace("_", " ").capitalize(), annotations=READ_ONLY)
             for name, summary, parameters in TOOLS[:count]]
    for copy in range(len(TOOLS), count):  # a bigger workplace: more of the same kinds of tool
        name, summary, parameters = TOOLS[copy % len(TOOLS)]
        team = f"team{copy // len(TOOLS)}"
        tools.append(Tool(f"{team}_{name}", f"{summary} For {team} only. {HOUSE_RULES}", schema_for(parameters),
                          answer(name), title=f"{team} {name.replace('_', ' ')}", annotations=READ_ONLY))
    return Server("office", "1.0.0", "The workplace: calendar, mail, files, people, expenses, reports.", tools)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m checks.dev.cost_server", add_help=False)
    parser.add_argument("--result-tokens", type=int, default=2000)
    parser.add_argument("--tools", type=int, default=len(TOOLS))
    own, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    run(build(own.result_tokens, own.tools), rest)  # the fixture switches read the rest


if __name__ == "__main__":
    main()
