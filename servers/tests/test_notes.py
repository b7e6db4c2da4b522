"""The note library's resources, prompts, completion, logs and lifecycle tools, in
both eras, driven without a process (notes.py, note_content.py, suite_names.py)."""

from __future__ import annotations

import base64
import copy
import zlib
from typing import Any, Dict, Iterator, List, Optional

import pytest

from servers import notes
from servers.core import Server
from servers.legacy import LegacyFront
from servers.tests.conftest import META, line, request
from servers.tests.test_legacy import INITIALIZE, plain

Json = Dict[str, Any]


@pytest.fixture
def server() -> Iterator[Server]:
    """A notes server whose additions (add_note, edit_note) are undone afterwards."""
    kept = copy.deepcopy(notes.NOTES)
    built = notes.build()
    yield built
    notes.NOTES.clear()
    notes.NOTES.update(kept)


class Wire:
    """What the server sends besides replies (notifications) and records (journal)."""

    def __init__(self, server: Server) -> None:
        self.sent: List[Json] = []
        self.journal: List[Json] = []
        self.changes: List[Optional[str]] = []
        server.logs.send = self.sent.append
        server.record = server.logs.record = lambda kind, **fields: self.journal.append({"kind": kind, **fields})
        server.on_resources = self.changes.append


def answer(front: Any, message: Json) -> Json:
    reply = front.handle_line(line(message))
    assert reply is not None
    return dict(reply)


def current(request_id: int, method: str, level: Optional[str] = None, **params: Any) -> Json:
    message = request(request_id, method, **params)
    if level is not None:
        message["params"]["_meta"] = {**META, "io.modelcontextprotocol/logLevel": level}
    return message


def handshake(server: Server, capabilities: Optional[Json] = None) -> LegacyFront:
    front = LegacyFront(server)
    answer(front, dict(INITIALIZE, params={**INITIALIZE["params"], "capabilities": capabilities or {}}))  # type: ignore[dict-item]
    return front


def all_resources(front: Any, make: Any) -> List[List[str]]:
    pages, cursor, request_id = [], None, 1
    while True:
        params: Json = {} if cursor is None else {"cursor": cursor}
        result = answer(front, make(request_id, "resources/list", **params))["result"]
        pages.append([r["uri"] for r in result["resources"]])
        cursor, request_id = result.get("nextCursor"), request_id + 1
        if cursor is None:
            return pages


@pytest.mark.parametrize("era", ["current", "legacy"])
def test_resources_page_like_the_tools_with_an_empty_page_after_the_first(server: Server, era: str) -> None:
    front = server if era == "current" else handshake(server)
    pages = all_resources(front, current if era == "current" else plain)
    assert pages == [["note://n-1", "note://n-1/attachments/cursor-diagram.png"], [],
                     ["note://n-2", "note://n-3"], ["note://n-4"]]


def test_a_tools_cursor_does_not_page_the_resources(server: Server) -> None:
    cursor = answer(server, request(1, "tools/list"))["result"]["nextCursor"]
    assert answer(server, request(2, "resources/list", cursor=cursor))["error"]["code"] == -32602


def test_current_era_lists_and_reads_carry_cache_hints_and_the_stamp(server: Server) -> None:
    for method, params in (("resources/list", {}), ("resources/templates/list", {}),
                           ("resources/read", {"uri": "note://n-2"}), ("prompts/list", {})):
        result = answer(server, request(1, method, **params))["result"]
        assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (0, "public", "complete"), method
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "notes"
    got = answer(server, request(2, "prompts/get", name="summarise_library"))["result"]
    assert "ttlMs" not in got and got["resultType"] == "complete"


def test_a_note_reads_as_markdown_and_the_attachment_as_a_real_png(server: Server) -> None:
    text = answer(server, request(1, "resources/read", uri="note://n-1"))["result"]["contents"]
    assert text == [{"uri": "note://n-1", "mimeType": "text/markdown",
                     "text": "# Paging tools/list\n\n" + notes.NOTES["n-1"]["body"]}]
    blob = answer(server, request(2, "resources/read", uri="note://n-1/attachments/cursor-diagram.png"))
    content = blob["result"]["contents"][0]
    data = base64.b64decode(content["blob"], validate=True)
    assert content["mimeType"] == "image/png" and data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    idat = data.index(b"IDAT")
    pixels = zlib.decompress(data[idat + 4:idat + 4 + int.from_bytes(data[idat - 4:idat], "big")])
    assert (width, height) == (16, 8) and len(pixels) == height * (width + 1)


def test_the_template_names_the_note_family_and_completes_its_ids(server: Server) -> None:
    templates = answer(server, request(1, "resources/templates/list"))["result"]["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["note://{id}"]
    done = answer(server, request(2, "completion/complete", ref={"type": "ref/resource", "uri": "note://{id}"},
                                  argument={"name": "id", "value": "n-"}))["result"]["completion"]
    assert done["values"] == ["n-1", "n-2", "n-3", "n-4"]


@pytest.mark.parametrize("era, code", [("current", -32602), ("legacy", -32002)])
def test_an_unknown_note_is_not_found_in_each_eras_words(server: Server, era: str, code: int) -> None:
    front, make = (server, current) if era == "current" else (handshake(server), plain)
    assert answer(front, make(1, "resources/read", uri="note://n-9"))["error"]["code"] == code


def test_summarise_tag_embeds_each_tagged_note_and_its_tag_completes(server: Server) -> None:
    got = answer(server, request(1, "prompts/get", name="summarise_tag", arguments={"tag": "discovery"}))["result"]
    embedded = [m["content"]["resource"]["uri"] for m in got["messages"] if m["content"]["type"] == "resource"]
    assert embedded == ["note://n-1", "note://n-3"] and "discovery" in got["messages"][0]["content"]["text"]
    assert answer(server, request(2, "prompts/get", name="summarise_tag", arguments={"tag": "cats"}))["error"]["code"] == -32602
    assert answer(server, request(3, "prompts/get", name="summarise_tag"))["error"]["code"] == -32602
    done = answer(server, request(4, "completion/complete", ref={"type": "ref/prompt", "name": "summarise_tag"},
                                  argument={"name": "tag", "value": ""}))["result"]["completion"]
    assert done == {"values": ["discovery", "errors", "naming", "paging", "timeouts"], "total": 5, "hasMore": False}


def test_capabilities_say_resources_prompts_completions_and_logging_in_both_eras(server: Server) -> None:
    wanted = {"resources": {"subscribe": True, "listChanged": True}, "prompts": {"listChanged": False},
              "completions": {}, "logging": {}}
    discovered = answer(server, request(1, "server/discover"))["result"]["capabilities"]
    initialized = answer(LegacyFront(server), INITIALIZE)["result"]["capabilities"]
    for capabilities in (discovered, initialized):
        assert {k: capabilities[k] for k in wanted} == wanted


def test_current_era_logs_only_for_a_request_that_asked_at_or_above_its_level(server: Server) -> None:
    wire = Wire(server)
    answer(server, request(1, "resources/read", uri="note://n-1"))  # no logLevel: nothing
    answer(server, current(2, "tools/call", "warning", name="read_note", arguments={"id": "n-9"}))
    answer(server, current(3, "resources/read", "info", uri="note://n-1"))  # debug: below info
    assert [m["params"]["level"] for m in wire.sent] == ["warning"]
    assert wire.sent[0]["params"] == {"level": "warning", "logger": "notes", "data": "no note n-9"}
    assert [(e["level"], e["sent"]) for e in wire.journal if e["kind"] == "log"] == \
        [("debug", False), ("warning", True), ("debug", False)]
    assert answer(server, current(4, "resources/list", "loud"))["error"]["code"] == -32602


def test_current_era_has_no_set_level_or_subscribe(server: Server) -> None:
    for method in ("logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        assert answer(server, request(1, method, level="info", uri="note://n-1"))["error"]["code"] == -32601


def test_legacy_logs_nothing_until_set_level_and_then_filters(server: Server) -> None:
    front, wire = handshake(server), Wire(server)
    answer(front, plain(2, "tools/call", name="add_note", arguments={"title": "t", "body": "b"}))
    assert wire.sent == []
    assert answer(front, plain(3, "logging/setLevel", level="notice")) == {"jsonrpc": "2.0", "id": 3, "result": {}}
    answer(front, plain(4, "tools/call", name="add_note", arguments={"title": "t2", "body": "b2"}))  # info: below
    answer(front, plain(5, "tools/call", name="read_note", arguments={"id": "n-9"}))  # warning: above
    assert [m["params"]["data"] for m in wire.sent] == ["no note n-9"]
    assert {"kind": "log-level", "level": "notice", "session": None} in wire.journal
    assert answer(front, plain(6, "logging/setLevel", level="chatty"))["error"]["code"] == -32602


def test_legacy_subscribe_and_unsubscribe_are_kept_and_journalled(server: Server) -> None:
    front, wire = handshake(server), Wire(server)
    assert answer(front, plain(2, "resources/subscribe", uri="note://n-2"))["result"] == {}
    assert answer(front, plain(3, "resources/subscribe", uri="note://n-7"))["result"] == {}  # a note yet to come
    assert front.subscriptions == {"note://n-2", "note://n-7"}
    assert answer(front, plain(4, "resources/unsubscribe", uri="note://n-2"))["result"] == {}
    assert front.subscriptions == {"note://n-7"}
    assert answer(front, plain(5, "resources/subscribe", uri="elsewhere://x"))["error"]["code"] == -32002
    assert [(e["kind"], e["uri"]) for e in wire.journal] == \
        [("subscribed", "note://n-2"), ("subscribed", "note://n-7"), ("unsubscribed", "note://n-2")]


def test_add_note_changes_the_list_and_tells_a_watcher_of_its_uri(server: Server) -> None:
    wire = Wire(server)
    answer(server, request(1, "tools/call", name="add_note", arguments={"title": "New", "body": "Fresh."}))
    assert wire.changes == [None, "note://n-5"]
    assert "note://n-5" in [u for page in all_resources(server, current) for u in page]


def test_lifecycle_tools_are_behind_their_switch(server: Server) -> None:
    listed = [t["name"] for p in (server.list_tools({}),) for t in p["tools"]]
    assert "edit_note" not in listed and len(server.tools) == 3
    server.switchable["lifecycle-tools"]()
    assert [t.name for t in server.tools] == ["search", "read_note", "add_note", "edit_note", "link_notes", "embed_note"]


def test_edit_note_tells_subscribers_and_reads_anew(server: Server) -> None:
    server.switchable["lifecycle-tools"]()
    wire = Wire(server)
    done = answer(server, current(1, "tools/call", "debug", name="edit_note", arguments={"id": "n-2", "body": "Later."}))
    assert done["result"]["isError"] is False and wire.changes == ["note://n-2"]
    assert [m["params"]["level"] for m in wire.sent] == ["notice"]
    text = answer(server, request(2, "resources/read", uri="note://n-2"))["result"]["contents"][0]["text"]
    assert text.endswith("Later.")
    assert answer(server, request(3, "tools/call", name="edit_note", arguments={"id": "n-9", "body": "x"}))["result"]["isError"]


def test_link_notes_returns_resource_links_and_embed_note_an_embedded_resource(server: Server) -> None:
    server.switchable["lifecycle-tools"]()
    links = answer(server, request(1, "tools/call", name="link_notes", arguments={"tag": "errors"}))["result"]["content"]
    assert [b["type"] for b in links] == ["text", "resource_link", "resource_link"]
    assert [(b["uri"], b["name"], b["mimeType"]) for b in links[1:]] == \
        [("note://n-2", "n-2", "text/markdown"), ("note://n-4", "n-4", "text/markdown")]
    embedded = answer(server, request(2, "tools/call", name="embed_note", arguments={"id": "n-3"}))["result"]["content"]
    assert embedded[1] == {"type": "resource", "resource": {"uri": "note://n-3", "mimeType": "text/markdown",
                                                            "text": "# Naming\n\n" + notes.NOTES["n-3"]["body"]}}
    assert answer(server, request(3, "tools/call", name="link_notes", arguments={"tag": "cats"}))["result"]["isError"]


def test_the_conformance_names_are_second_names_for_real_notes(server: Server) -> None:
    server.switchable["conformance-names"]()
    read = {uri: answer(server, request(1, "resources/read", uri=uri))["result"]["contents"][0]
            for uri in ("test://static-text", "test://static-binary", "test://watched-resource", "test://template/3/data")}
    assert read["test://static-text"]["text"].startswith("Paging tools/list") and \
        read["test://static-text"]["mimeType"] == "text/plain"
    assert base64.b64decode(read["test://static-binary"]["blob"]).startswith(b"\x89PNG")
    assert read["test://watched-resource"]["text"].startswith("# Timeouts")
    assert read["test://template/3/data"]["text"].startswith("n-3: Naming")
    assert "123" in answer(server, request(2, "resources/read", uri="test://template/123/data"))["result"]["contents"][0]["text"]
    got = answer(server, request(3, "prompts/get", name="test_prompt_with_arguments",
                                 arguments={"arg1": "paging", "arg2": "errors"}))["result"]
    assert "'paging'" in got["messages"][0]["content"]["text"] and "'errors'" in got["messages"][0]["content"]["text"]
    embed = answer(server, request(4, "prompts/get", name="test_prompt_with_embedded_resource",
                                   arguments={"resourceUri": "test://example-resource"}))["result"]["messages"]
    assert embed[0]["content"]["resource"]["text"].startswith("# Naming")
    image = answer(server, request(5, "prompts/get", name="test_prompt_with_image"))["result"]["messages"][0]
    assert image["content"]["type"] == "image" and image["content"]["mimeType"] == "image/png"
    assert answer(server, request(6, "prompts/get", name="test_prompt_with_embedded_resource",
                                  arguments={"resourceUri": "test://nothing"}))["error"]["code"] == -32602
