"""The note library as resources and prompts: each note is `note://<id>`
(markdown text), the first note has an attachment (a small PNG, read as a
base64 blob), the template `note://{id}` names the family, and two prompts
summarise the notes (by tag, or all of them). Completion offers the tags and
the note ids.

The notes themselves live in notes.py (`NOTES`); this module only reads them,
so a note added with `add_note` is a resource at once.
"""

from __future__ import annotations

import base64
import zlib
from typing import Callable, Dict, List

from servers.content import Content, Prompt, Resource, Template
from servers.rpc import INVALID_PARAMS, Json, RpcError

# Kept apart from NOTES: read_note's structured result is the note itself, and the checks compare it.
TAGS: Dict[str, List[str]] = {
    "n-1": ["paging", "discovery"],
    "n-2": ["timeouts", "errors"],
    "n-3": ["naming", "discovery"],
    "n-4": ["errors"],
}
ATTACHMENT = "note://n-1/attachments/cursor-diagram.png"
MARKDOWN = "text/markdown"


def note_uri(note_id: str) -> str:
    return f"note://{note_id}"


def png(width: int, height: int, rows: List[bytes]) -> bytes:
    """A greyscale PNG, built here (zlib and a CRC are all the format needs)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])  # 8-bit grey
    pixels = b"".join(b"\x00" + row for row in rows)  # filter type 0 on every row
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b"")


def cursor_diagram() -> bytes:
    """Three pages as three bars, the middle one empty: the trap n-1 warns about."""
    bars = [b"\x20" * 4 + b"\xff" * 2 + b"\x20" * 2 + b"\x60" * 2 + b"\x20" * 2 + b"\xff" * 2 + b"\x20" * 2]
    blank = [b"\x20" * 16]
    return png(16, 8, blank * 2 + bars * 4 + blank * 2)


def attachment_blob() -> Json:
    return {"blob": base64.b64encode(cursor_diagram()).decode("ascii")}


def reader(notes: Dict[str, Dict[str, str]], note_id: str) -> Callable[[], Json]:
    """A note's text as it is when read (an edit shows at once)."""
    return lambda: {"text": f"# {notes[note_id]['title']}\n\n{notes[note_id]['body']}"}


def note_resources(notes: Dict[str, Dict[str, str]]) -> List[Resource]:
    listed: List[Resource] = []
    for note_id, note in list(notes.items()):
        listed.append(Resource(note_uri(note_id), note_id, MARKDOWN, reader(notes, note_id),
                               title=note["title"], description=note["body"].split(". ")[0].rstrip(".") + "."))
        if note_id == "n-1":
            listed.append(Resource(ATTACHMENT, "cursor-diagram.png", "image/png", attachment_blob,
                                   title="Cursor diagram (attached to n-1)",
                                   description="Three pages of a tool list; the middle one is empty."))
    return listed


def tags() -> List[str]:
    return sorted({tag for found in TAGS.values() for tag in found})


def tagged(notes: Dict[str, Dict[str, str]], tag: str) -> List[str]:
    return [note_id for note_id in notes if tag in TAGS.get(note_id, [])]


def embedded(notes: Dict[str, Dict[str, str]], note_id: str) -> Json:
    """A note as an embedded resource (a prompt message's or a tool result's content)."""
    note = notes[note_id]
    return {"type": "resource", "resource": {"uri": note_uri(note_id), "mimeType": MARKDOWN,
                                             "text": f"# {note['title']}\n\n{note['body']}"}}


def user(content: Json) -> Json:
    return {"role": "user", "content": content}


def build_content(notes: Dict[str, Dict[str, str]]) -> Content:
    def summarise_tag(arguments: Dict[str, str]) -> List[Json]:
        tag = arguments["tag"]
        ids = tagged(notes, tag)
        if not ids:
            raise RpcError(INVALID_PARAMS, f"Invalid params: no note is tagged {tag!r}; tags: {', '.join(tags())}")
        ask = f"Summarise the notes tagged '{tag}' in a few sentences. Each note follows as a resource."
        return [user({"type": "text", "text": ask}), *(user(embedded(notes, i)) for i in ids)]

    def summarise_library(arguments: Dict[str, str]) -> List[Json]:
        listing = "\n".join(f"- {i}: {n['title']}. {n['body']}" for i, n in notes.items())
        return [user({"type": "text", "text": f"Summarise this note library in one paragraph:\n{listing}"})]

    template = Template("note://{id}", "note", MARKDOWN, title="A note by id",
                        description="Any note of the library, by its id (n-1, n-2, ...).",
                        completions={"id": lambda: list(notes)})
    prompts = [
        Prompt("summarise_tag", "Summarise the notes tagged TAG.", summarise_tag, title="Summarise a tag",
               arguments=[{"name": "tag", "description": "a tag, for example paging", "required": True}],
               completions={"tag": tags}),
        Prompt("summarise_library", "Summarise the whole note library.", summarise_library,
               title="Summarise the library"),
    ]
    return Content(lambda: note_resources(notes), [template], prompts)
