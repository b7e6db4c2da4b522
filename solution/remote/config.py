"""A remote server's entry: its URL (and what in it is a secret), its headers, its sign-in.

    "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
             "oauth": {"clientId": ..., "scope": ...}}

A header's value goes to that server and nowhere else: it is checked but never
repeated in a message, and kept as a secret (untrusted.keep_secret) so that no
text the client shows can carry it; so are the parts of the URL that look like
keys (urls.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from ..config import Place, expand
from ..errors import ConfigError
from .param_headers import TOKEN

REMOTE_KEYS = {"url", "headers", "type", "oauth"}
# Headers the HTTP transport sets itself: a config that set them would break the protocol.
OWN_HEADERS = {"host", "content-type", "content-length", "accept", "mcp-protocol-version", "mcp-session-id",
               "mcp-method", "mcp-name", "last-event-id", "transfer-encoding", "connection"}
OAUTH_KEYS = {"clientId", "clientSecret", "keyFile", "clientMetadataUrl", "scope", "redirectPort", "grant",
              "idToken", "idpTokenEndpoint", "idpClientId", "idpClientSecret"}
GRANTS = ("authorization_code", "client_credentials")


@dataclass(frozen=True)
class OAuthConfig:
    """A remote server entry's `"oauth"`: how this client is known to its authorization
    server when it is not registered dynamically. Every field may be left out."""

    client_id: Optional[str] = None  # pre-registered with the authorization server
    client_secret: Optional[str] = field(default=None, repr=False)  # a confidential client's
    key_file: Optional[str] = None  # PEM private key: private_key_jwt client authentication
    client_metadata_url: Optional[str] = None  # an https Client ID Metadata Document
    scope: Optional[str] = None  # asked for instead of what the server suggests
    redirect_port: Optional[int] = None  # a fixed port for the redirect, as some registrations need
    grant: Optional[str] = None  # "client_credentials": unattended; None: as the server offers
    # Enterprise-managed authorization (SEP-990): an ID token from the company's identity
    # provider, exchanged there for an ID-JAG (RFC 8693), presented to the MCP server's
    # authorization server as a JWT bearer grant (RFC 7523). Unattended too.
    id_token: Optional[str] = field(default=None, repr=False)
    idp_token_endpoint: Optional[str] = None
    idp_client_id: Optional[str] = None
    idp_client_secret: Optional[str] = field(default=None, repr=False)



def remote(entry: Dict[str, Any], place: Place) -> "Tuple[Optional[str], Dict[str, str]]":
    """The URL and headers of a remote server's entry (None and {} for a local one).
    A header's value is checked but never repeated in a message: it is usually a secret."""
    where, environ = place.where, place.environ
    kind = entry.get("type")
    if kind is not None and kind not in ("stdio", "http", "streamable-http", "streamableHttp"):
        raise ConfigError(f"{where}: 'type' {kind!r:.40} is not supported: use \"stdio\" or \"http\" "
                          "(Streamable HTTP; the older HTTP+SSE transport is deprecated and not spoken here)")
    url = entry.get("url")
    if url is None:
        if kind not in (None, "stdio"):
            raise ConfigError(f"{where}: 'type' is {kind!r} but there is no 'url'")
        if "headers" in entry:
            raise ConfigError(f"{where}: 'headers' are for a remote server ('url')")
        return None, {}
    if not isinstance(url, str) or not url:
        raise ConfigError(f"{where}: 'url' must be a string")
    from .http_wire import Url, value_problem  # here: a config without remote servers never loads the HTTP parts
    url = expand(url, f"{where} url", environ)
    try:
        Url.parse(url)
    except ValueError as exc:
        raise ConfigError(f"{where}: 'url' is not usable: {exc}") from None
    given = entry.get("headers", {})
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        raise ConfigError(f"{where}: 'headers' must map header names to strings")
    headers: Dict[str, str] = {}
    for name, value in given.items():
        if not TOKEN.match(name):
            raise ConfigError(f"{where}: header name {name!r} is not a valid HTTP header name")
        if name.lower() in OWN_HEADERS:
            raise ConfigError(f"{where}: header {name!r} is set by the client itself (the protocol needs it)")
        value = expand(value, f"{where} header {name}", environ)
        problem = value_problem(value)
        if problem is not None:  # refused now: sending it would fail, in words that quote it
            raise ConfigError(f"{where}: the value of header {name!r} {problem}; the value is not shown")
        headers[name] = value
    return url, headers


def oauth_entry(entry: Any, place: Place) -> OAuthConfig:
    """A server's `"oauth"` object. The secret may be `${VAR}`; it is never repeated in a message."""
    where, environ, base = f"{place.where} oauth", place.environ, place.base
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: must be an object with clientId, clientSecret, keyFile, ...")
    unknown = sorted(set(entry) - OAUTH_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {', '.join(unknown)} (known: {', '.join(sorted(OAUTH_KEYS))})")
    text: Dict[str, Optional[str]] = {}
    for key in sorted(OAUTH_KEYS - {"redirectPort"}):
        value = entry.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise ConfigError(f"{where}: '{key}' must be a non-empty string")
        text[key] = expand(value, f"{where} {key}", environ) if isinstance(value, str) else None
    if text["grant"] is not None and text["grant"] not in GRANTS:
        raise ConfigError(f"{where}: 'grant' must be one of {', '.join(GRANTS)}")
    if (text["clientSecret"] or text["keyFile"]) and not text["clientId"]:
        raise ConfigError(f"{where}: a client secret or key file needs its 'clientId'")
    if text["grant"] == "client_credentials" and not (text["clientSecret"] or text["keyFile"]):
        raise ConfigError(f"{where}: the client_credentials grant needs 'clientSecret' or 'keyFile'")
    if text["idToken"] and not (text["idpTokenEndpoint"] and text["clientId"] and text["clientSecret"]):
        raise ConfigError(f"{where}: an 'idToken' needs 'idpTokenEndpoint', and the 'clientId' and "
                          "'clientSecret' the MCP server's authorization server knows this client by")
    metadata = text["clientMetadataUrl"]
    if metadata is not None and (not metadata.startswith("https://") or metadata.rstrip("/").count("/") < 3):
        raise ConfigError(f"{where}: 'clientMetadataUrl' must be an https URL with a path")
    port = entry.get("redirectPort")
    if port is not None and (not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536):
        raise ConfigError(f"{where}: 'redirectPort' must be a port number from 1 to 65535")
    key_file = str(base / text["keyFile"]) if text["keyFile"] else None  # relative to the config file
    return OAuthConfig(text["clientId"], text["clientSecret"], key_file, metadata, text["scope"], port,
                       text["grant"], text["idToken"], text["idpTokenEndpoint"], text["idpClientId"],
                       text["idpClientSecret"])
