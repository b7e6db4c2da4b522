"""The ticketing system asks the client for a sampling and for its roots, in both
eras, only when the client declared it (tickets.py, asking.py, legacy.py)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import pytest

from servers import tickets
from servers.core import Server
from servers.legacy import LegacyFront
from servers.tests.conftest import META, line
from servers.tests.test_legacy import INITIALIZE, plain

Json = Dict[str, Any]
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Sorry about the timeouts; a fix is on its way."},
           "model": "mock-model", "stopReason": "endTurn"}
ROOTS = {"roots": [{"uri": "file:///work/site", "name": "site"}, {"uri": "file:///work/logs"}]}


@pytest.fixture
def server() -> Server:
    built = tickets.build()
    built.switchable["lifecycle-tools"]()
    return built


def call(front: Any, name: str, arguments: Json, capabilities: Optional[Json] = None, **extra: Any) -> Json:
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": capabilities or {}}
    message = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
               "params": {"_meta": meta, "name": name, "arguments": arguments, **extra}}
    reply = front.handle_line(line(message))
    assert reply is not None and "result" in reply, reply
    return dict(reply["result"])


def test_the_two_tools_are_only_behind_the_switch() -> None:
    names = [t.name for t in tickets.build().tools]
    assert "draft_reply" not in names and "scan_roots" not in names


def test_current_era_draft_reply_asks_for_a_sampling_and_uses_the_answer(server: Server) -> None:
    asked = call(server, "draft_reply", {"ticket_id": "T-101"}, {"sampling": {}})
    assert asked["resultType"] == "input_required"
    request = asked["inputRequests"]["draft"]
    assert request["method"] == "sampling/createMessage" and request["params"]["maxTokens"] == 200
    assert "T-101" in request["params"]["messages"][0]["content"]["text"]
    done = call(server, "draft_reply", {"ticket_id": "T-101"}, {"sampling": {}},
                inputResponses={"draft": SAMPLED}, requestState=asked["requestState"])
    assert done["isError"] is False and done["structuredContent"] == {
        "ticket": "T-101", "draft": SAMPLED["content"]["text"], "model": "mock-model"}  # type: ignore[index]


def test_a_sampling_answer_with_a_list_of_blocks_or_no_text(server: Server) -> None:
    state = call(server, "draft_reply", {"ticket_id": "T-102"}, {"sampling": {}})["requestState"]
    listed = dict(SAMPLED, content=[{"type": "text", "text": "One."}, {"type": "image", "data": "", "mimeType": "x"},
                                    {"type": "text", "text": "Two."}])
    done = call(server, "draft_reply", {"ticket_id": "T-102"}, {"sampling": {}},
                inputResponses={"draft": listed}, requestState=state)
    assert done["structuredContent"]["draft"] == "One.\nTwo."
    empty = call(server, "draft_reply", {"ticket_id": "T-102"}, {"sampling": {}},
                 inputResponses={"draft": {"role": "assistant", "content": {"type": "image"}}}, requestState=state)
    assert empty["isError"] is True


@pytest.mark.parametrize("name, arguments, capability", [("draft_reply", {"ticket_id": "T-101"}, "sampling"),
                                                         ("scan_roots", {}, "roots")])
def test_without_the_capability_the_result_says_so_and_nothing_is_asked(server: Server, name: str, arguments: Json,
                                                                         capability: str) -> None:
    done = call(server, name, arguments, {"elicitation": {}})
    assert done["isError"] is True and capability in done["content"][0]["text"]
    assert "inputRequests" not in done


def test_current_era_scan_roots_asks_every_time(server: Server) -> None:
    for _ in range(2):
        asked = call(server, "scan_roots", {}, {"roots": {}})
        assert asked["inputRequests"] == {"roots": {"method": "roots/list", "params": {}}}
    done = call(server, "scan_roots", {}, {"roots": {}}, inputResponses={"roots": ROOTS},
                requestState=asked["requestState"])
    assert done["structuredContent"] == {"roots": [{"uri": "file:///work/site", "name": "site"},
                                                   {"uri": "file:///work/logs", "name": ""}]}


class Client:
    """A handshake-era client as the server's asker sees it: answers by method, and counts."""

    def __init__(self, answers: Dict[str, Optional[Json]]) -> None:
        self.answers = answers
        self.asked: List[Tuple[str, Json]] = []

    def __call__(self, method: str, params: Json) -> Optional[Json]:
        self.asked.append((method, params))
        return self.answers.get(method)


def session(server: Server, capabilities: Json, client: Client) -> LegacyFront:
    server.ask_client = client
    front = LegacyFront(server)
    front.handle_message(dict(INITIALIZE, params={**INITIALIZE["params"], "capabilities": capabilities}))  # type: ignore[dict-item]
    return front


def legacy_call(front: LegacyFront, request_id: int, name: str, arguments: Json) -> Json:
    reply = front.handle_message(plain(request_id, "tools/call", name=name, arguments=arguments))
    assert reply is not None and "result" in reply, reply
    return dict(reply["result"])


def test_legacy_draft_reply_sends_the_request_during_the_call(server: Server) -> None:
    client = Client({"sampling/createMessage": SAMPLED})
    front = session(server, {"sampling": {}}, client)
    done = legacy_call(front, 2, "draft_reply", {"ticket_id": "T-103"})
    assert [m for m, _ in client.asked] == ["sampling/createMessage"] and done["isError"] is False
    assert "T-103" in client.asked[0][1]["messages"][0]["content"]["text"]
    assert "resultType" not in done


def test_legacy_a_sampling_the_client_refuses_ends_in_an_error_result(server: Server) -> None:
    front = session(server, {"sampling": {}}, Client({"sampling/createMessage": None}))
    assert legacy_call(front, 2, "draft_reply", {"ticket_id": "T-101"})["isError"] is True


def test_legacy_capabilities_are_the_initialize_ones(server: Server) -> None:
    client = Client({"sampling/createMessage": SAMPLED, "roots/list": ROOTS})
    front = session(server, {"roots": {"listChanged": True}}, client)
    assert legacy_call(front, 2, "draft_reply", {"ticket_id": "T-101"})["isError"] is True
    assert legacy_call(front, 3, "scan_roots", {})["isError"] is False
    assert [m for m, _ in client.asked] == ["roots/list"]


def test_legacy_roots_are_kept_until_the_client_says_they_changed(server: Server) -> None:
    client = Client({"roots/list": ROOTS})
    journal: List[Json] = []
    server.record = lambda kind, **fields: journal.append({"kind": kind, **fields})
    front = session(server, {"roots": {"listChanged": True}}, client)
    legacy_call(front, 2, "scan_roots", {})
    legacy_call(front, 3, "scan_roots", {})
    assert len(client.asked) == 1
    assert front.handle_message({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}) is None
    client.answers["roots/list"] = {"roots": [{"uri": "file:///elsewhere"}]}
    done = legacy_call(front, 4, "scan_roots", {})
    assert len(client.asked) == 2 and done["structuredContent"]["roots"] == [{"uri": "file:///elsewhere", "name": ""}]
    assert {"kind": "roots-changed", "session": None} in journal
