"""`--era legacy`: the fixtures as a 2025-11-25 server would behave."""

from __future__ import annotations

from servers.core import Server
from servers.legacy import LegacyFront
from servers.tests.conftest import line, replies, request, run_server


def plain(request_id: int, method: str, **params: object) -> dict[str, object]:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params:
        message["params"] = params
    return message


INITIALIZE = plain(1, "initialize", protocolVersion="2025-11-25", capabilities={},
                   clientInfo={"name": "t", "version": "1"})


def test_nothing_but_initialize_is_served_before_the_handshake(notes_server: Server) -> None:
    front = LegacyFront(notes_server)
    assert front.handle_message(plain(1, "tools/list"))["error"]["code"] == -32602  # type: ignore[index]
    assert front.handle_message(plain(2, "server/discover"))["error"]["code"] == -32601  # type: ignore[index]
    assert front.handle_message(plain(3, "ping")) == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_the_envelope_of_the_current_era_is_refused(notes_server: Server) -> None:
    front = LegacyFront(notes_server)
    reply = front.handle_message(request(1, "server/discover"))
    assert reply is not None and reply["error"]["code"] == -32600


def test_initialize_echoes_a_known_version_or_offers_its_own(notes_server: Server) -> None:
    result = LegacyFront(notes_server).handle_message(INITIALIZE)["result"]  # type: ignore[index]
    assert result["protocolVersion"] == "2025-11-25" and result["serverInfo"]["name"] == "notes"
    assert "resultType" not in result
    newer = dict(INITIALIZE, params={"protocolVersion": "2099-01-01", "capabilities": {}})
    assert LegacyFront(notes_server).handle_message(newer)["result"]["protocolVersion"] == "2025-11-25"  # type: ignore[index]


def test_after_the_handshake_tools_page_the_same_without_stamps(notes_server: Server) -> None:
    front = LegacyFront(notes_server)
    front.handle_message(INITIALIZE)
    page = front.handle_message(plain(2, "tools/list"))["result"]  # type: ignore[index]
    assert [t["name"] for t in page["tools"]] == ["search", "read_note"]
    assert "resultType" not in page and "_meta" not in page
    empty = front.handle_message(plain(3, "tools/list", cursor=page["nextCursor"]))["result"]  # type: ignore[index]
    assert empty["tools"] == [] and "nextCursor" in empty


def test_a_legacy_process_answers_the_handshake_in_order() -> None:
    done = run_server("tickets", [line(INITIALIZE), b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                                  line(plain(2, "tools/list"))], "--era", "legacy")
    answers = {r["id"]: r for r in replies(done.stdout)}
    assert answers[1]["result"]["protocolVersion"] == "2025-11-25"
    assert len(answers[2]["result"]["tools"]) == 12
