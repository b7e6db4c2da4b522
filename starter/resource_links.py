"""Resource links for the model: a `read_resource` tool, and which server each URI is read from.

A tool result may carry a `resource_link` (a URI the server offers to be
read) or an embedded `resource` (the contents themselves, shown as text,
model.py). For a link there were three designs: read every link at once
(a server could make the client fetch anything, however large, before the
model even wants it), show the link and leave it (the model could never use
it), or offer the model a tool that reads one on request. This client does
the last: `read_resource` is one more tool in the table whenever a connected
server offers resources, and a read is a request like any call: it goes
through consent (a read changes nothing, so a trusted server's read runs
without asking, and an untrusted server's asks, as `readOnlyHint` tools do)
and is written to the audit log.

Which URIs: only those a server offered in this run, read from that same
server: linked in one of its tool results, or in its own `resources/list`.
A link is the server's word and URIs are not unique across servers, so a link
that server A put in a result is never read from server B (A could otherwise
point the model at B's files); a URI two servers offered needs the `server`
argument. Anything else is refused without a request.

Here, pure: which URIs were offered, by whom, and which server a URI the model
asks for is read from (`Offers`, E10). The tool itself (its shape, its entry
for consent and the audit log, its result) is lifecycle/read_resource.py, and
the reads lifecycle/features.py.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .untrusted import shown

READ_RESOURCE = "read_resource"  # the model's tool that reads a link (lifecycle/read_resource.py)
MAX_URI = 2048  # characters; a longer "URI" is not offered


NO_URI = "read_resource needs a uri (a string)."


def not_offered_by(server: str, uri: str) -> str:
    return (f"Server {shown(server, 40)!r} did not offer {shown(uri, 200)!r} in this run; only a URI a server "
            "linked in a result or listed can be read, and only from that server.")


def offered_by_several(uri: str, holders: List[str]) -> str:
    return (f"Several servers offered {shown(uri, 200)!r} ({', '.join(shown(h, 40) for h in holders)}): call "
            "read_resource again with server set to one of them.")


def offered_by_none(uri: str) -> str:
    return (f"No server offered {shown(uri, 200)!r} in this run: only a URI a server linked in a tool result or "
            "listed can be read. Nothing was sent.")


class Offers:
    """Which server offered which URI, in this run."""

    def __init__(self) -> None:
        self._by_uri: Dict[str, List[str]] = {}  # uri -> the aliases that offered it, first first

    def offer(self, alias: str, uris: List[str]) -> None:
        for uri in uris:
            holders = self._by_uri.setdefault(uri, [])
            if alias not in holders:
                holders.append(alias)

    def resolve(self, uri: Any, server: Any = None) -> Tuple[Optional[str], str]:
        """(the alias to read `uri` from, "") or (None, why it cannot be read)."""
        # >>> extension E10 (resources): a linked URI is read only from a server that offered it
        # TODO extension E10: decide which server a URI the model asks for is read from
        # (labs/GUIDE.md section 11.10). self._by_uri maps each URI offered in this run to
        # the aliases that offered it, first first. Return (alias, "") to read it, or
        # (None, why) to refuse without a request, with the reason below for each, in this order:
        # no string uri (NO_URI); nobody offered it, whatever server is named (offered_by_none);
        # a server named (a non-empty string) that did not offer it (not_offered_by); several
        # offered it and none is named (offered_by_several).
        # The clauses the checks hold it to: labs/GUIDE.md section 11.10.
        raise NotImplementedError("extension E10: decide which server a linked URI is read from "
                                  "(labs/GUIDE.md section 11.10)")
        # <<< extension E10

    def __contains__(self, uri: str) -> bool:
        return uri in self._by_uri

    def __len__(self) -> int:
        """How many URIs were offered in this run."""
        return len(self._by_uri)
