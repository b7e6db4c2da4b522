"""Resources and prompts on the wire: every page of a list, a read, a subscription.

Like discovery.py these take anything shaped like the stdio client (`request`,
`era`), so they are tested against scripted fakes. Lists follow `nextCursor`
exactly as tools do (`""` is a real cursor; only a missing or null one ends the
list), bounded by `MAX_PAGES` pages and `MAX_ITEMS` items, and each item is
checked for the one field the client relies on (a resource's `uri`, a template's
`uriTemplate`, a prompt's `name`).

Subscriptions differ by era: the handshake era has `resources/subscribe` and
`resources/unsubscribe`; 2026-07-28 names the URIs in a `subscriptions/listen`
stream's filter (`resourceSubscriptions`), so a new subscription opens a stream
with every URI and ends the one it replaces (features.py does that).
"""

from __future__ import annotations

from typing import List, Optional

from ..discovery import MAX_PAGES, Requester
from ..errors import ProtocolViolation
from ..jsonrpc import Json

MAX_ITEMS = 10_000  # of one list, whatever the pages
# method -> (the result's list, the field each item must have as a string)
LISTS = {"resources/list": ("resources", "uri"), "resources/templates/list": ("resourceTemplates", "uriTemplate"),
         "prompts/list": ("prompts", "name")}


async def list_all(server: Requester, method: str, *, max_pages: int = MAX_PAGES) -> List[Json]:
    """Every item of a paginated list (`resources/list`, `resources/templates/list`, `prompts/list`)."""
    key, field = LISTS[method]
    items: List[Json] = []
    cursor: Optional[str] = None
    for _ in range(max_pages):
        page = await server.request(method, {} if cursor is None else {"cursor": cursor})
        found = page.get(key)
        if not isinstance(found, list):
            raise ProtocolViolation(f"{method} result has no '{key}' list")
        for item in found:
            if not isinstance(item, dict) or not isinstance(item.get(field), str):
                raise ProtocolViolation(f"{method} returned an item without a '{field}': {item!r:.80}")
        items.extend(found)
        if len(items) > MAX_ITEMS:
            raise ProtocolViolation(f"{method} listed more than {MAX_ITEMS:,} items")
        cursor = page.get("nextCursor")
        if cursor is None:
            return items
    raise ProtocolViolation(f"{method} did not end after {max_pages} pages")


async def read(server: Requester, uri: str) -> List[Json]:
    """The contents of one resource (`resources/read`), each checked to be an object."""
    result = await server.request("resources/read", {"uri": uri})
    contents = result.get("contents")
    if not isinstance(contents, list) or not all(isinstance(c, dict) for c in contents):
        raise ProtocolViolation("resources/read result has no 'contents' list of objects")
    return contents


async def get_prompt(server: Requester, name: str, arguments: "dict[str, str]") -> Json:
    """One prompt with its arguments filled in (`prompts/get`): its messages, checked."""
    params: Json = {"name": name, "arguments": arguments} if arguments else {"name": name}
    result = await server.request("prompts/get", params)
    messages = result.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and m.get("role") in ("user", "assistant")
                                                 for m in messages):
        raise ProtocolViolation("prompts/get result has no 'messages' list of user and assistant messages")
    return result


MAX_COMPLETIONS = 100  # the spec's own limit on one answer


async def complete(server: Requester, ref: Json, argument: str, value: str,
                   context: "dict[str, str] | None" = None) -> List[str]:
    """Suggested values for one argument (`completion/complete`); strings only, at most 100."""
    params: Json = {"ref": ref, "argument": {"name": argument, "value": value}}
    if context:
        params["context"] = {"arguments": context}
    result = await server.request("completion/complete", params)
    found = result.get("completion")
    values = found.get("values") if isinstance(found, dict) else None
    if not isinstance(values, list):
        raise ProtocolViolation("completion/complete result has no 'completion.values' list")
    return [v for v in values if isinstance(v, str)][:MAX_COMPLETIONS]


async def subscribe(server: Requester, uri: str, on: bool = True) -> None:
    """Handshake era: `resources/subscribe` (or, `on=False`, unsubscribe) for one URI."""
    await server.request("resources/subscribe" if on else "resources/unsubscribe", {"uri": uri})
