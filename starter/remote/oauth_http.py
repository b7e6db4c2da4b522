"""The requests a sign-in makes, over http_wire: one JSON or form request to an
authorization server (or for metadata) and its JSON answer, and the probe that asks
a server for its challenge. Every failure is an AuthFailed naming the origin only.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional, Tuple

import anyio

from .http_wire import Exchange, HttpFailure, Url
from .oauth import AuthFailed, origin_of, secure_enough
from .oauth_forms import encoded, json_body
from ..discovery import PROTOCOL_VERSION
from ..untrusted import shown

BODY_LIMIT = 256 * 1024  # of a metadata document or a token endpoint's answer


async def send(url: str, method: str, headers: Mapping[str, str], form: Optional[Dict[str, str]] = None, *,
               document: Optional[Dict[str, Any]] = None, timeout: float) -> Tuple[int, Any]:
    """One request: its status and JSON body (None when the body is not JSON)."""
    if not secure_enough(url):
        raise AuthFailed(f"will not send OAuth requests to {shown(origin_of(url), 100)} without https")
    sent_headers = [("Accept", "application/json"), *headers.items()]
    body = b""
    if form is not None:
        sent_headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        body = encoded(form)
    elif document is not None:
        sent_headers.append(("Content-Type", "application/json"))
        body = json.dumps(document).encode("utf-8")
    try:
        target = Url.parse(url)
        with anyio.fail_after(timeout):
            async with Exchange(target, method, sent_headers, body) as sent:
                return sent.response.status, json_body(await sent.read(BODY_LIMIT))
    except TimeoutError:
        raise AuthFailed(f"{shown(origin_of(url), 100)} did not answer within {timeout:g} s") from None
    except (HttpFailure, ValueError) as exc:
        raise AuthFailed(f"{shown(origin_of(url), 100)}: {exc}") from None


async def probe(url: str, headers: Mapping[str, str], *, timeout: float) -> Tuple[int, Optional[str]]:
    """One MCP request without a token (`server/discover`), for the server's status and challenge."""
    message = {"jsonrpc": "2.0", "id": "sign-in", "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {}}}}
    sent_headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
                    ("MCP-Protocol-Version", PROTOCOL_VERSION), ("Mcp-Method", "server/discover"), *headers.items()]
    try:
        with anyio.fail_after(timeout):
            async with Exchange(Url.parse(url), "POST", sent_headers, json.dumps(message).encode()) as sent:
                return sent.response.status, sent.response.headers.get("www-authenticate")
    except TimeoutError:
        raise AuthFailed(f"did not answer within {timeout:g} s") from None
    except HttpFailure as exc:
        raise AuthFailed(str(exc)) from None
