"""The note library: three tools, handed out two per page with an empty page
between, so only a client that follows `nextCursor` to its end sees them all.
Its notes are resources too, paged the same way, with a template, two prompts,
completion and log messages (note_content.py); `--lifecycle-tools` adds three
tools that edit, link and embed notes, `--conformance-names` the official
suite's names (suite_names.py).

Run it as `python -m servers.notes` or `python servers/notes.py`.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Dict, List, Optional

if __package__ in (None, ""):  # run as a file path: make `servers` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from servers.core import Server, Tool  # noqa: E402
from servers.launch import run  # noqa: E402
from servers.note_content import build_content, embedded, note_uri, tagged, tags  # noqa: E402
from servers.rpc import Json, ToolFailed, ToolOutput  # noqa: E402
from servers.suite_names import add_suite_names  # noqa: E402

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


def edit_note(arguments: Json) -> ToolOutput:
    note = NOTES.get(arguments["id"])
    if note is None:
        raise ToolFailed(f"No note with id {arguments['id']!r}. Known ids: {', '.join(NOTES)}.")
    note["body"] = arguments["body"]
    return ToolOutput(f"Note {arguments['id']} now reads: {note['body']}")


def link_notes(arguments: Json) -> ToolOutput:
    ids = tagged(NOTES, arguments["tag"])
    if not ids:
        raise ToolFailed(f"No note is tagged {arguments['tag']!r}; tags: {', '.join(tags())}.")
    links = [{"type": "resource_link", "uri": note_uri(i), "name": i, "title": NOTES[i]["title"],
              "mimeType": "text/markdown"} for i in ids]
    return ToolOutput(f"{len(ids)} notes tagged {arguments['tag']!r}: {', '.join(ids)}.", blocks=links)


def embed_note(arguments: Json) -> ToolOutput:
    if arguments["id"] not in NOTES:
        raise ToolFailed(f"No note with id {arguments['id']!r}. Known ids: {', '.join(NOTES)}.")
    return ToolOutput(f"Note {arguments['id']} follows as an embedded resource.",
                      blocks=[embedded(NOTES, arguments["id"])])


NOTE_ID = {"type": "string", "pattern": "^n-[0-9]+$"}


def lifecycle_tools(server: Server) -> List[Tool]:
    """Behind `--lifecycle-tools`: the default list stays the three tools the items count."""
    def edit_and_tell(arguments: Json) -> ToolOutput:
        output = edit_note(arguments)
        server.logs.log("notice", f"note {arguments['id']} changed")
        server.resources_changed(note_uri(arguments["id"]))
        return output

    read_only = {"readOnlyHint": True, "openWorldHint": False}
    return [
        Tool("edit_note", "Replace the body of a note; subscribers to note://<id> hear of it.",
             {"type": "object", "properties": {"id": NOTE_ID, "body": {"type": "string"}},
              "required": ["id", "body"], "additionalProperties": False},
             edit_and_tell, title="Edit a note",
             annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
                          "openWorldHint": False}),
        Tool("link_notes", "Links to the notes with a tag, as resource links (read them with resources/read).",
             {"type": "object", "properties": {"tag": {"type": "string"}},
              "required": ["tag"], "additionalProperties": False},
             link_notes, title="Link notes by tag", annotations=read_only),
        Tool("embed_note", "One note, embedded in the result as a resource.",
             {"type": "object", "properties": {"id": NOTE_ID}, "required": ["id"], "additionalProperties": False},
             embed_note, title="Embed a note", annotations=read_only),
    ]


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
             lambda arguments: read_and_warn(arguments), title="Read a note",
             annotations={"readOnlyHint": True, "openWorldHint": False},
             output_schema={"type": "object",
                            "properties": {"id": {"type": "string"}, "title": {"type": "string"},
                                           "body": {"type": "string"}},
                            "required": ["id", "title", "body"]}),
        Tool("add_note", "Add a note to the library; returns the new note's id.",
             {"type": "object",
              "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
              "required": ["title", "body"], "additionalProperties": False},
             lambda arguments: add_and_tell(arguments), title="Add a note",
             annotations={"readOnlyHint": False, "destructiveHint": False,
                          "idempotentHint": False, "openWorldHint": False},
             output_schema={"type": "object", "properties": {"id": {"type": "string"}},
                            "required": ["id"]}),
    ]
    server = Server("notes", "1.0.0",
                    "A small library of notes about writing MCP clients. Search first, then read by id.",
                    tools, page_size=2)
    server.content = build_content(NOTES)

    def read_and_warn(arguments: Json) -> ToolOutput:
        if arguments["id"] not in NOTES:
            server.logs.log("warning", f"no note {arguments['id']}")
        return read_note(arguments)

    def add_and_tell(arguments: Json) -> ToolOutput:
        output = add_note(arguments)
        note_id = f"n-{len(NOTES)}"
        server.logs.log("info", f"note {note_id} added")
        server.resources_changed(None)  # the list grew
        server.resources_changed(note_uri(note_id))  # and whoever waited for this id hears of it
        return output

    def add_lifecycle_tools() -> None:
        for tool in lifecycle_tools(server):
            server.add_tool(tool)

    server.switchable["lifecycle-tools"] = add_lifecycle_tools
    server.switchable["conformance-names"] = lambda: add_suite_names(server.content, NOTES)
    return server


def main(argv: Optional[List[str]] = None) -> None:
    run(build(), argv)


if __name__ == "__main__":
    main()
