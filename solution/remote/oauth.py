"""OAuth 2.1 for MCP servers over HTTP: what the MCP authorization spec asks of a
client, as rules with no I/O (the shell that fetches and posts is oauth_flow.py).

The order of discovery, stated once:

1. A 401 (or a 403 `insufficient_scope`) carries `WWW-Authenticate: Bearer ...`.
   Its `resource_metadata` names the protected resource metadata (RFC 9728);
   without it the client tries the path-based well-known URL, then the root one.
2. That metadata names the authorization servers; the first one's metadata is
   fetched from the RFC 8414 URL, then the OpenID discovery URLs (path-aware
   forms first for an issuer with a path). The issuer it states must be the
   one it was fetched for (RFC 8414 section 3.3).
3. A server with no protected resource metadata is a 2025-03-26 server: its
   authorization server is its own origin, metadata at the root RFC 8414 URL,
   and without that, `/authorize`, `/token` and `/register` at the origin.

The resource indicator (RFC 8707) is the server's canonical URL: scheme and
host in lower case, no default port, no query (a URL's query may hold a key),
no fragment, no trailing slash. Metadata whose `resource` is neither that nor
a parent of it on the same origin is refused: tokens for another resource
must not be asked for on this server's word.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple
from shlex import quote
from urllib.parse import SplitResult, urlsplit

from ..errors import ClientError
from ..untrusted import shown
from .tokens import Tokens, TokenStore

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
AS_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"
OFFLINE_ACCESS = "offline_access"
OPENID_FIELDS = ("id_token_signing_alg_values_supported", "subject_types_supported")
LOOPBACK = ("localhost", "127.0.0.1", "::1")
# RFC 8414 section 2: a server that names no methods takes client_secret_basic.
DEFAULT_AUTH_METHODS = ("client_secret_basic",)
# auth-param = token BWS "=" BWS ( token / quoted-string ), RFC 9110 section 11.2
_PARAM = re.compile(r'\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*(,|$)')
_SCHEME = re.compile(r"\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:\s+|$)")


class AuthFailed(ClientError):
    """Signing in to a server could not be done (or must not be): the reason in one line."""


class Redirect:
    """Where the authorization server's redirect lands (sign_in.py's listener): its URI,
    the `state` it must carry (anything else is not this sign-in's, and is ignored), and
    an event set once it has come."""

    def __init__(self, uri: str) -> None:
        import anyio  # here: this module is otherwise free of I/O

        self.uri = uri
        self.state: Optional[str] = None  # set with the authorization request; until then nothing is taken
        self.target: Optional[str] = None  # the request target it came with (path and query)
        self.arrived = anyio.Event()


# Makes the sign-in at `url` happen and returns once `Redirect.arrived` is set (or raises
# AuthFailed); the third argument names the server for the person ("server 'notes'").
SignIn = Callable[[str, Redirect, str], Awaitable[None]]


@dataclass
class OAuthSettings:
    """How this run may sign in to servers: where tokens are kept, who signs in when a
    server asks (None: nobody here can, and the message says to run `login`), and where
    the one-line notes (a refreshed token, a new sign-in) go."""

    store: TokenStore
    sign_in: Optional[SignIn] = None
    say: Callable[[str], None] = lambda line: None
    timeout: float = 30.0  # seconds for each request to an authorization server
    command: str = f"python -m {__package__.split('.')[0]}"  # how the messages name the command line
    clock: Callable[[], float] = time.time  # when tokens arrive and expire (a test's clock in tests)


@dataclass(frozen=True)
class Challenge:
    """One `WWW-Authenticate` challenge: its scheme (lower case) and parameters."""

    scheme: str
    params: Dict[str, str] = field(default_factory=dict)

    @property
    def error(self) -> Optional[str]:
        return self.params.get("error")

    @property
    def scope(self) -> Optional[str]:
        return self.params.get("scope")

    @property
    def resource_metadata(self) -> Optional[str]:
        return self.params.get("resource_metadata")


def parse_challenges(header: str) -> List[Challenge]:
    """Every challenge in a `WWW-Authenticate` value (several may share one header).
    What cannot be read ends the list: the challenges before it still count."""
    found: List[Challenge] = []
    rest = header
    while rest.strip():
        scheme = _SCHEME.match(rest)
        if scheme is None:
            break
        rest = rest[scheme.end():]
        params: Dict[str, str] = {}
        while True:
            param = _PARAM.match(rest)
            if param is None:
                break
            value = param.group(2)
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            params.setdefault(param.group(1).lower(), value)
            rest = rest[param.end():]
            if param.group(3) == "":
                break
        found.append(Challenge(scheme.group(1).lower(), params))
        rest = rest.lstrip(" ,")
    return found


def mendable(status: int, header: Optional[str]) -> bool:
    """Whether a refusal is one a sign-in can mend: 401, or 403 `insufficient_scope`."""
    return status == 401 or (status == 403 and bearer_challenge(header).error == "insufficient_scope")


def bearer_challenge(header: Optional[str]) -> Challenge:
    """The Bearer challenge of a refusal, or an empty one (a 401 may carry none)."""
    for challenge in parse_challenges(header or ""):
        if challenge.scheme == "bearer":
            return challenge
    return Challenge("bearer")


def split(url: str) -> SplitResult:
    """`url` in parts, its port read. A server's URL is hostile like the rest of its words:
    one urlsplit cannot take (an unmatched `[`) or with a port out of range (99999) is a
    refusal, never a ValueError from deep inside a sign-in."""
    try:
        parts = urlsplit(url)
        parts.port  # read now: it raises for a port out of range
    except ValueError:
        raise AuthFailed(f"{shown(url, 100)} is not a usable URL (its host or port cannot be read)") from None
    return parts


def canonical_resource(url: str) -> str:
    """The RFC 8707 resource indicator for a server URL (see the module's docstring)."""
    parts = split(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    host = f"[{host}]" if ":" in host else host
    port = parts.port
    default = {"http": 80, "https": 443}.get(scheme)
    authority = host if port is None or port == default else f"{host}:{port}"
    return f"{scheme}://{authority}{parts.path.rstrip('/')}"


def resource_allowed(server_url: str, resource: str) -> bool:
    """Whether metadata naming `resource` may speak for the server at `server_url`:
    the same origin, and a path equal to the server's or a parent of it."""
    ours, theirs = canonical_resource(server_url), canonical_resource(resource)
    if origin_of(ours) != origin_of(theirs):
        return False
    return ours == theirs or ours.startswith(theirs + "/")


def origin_of(url: str) -> str:
    return canonical_resource(split(url)._replace(path="", query="", fragment="").geturl())


def secure_enough(url: str) -> bool:
    """OAuth endpoints must use TLS; plain http only on this machine (RFC 8252's loopback)."""
    parts = split(url)
    return parts.scheme == "https" or (parts.scheme == "http" and (parts.hostname or "") in LOOPBACK)


def prm_urls(server_url: str, from_header: Optional[str]) -> List[str]:
    """Where to look for the protected resource metadata, in order (RFC 9728 section 3)."""
    urls = [from_header] if from_header else []
    path = split(server_url).path.rstrip("/")
    if path:
        urls.append(origin_of(server_url) + PRM_WELL_KNOWN + path)
    urls.append(origin_of(server_url) + PRM_WELL_KNOWN)
    return list(dict.fromkeys(urls))


def as_metadata_urls(issuer: str) -> List[str]:
    """Where an authorization server's metadata may be, in order: RFC 8414 (the path after
    the well-known part), then OpenID discovery in its path-inserted and appended forms."""
    path = split(issuer).path.rstrip("/")
    base = origin_of(issuer)
    if not path:
        return [base + AS_WELL_KNOWN, base + OIDC_WELL_KNOWN]
    return [base + AS_WELL_KNOWN + path, base + OIDC_WELL_KNOWN + path, base + path + OIDC_WELL_KNOWN]


def issuers_match(stated: str, expected: str) -> bool:
    """RFC 8414 section 3.3: the same string; a bare origin with or without its slash."""
    return stated == expected or stated.rstrip("/") == expected.rstrip("/") == origin_of(expected)


@dataclass(frozen=True)
class ResourceMetadata:
    """RFC 9728 protected resource metadata (the fields a client uses)."""

    resource: str
    authorization_servers: Tuple[str, ...]
    scopes_supported: Optional[Tuple[str, ...]] = None


@dataclass(frozen=True)
class ServerMetadata:
    """RFC 8414 authorization server metadata; `None` where the server said nothing."""

    issuer: str
    authorization_endpoint: Optional[str]
    token_endpoint: str
    registration_endpoint: Optional[str] = None
    revocation_endpoint: Optional[str] = None
    scopes_supported: Optional[Tuple[str, ...]] = None
    grant_types_supported: Optional[Tuple[str, ...]] = None
    token_endpoint_auth_methods_supported: Optional[Tuple[str, ...]] = None
    signing_algs_supported: Optional[Tuple[str, ...]] = None
    code_challenge_methods_supported: Optional[Tuple[str, ...]] = None
    client_id_metadata_document_supported: bool = False
    iss_parameter_supported: bool = False
    discovered: bool = True  # False: the 2025-03-26 default endpoints, no metadata at all
    openid_provider: bool = False  # its metadata is OpenID Connect discovery's (it issues ID tokens)


def _strings(value: Any) -> Optional[Tuple[str, ...]]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _url(document: Dict[str, Any], key: str, what: str, required: bool = False) -> Optional[str]:
    value = document.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise AuthFailed(f"the {what} has no usable '{key}'")
    try:
        usable = split(value).scheme in ("http", "https")
    except AuthFailed:
        usable = False
    if not usable:
        raise AuthFailed(f"the {what} has no usable '{key}' ({shown(value, 100)})")
    if not secure_enough(value):
        raise AuthFailed(f"the {what} names {key} {shown(origin_of(value), 100)} without https")
    return value


def resource_metadata(document: Any) -> ResourceMetadata:
    if not isinstance(document, dict):
        raise AuthFailed("the protected resource metadata is not a JSON object")
    resource = document.get("resource")
    servers = _strings(document.get("authorization_servers"))
    if not isinstance(resource, str) or not servers:
        raise AuthFailed("the protected resource metadata names no resource or no authorization server")
    return ResourceMetadata(resource, servers, _strings(document.get("scopes_supported")))


def server_metadata(document: Any, issuer: Optional[str]) -> ServerMetadata:
    """Parse and check metadata fetched for `issuer` (None: the 2025-03-26 origin, unchecked,
    as that revision had no issuer rule and the MCP server's own origin served it)."""
    what = "authorization server metadata"
    if not isinstance(document, dict):
        raise AuthFailed(f"the {what} is not a JSON object")
    stated = document.get("issuer")
    if not isinstance(stated, str):
        raise AuthFailed(f"the {what} names no issuer")
    if issuer is not None and not issuers_match(stated, issuer):
        raise AuthFailed(f"the {what} is for issuer {stated!r}, not {issuer!r}")
    token = _url(document, "token_endpoint", what, required=True)
    assert token is not None
    return ServerMetadata(
        stated, _url(document, "authorization_endpoint", what), token,
        _url(document, "registration_endpoint", what), _url(document, "revocation_endpoint", what),
        _strings(document.get("scopes_supported")), _strings(document.get("grant_types_supported")),
        _strings(document.get("token_endpoint_auth_methods_supported")),
        _strings(document.get("token_endpoint_auth_signing_alg_values_supported")),
        _strings(document.get("code_challenge_methods_supported")),
        document.get("client_id_metadata_document_supported") is True,
        document.get("authorization_response_iss_parameter_supported") is True,
        # Fields OpenID Connect Discovery 1.0 requires of a provider, and RFC 8414 does not name.
        openid_provider=any(key in document for key in OPENID_FIELDS))


def default_endpoints(server_url: str) -> ServerMetadata:
    """The 2025-03-26 fallback for a server with no metadata at all: endpoints at its origin."""
    origin = origin_of(server_url)
    return ServerMetadata(origin, origin + "/authorize", origin + "/token", origin + "/register",
                          discovered=False)


def choose_scope(challenged: Optional[str], resource: Optional[ResourceMetadata],
                 server: Optional[ServerMetadata], configured: Optional[str] = None) -> Optional[str]:
    """The scope to ask for: the config's, else the challenge's, else everything the resource
    lists, else none at all (the parameter left out). `offline_access` is added when the
    authorization server lists it, so a refresh token may come; never otherwise."""
    chosen = configured or challenged or (" ".join(resource.scopes_supported)
                                          if resource and resource.scopes_supported else None)
    offered = server.scopes_supported if server else None
    if chosen and offered and OFFLINE_ACCESS in offered and OFFLINE_ACCESS not in chosen.split():
        chosen += " " + OFFLINE_ACCESS
    return chosen or None


def consent_prompt(server: ServerMetadata, scope: Optional[str]) -> Optional[str]:
    """The authorization request's `prompt`: `consent` when it asks an OpenID provider for
    `offline_access`, which OpenID Connect Core (section 11) requires before a refresh token
    is granted (a provider may otherwise ignore offline_access, and then a person signs in
    again each time the access token expires); else none."""
    return "consent" if server.openid_provider and OFFLINE_ACCESS in (scope or "").split() else None


def login_advice(where: str, login: str, scope: Optional[str], again: bool) -> str:
    """What to run when a sign-in needs a person and none is here: `login`, with the scope a
    step-up asks for (quoted for a shell: it is the server's text), so that login asks for it."""
    if scope is not None:
        return f"{where} asks for more scope ({shown(scope, 100)}): run `{login} --scope {quote(shown(scope, 300))}`"
    why = "refused the stored token and it could not be renewed; " if again else "asks for a sign-in: "
    return f"{where} {why}run `{login}`"


def no_refresh_note(where: str, scope: Optional[str], tokens: Tokens) -> Optional[str]:
    """The line that says a refresh token was asked for (`offline_access`) and none came."""
    if OFFLINE_ACCESS not in (scope or "").split() or tokens.refresh_token is not None:
        return None
    lasts = f" (in {tokens.lifetime:g} s)" if tokens.lifetime is not None else ""
    return (f"{where}: its authorization server granted no refresh token, so you will be asked to sign in "
            f"again when the access token expires{lasts}")


def union_scopes(before: Optional[str], added: Optional[str]) -> Optional[str]:
    """A step-up asks for what it had and what the challenge adds, in that order, once each."""
    merged = list(dict.fromkeys((before or "").split() + (added or "").split()))
    return " ".join(merged) or None


def step_up_futile(granted: Optional[str], challenged: Optional[str]) -> bool:
    """A 403 `insufficient_scope` asking only for scopes already granted cannot be mended
    by signing in again: asking would loop (the conformance suite's retry-limit trap)."""
    wanted = set((challenged or "").split())
    return not wanted or wanted <= set((granted or "").split())


def choose_auth_method(*, has_secret: bool, has_key: bool, registered: Optional[str],
                       supported: Optional[Sequence[str]]) -> str:
    """How the client proves itself at the token endpoint: what its registration said,
    else a signed assertion for a key, else the secret as the server prefers, else none."""
    if registered:
        return registered
    if has_key:
        return "private_key_jwt"
    if not has_secret:
        return "none"
    offered = supported or DEFAULT_AUTH_METHODS
    return next((m for m in ("client_secret_basic", "client_secret_post") if m in offered), "client_secret_basic")


def registration_method(supported: Optional[Sequence[str]]) -> str:
    """What a dynamically registered client asks to use: a public client (PKCE is its proof)
    where the server allows one, else a secret sent the way the server takes it."""
    offered = supported or DEFAULT_AUTH_METHODS
    return next((m for m in ("none", "client_secret_basic", "client_secret_post") if m in offered), "none")


def unattended(server: ServerMetadata, *, configured: Optional[str], has_credentials: bool) -> bool:
    """Whether to use the client credentials grant (no person): the config asks for it, or the
    client holds credentials and the server offers that grant but no authorization code."""
    if configured:
        return configured == "client_credentials"
    grants = server.grant_types_supported or ()
    return has_credentials and "client_credentials" in grants and "authorization_code" not in grants
