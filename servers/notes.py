"""The note library: three tools, handed out two per page with an empty page
between, so only a client that follows `nextCursor` to its end sees them all.

Run it as `python -m servers.notes` or `python servers/notes.py`.
"""

from __future__ import annotations

import json
import os
import sys

if __package__ in (None, ""):  # run as a file path: make `servers` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from servers.core import Server, Tool  # noqa: E402
from servers.rpc import ToolFailed, ToolOutput  # noqa: E402
from servers.launch import run  # noqa: E402

TYPE_CHECKING = False  # typing for the type checker only (see servers/rpc.py)
if TYPE_CHECKING:
    from typing import Dict, List, Optional

    from servers.rpc import Json

NOTES: Dict[str, Dict[str, str]] = {
    "n-1": {"title": "Paging tools/list",
            "body": "Follow nextCursor until it is missing. Short or empty pages do not end the list."},
    "n-2": {"title": "Timeouts",
            "body": "Every request gets a timeout; a stdio server that does not answer never will."},
    "n-3": {"title": "Naming",
            "body": "Prefix tool names with the configured alias, and keep a reverse table."},
    "n-4": {"title": "Error classes",
            "body": "Protocol errors are for the program; isError results are for the model."},
}

NOTE_REF = {"type": "object",
            "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
            "required": ["id", "title"]}


def search(arguments: Json) -> ToolOutput:
    words = str(arguments["query"]).lower().split()
    hits: List[Json] = [
        {"id": note_id, "title": note["title"]}
        for note_id, note in NOTES.items()
        if any(w in (note["title"] + " " + note["body"]).lower() for w in words)
    ]
    data = {"results": hits}
    return ToolOutput(json.dumps(data), data)


def read_note(arguments: Json) -> ToolOutput:
    note_id = arguments["id"]
    note = NOTES.get(note_id)
    if note is None:
        known = ", ".join(NOTES)
        # Data on an error result: a program must never mistake it for a note.
        raise ToolFailed(f"No note with id {note_id!r}. Known ids: {known}. Use search to find one.",
                         {"id": note_id, "title": "(no such note)", "body": ""})
    data = {"id": note_id, **note}
    return ToolOutput(f"{note['title']}\n\n{note['body']}", data)


def add_note(arguments: Json) -> ToolOutput:
    note_id = f"n-{len(NOTES) + 1}"
    NOTES[note_id] = {"title": arguments["title"], "body": arguments["body"]}
    data = {"id": note_id}
    return ToolOutput(json.dumps(data), data)


def build() -> Server:
    tools = [
        Tool("search", "Search the note library by keywords; returns matching note ids and titles.",
             {"type": "object", "properties": {"query": {"type": "string", "description": "keywords"}},
              "required": ["query"], "additionalProperties": False},
             search, title="Search notes",
             annotations={"readOnlyHint": True, "openWorldHint": False},
             output_schema={"type": "object",
                            "properties": {"results": {"type": "array", "items": NOTE_REF}},
                            "required": ["results"]}),
        Tool("read_note", "Read one note by its id (for example n-2).",
             {"type": "object", "properties": {"id": {"type": "string", "pattern": "^n-[0-9]+$"}},
              "required": ["id"], "additionalProperties": False},
             read_note, title="Read a note",
             annotations={"readOnlyHint": True, "openWorldHint": False},
             output_schema={"type": "object",
                            "properties": {"id": {"type": "string"}, "title": {"type": "string"},
                                           "body": {"type": "string"}},
                            "required": ["id", "title", "body"]}),
        Tool("add_note", "Add a note to the library; returns the new note's id.",
             {"type": "object",
              "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
              "required": ["title", "body"], "additionalProperties": False},
             add_note, title="Add a note",
             annotations={"readOnlyHint": False, "destructiveHint": False,
                          "idempotentHint": False, "openWorldHint": False},
             output_schema={"type": "object", "properties": {"id": {"type": "string"}},
                            "required": ["id"]}),
    ]
    return Server("notes", "1.0.0",
                  "A small library of notes about writing MCP clients. Search first, then read by id.",
                  tools, page_size=2)


def main(argv: Optional[List[str]] = None) -> None:
    run(build(), argv)


if __name__ == "__main__":
    main()
