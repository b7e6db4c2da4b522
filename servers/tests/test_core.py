"""The fixture servers' protocol behaviour, driven without a process."""

from __future__ import annotations

import datetime
import json
from typing import Any, Dict

from servers.core import Server
from servers.paging import page_plan
from servers.tests.conftest import META, error, line, request, result


def test_discover_reports_versions_capabilities_and_identity(notes_server: Server) -> None:
    found = result(notes_server, request(1, "server/discover"))
    assert found["supportedVersions"] == ["2026-07-28"]
    assert found["resultType"] == "complete"
    assert found["capabilities"]["tools"] == {"listChanged": False}  # the rest: test_notes.py
    assert found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "notes"
    assert {"ttlMs", "cacheScope", "instructions"} <= set(found)


def test_a_request_without_meta_is_invalid_params(notes_server: Server) -> None:
    reply = error(notes_server, line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    assert reply["error"]["code"] == -32602


def test_each_missing_meta_key_is_named(notes_server: Server) -> None:
    for key in META:
        meta = {k: v for k, v in META.items() if k != key}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
        reply = error(notes_server, line(message))
        assert reply["error"]["code"] == -32602
        assert key in reply["error"]["message"]


def test_an_unknown_version_gets_32022_with_what_is_supported(notes_server: Server) -> None:
    message = request(1, "tools/list")
    message["params"]["_meta"] = {**META, "io.modelcontextprotocol/protocolVersion": "1900-01-01"}
    reply = error(notes_server, line(message))
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"] == {"supported": ["2026-07-28"], "requested": "1900-01-01"}


def test_the_legacy_handshake_is_refused_naming_the_versions(notes_server: Server) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}
    reply = error(notes_server, line(message))
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"]["requested"] == "2025-11-25"


def test_an_unknown_method_is_32601(notes_server: Server) -> None:
    reply = error(notes_server, line(request(7, "notes/reindex")))
    assert reply["id"] == 7
    assert reply["error"] == {"code": -32601, "message": "Method not found", "data": "notes/reindex"}


def test_an_unknown_tool_is_32602(notes_server: Server) -> None:
    reply = error(notes_server, line(request(1, "tools/call", name="nope", arguments={})))
    assert reply["error"]["code"] == -32602
    assert "nope" in reply["error"]["message"]


def test_a_call_without_a_name_is_32602(notes_server: Server) -> None:
    assert error(notes_server, line(request(1, "tools/call")))["error"]["code"] == -32602


def test_an_unparseable_line_is_32700_with_null_id(notes_server: Server) -> None:
    reply = error(notes_server, b'{"jsonrpc": "2.0", "id": 3,')
    assert reply["id"] is None and reply["error"]["code"] == -32700


def test_json_that_is_not_an_object_is_32600(notes_server: Server) -> None:
    reply = error(notes_server, b"[1, 2]")
    assert reply["id"] is None and reply["error"]["code"] == -32600


def test_notifications_and_stray_responses_get_no_reply(notes_server: Server) -> None:
    assert notes_server.handle_line(b'{"jsonrpc":"2.0","method":"notifications/cancelled"}') is None
    assert notes_server.handle_line(b'{"jsonrpc":"2.0","id":4,"result":{}}') is None


def test_page_plan_puts_an_empty_page_after_the_first() -> None:
    assert page_plan(3, 2) == [[0, 1], [], [2]]
    assert page_plan(2, 2) == [[0, 1]]
    assert page_plan(0, 2) == [[]]


def walk(server: Server) -> list[dict[str, object]]:
    pages, cursor = [], None
    for number in range(10):
        params: dict[str, object] = {} if cursor is None else {"cursor": cursor}
        page = result(server, request(number, "tools/list", **params))
        pages.append(page)
        cursor = page.get("nextCursor")
        if cursor is None:
            return pages
    raise AssertionError("paging did not end")


def test_notes_pages_trap_short_and_empty_page_loops(notes_server: Server) -> None:
    pages = walk(notes_server)
    assert [[t["name"] for t in p["tools"]] for p in pages] == [["search", "read_note"], [], ["add_note"]]  # type: ignore[attr-defined]
    assert "nextCursor" in pages[1]  # the empty page is not the end
    assert "nextCursor" not in pages[2]


def test_tickets_lists_every_tool_on_one_page(tickets_server: Server) -> None:
    pages = walk(tickets_server)
    assert len(pages) == 1 and len(pages[0]["tools"]) == 12  # type: ignore[arg-type]


def test_cursors_are_opaque_and_edits_are_refused(notes_server: Server) -> None:
    cursor = result(notes_server, request(1, "tools/list"))["nextCursor"]
    assert "1" not in cursor or len(cursor) > 8  # not a bare page number
    edited = cursor[:-1] + ("A" if cursor[-1] != "A" else "B")
    for bad in (edited, "2", "", "bm90LWEtY3Vyc29y"):
        reply = error(notes_server, line(request(2, "tools/list", cursor=bad)))
        assert reply["error"]["code"] == -32602, bad


def test_cursors_are_stable_across_server_instances(notes_server: Server) -> None:
    from servers import notes
    cursor = result(notes_server, request(1, "tools/list"))["nextCursor"]
    assert result(notes.build(), request(2, "tools/list", cursor=cursor))["tools"] == []


def test_a_fixable_error_is_an_iserror_result_with_the_format_and_today(tickets_server: Server) -> None:
    found = result(tickets_server, request(1, "tools/call", name="schedule_followup",
                                           arguments={"ticket_id": "T-101", "date": "next week"}))
    assert found["isError"] is True
    text = found["content"][0]["text"]
    assert "YYYY-MM-DD" in text and datetime.date.today().isoformat() in text


def test_bad_arguments_are_an_iserror_result(tickets_server: Server) -> None:
    found = result(tickets_server, request(1, "tools/call", name="close_ticket", arguments={}))
    assert found["isError"] is True and "ticket_id" in found["content"][0]["text"]


def test_structured_results_also_come_as_text(notes_server: Server) -> None:
    found = result(notes_server, request(1, "tools/call", name="search", arguments={"query": "paging"}))
    assert found["isError"] is False
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]
    assert found["structuredContent"]["results"][0]["id"] == "n-1"


def test_tickets_has_the_colliding_destructive_and_awkward_names(tickets_server: Server) -> None:
    tools = {t.name: t for t in tickets_server.tools}
    assert "search" in tools
    assert tools["close_ticket"].annotations == {"readOnlyHint": False, "destructiveHint": True,
                                                 "idempotentHint": True, "openWorldHint": False}
    long_names = [n for n in tools if len("mcp__tickets__" + n) > 64]
    assert len(long_names) == 3
    twins = sorted(n for n in long_names if n.startswith("export_"))
    assert twins[0][:60] == twins[1][:60] and twins[0] != twins[1]
    assert any("." in n for n in tools)
    assert all(len(n) <= 128 for n in tools)


def test_a_missing_note_is_an_error_result_that_carries_data(notes_server: Server) -> None:
    done = result(notes_server, request(1, "tools/call", name="read_note", arguments={"id": "n-9"}))
    assert done["isError"] is True and done["structuredContent"]["id"] == "n-9"


def test_a_job_the_server_calls_off_ends_cancelled_and_one_it_drops_ends_failed_without_an_error() -> None:
    from servers.tasks import Lapsed, TaskBoard, Withdrawn

    def withdrawn(arguments: Dict[str, Any], work: Any) -> Any:
        raise Withdrawn("called off")

    def lapsed(arguments: Dict[str, Any], work: Any) -> Any:
        raise Lapsed("dropped")

    board = TaskBoard(legacy=False)
    for job, status in ((withdrawn, "cancelled"), (lapsed, "failed")):
        handle = board.start("export_tickets", job, {}, can_ask=False)
        task = board.find(handle["taskId"])
        assert task.stopped.wait(5)
        view = board.current_view(task, detailed=True)
        assert view["status"] == status and view["statusMessage"] in ("called off", "dropped")
        assert "error" not in view and "result" not in view
