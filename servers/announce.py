"""Who hears of a change, and in which words: the pure half of list-changed and
resource-updated notifications, shared by the stdio and HTTP shells.

- 2026-07-28: only a `subscriptions/listen` stream hears anything, and only what
  its acknowledgement honoured (`toolsListChanged`, `resourcesListChanged`,
  `resourceSubscriptions`); each notification names the stream in `_meta`.
- 2025-11-25: an initialized session hears every list change unsolicited, and
  `notifications/resources/updated` for the URIs it subscribed to.

A change is `("tools", None)`, `("resources", None)` (the list) or
`("resources", uri)` (one resource).
"""

from __future__ import annotations

from typing import Any, Optional, Set

from servers.content import Content
from servers.rpc import Json

SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"


def honoured(wanted: Any, content: Optional[Content]) -> Json:
    """The part of a listen request's `notifications` this server will deliver."""
    asked = wanted if isinstance(wanted, dict) else {}
    kept: Json = {}
    if asked.get("toolsListChanged") is True:
        kept["toolsListChanged"] = True
    if content is not None:
        if asked.get("resourcesListChanged") is True:
            kept["resourcesListChanged"] = True
        uris = asked.get("resourceSubscriptions")
        watched = [u for u in uris if content.accepts(u)] if isinstance(uris, list) else []
        if watched:
            kept["resourceSubscriptions"] = watched
    return kept


def notice(change: str, uri: Optional[str]) -> Json:
    if change == "tools":
        return {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    if uri is None:
        return {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}
    return {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}


def for_listener(change: str, uri: Optional[str], wants: Json, listener: Any) -> Optional[Json]:
    """What a listen stream that honoured `wants` is told of this change (None: nothing)."""
    if change == "tools":
        heard = bool(wants.get("toolsListChanged"))
    elif uri is None:
        heard = bool(wants.get("resourcesListChanged"))
    else:
        heard = uri in (wants.get("resourceSubscriptions") or [])
    if not heard:
        return None
    message = notice(change, uri)
    message["params"] = {**message.get("params", {}), "_meta": {SUBSCRIPTION_KEY: listener}}
    return message


def for_session(change: str, uri: Optional[str], subscriptions: Set[str]) -> Optional[Json]:
    """What an initialized handshake-era session is told of this change."""
    if change == "resources" and uri is not None and uri not in subscriptions:
        return None
    return notice(change, uri)
