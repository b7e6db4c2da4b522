"""`notes --conformance-names`: the fixed names the official conformance suite
(@modelcontextprotocol/conformance) asks a server for, served from the note
library's own content wherever it has some.

The suite's server scenarios read `test://static-text`, `test://static-binary`
and `test://template/123/data`, watch `test://watched-resource`, and get the
prompts `test_simple_prompt`, `test_prompt_with_arguments` (`arg1`, `arg2`),
`test_prompt_with_embedded_resource` (`resourceUri`, given
`test://example-resource`) and `test_prompt_with_image`. A note library has
none of these names, so they are behind a switch, never in the default
fixture, and each one is a second name for something real:

| suite name | what it serves |
|---|---|
| `test://static-text` | note n-1, as plain text |
| `test://static-binary` | n-1's attachment (the PNG) |
| `test://watched-resource` | note n-2 |
| `test://example-resource` | note n-3 |
| `test://template/{id}/data` | note n-<id> if there is one, else a line saying there is none (the one name with no real content behind it: the suite reads id 123) |
| `test_simple_prompt` | `summarise_library` |
| `test_prompt_with_arguments` | a comparison of the notes tagged `arg1` with those tagged `arg2` |
| `test_prompt_with_embedded_resource` | the resource `resourceUri` names, embedded (-32602 if it names none) |
| `test_prompt_with_image` | the attachment as an image, with a question about it |
"""

from __future__ import annotations

from typing import Dict, List, Optional

from servers.content import Content, Prompt, Resource, Template
from servers.note_content import attachment_blob, note_resources, note_uri, tagged, tags, user
from servers.rpc import INVALID_PARAMS, Json, RpcError

Notes = Dict[str, Dict[str, str]]


def alias(uri: str, note_id: str, notes: Notes, *, mime_type: str = "text/markdown") -> Resource:
    """A second URI for a note: read at the time, so an edit shows under both."""
    def read() -> Json:
        note = notes[note_id]
        return {"text": f"{note['title']}\n\n{note['body']}" if mime_type == "text/plain"
                else f"# {note['title']}\n\n{note['body']}"}

    return Resource(uri, uri.rpartition("/")[2], mime_type, read, title=f"{notes[note_id]['title']} (as {uri})",
                    description=f"The conformance suite's name for {note_uri(note_id)}.")


def add_suite_names(content: Optional[Content], notes: Notes) -> None:
    assert content is not None
    aliases = [alias("test://static-text", "n-1", notes, mime_type="text/plain"),
               Resource("test://static-binary", "static-binary", "image/png", attachment_blob,
                        title="Cursor diagram (as test://static-binary)",
                        description="The conformance suite's name for n-1's attachment."),
               alias("test://watched-resource", "n-2", notes), alias("test://example-resource", "n-3", notes)]
    content.resources = lambda: note_resources(notes) + aliases

    def numbered(variables: Dict[str, str]) -> Json:
        note = notes.get(f"n-{variables['id']}")
        if note is None:
            return {"text": f"No note n-{variables['id']} in the library (asked for by id {variables['id']})."}
        return {"text": f"n-{variables['id']}: {note['title']}. {note['body']}"}

    content.templates.append(Template("test://template/{id}/data", "numbered-note", "text/plain",
                                      title="A note by number (the conformance suite's template)",
                                      completions={"id": lambda: [i[2:] for i in notes]}, read=numbered))
    content.prompts.extend(suite_prompts(content, notes))


def suite_prompts(content: Content, notes: Notes) -> List[Prompt]:
    simple = next(p for p in content.prompts if p.name == "summarise_library")

    def compare(arguments: Dict[str, str]) -> List[Json]:
        first, second = arguments["arg1"], arguments["arg2"]
        counts = f"({len(tagged(notes, first))} and {len(tagged(notes, second))} notes)"
        return [user({"type": "text", "text": f"Compare the notes tagged '{first}' with those tagged "
                                              f"'{second}' {counts}."})]

    def embed(arguments: Dict[str, str]) -> List[Json]:
        resource = content.find(arguments["resourceUri"])
        if resource is None:
            raise RpcError(INVALID_PARAMS, f"Invalid params: no resource {arguments['resourceUri']!r}")
        return [user({"type": "resource", "resource": resource.contents()}),
                user({"type": "text", "text": "Summarise the resource above in one sentence."})]

    def image(arguments: Dict[str, str]) -> List[Json]:
        return [user({"type": "image", "data": attachment_blob()["blob"], "mimeType": "image/png"}),
                user({"type": "text", "text": "What does this diagram of three pages say about paging?"})]

    def argument(name: str, description: str) -> Json:
        return {"name": name, "description": description, "required": True}

    return [
        Prompt("test_simple_prompt", "The conformance suite's name for summarise_library.", simple.render),
        Prompt("test_prompt_with_arguments", "Compare the notes of two tags (the suite's argument names).",
               compare, arguments=[argument("arg1", "a tag"), argument("arg2", "another tag")],
               completions={"arg1": tags, "arg2": tags}),
        Prompt("test_prompt_with_embedded_resource", "A resource of the library, embedded, to summarise.",
               embed, arguments=[argument("resourceUri", "the URI of a resource (note://n-1, ...)")]),
        Prompt("test_prompt_with_image", "n-1's attachment, as an image, to describe.", image),
    ]
