"""Who hears of a change, in either era (announce.py)."""

from __future__ import annotations

from servers.announce import for_listener, for_session, honoured
from servers.content import Content, Template

CONTENT = Content(lambda: [], [Template("note://{id}", "note", "text/markdown")], [])


def test_a_listen_keeps_only_what_the_server_can_deliver() -> None:
    wanted = {"toolsListChanged": True, "resourcesListChanged": True, "promptsListChanged": True,
              "resourceSubscriptions": ["note://n-1", "elsewhere://x", 5]}
    assert honoured(wanted, CONTENT) == {"toolsListChanged": True, "resourcesListChanged": True,
                                         "resourceSubscriptions": ["note://n-1"]}
    assert honoured(wanted, None) == {"toolsListChanged": True}  # a server without resources
    assert honoured({"toolsListChanged": "yes"}, CONTENT) == {} and honoured(None, CONTENT) == {}


def test_a_listener_hears_what_it_asked_for_named_by_its_subscription() -> None:
    wants = {"resourcesListChanged": True, "resourceSubscriptions": ["note://n-1"]}
    assert for_listener("tools", None, wants, "L") is None
    assert for_listener("resources", "note://n-2", wants, "L") is None
    assert for_listener("resources", None, wants, "L") == {
        "jsonrpc": "2.0", "method": "notifications/resources/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}}}
    assert for_listener("resources", "note://n-1", wants, 4) == {
        "jsonrpc": "2.0", "method": "notifications/resources/updated",
        "params": {"uri": "note://n-1", "_meta": {"io.modelcontextprotocol/subscriptionId": 4}}}


def test_a_handshake_session_hears_list_changes_and_only_its_subscriptions() -> None:
    assert for_session("tools", None, set()) == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert for_session("resources", None, set())["method"] == "notifications/resources/list_changed"  # type: ignore[index]
    assert for_session("resources", "note://n-1", {"note://n-2"}) is None
    assert for_session("resources", "note://n-1", {"note://n-1"}) == {
        "jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "note://n-1"}}
