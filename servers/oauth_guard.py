"""`--http PORT --auth`: a small OAuth 2.1 authorization server in front of a fixture,
on the same port (standard library only), so a sign-in can be watched on the wire.

The MCP endpoint then wants `Authorization: Bearer <token>`: without one (or with
a bad one) it answers 401 with `WWW-Authenticate: Bearer resource_metadata=...,
scope="mcp:read"`; a call of a tool not marked read-only wants `mcp:write` too
(403 `insufficient_scope`, naming both). Beside it, on the same origin:

  /.well-known/oauth-protected-resource/mcp   RFC 9728 metadata
  /.well-known/oauth-authorization-server     RFC 8414 metadata (the issuer is the origin)
  /register                                    RFC 7591 dynamic registration
  /authorize                                   authorization code + PKCE S256, resource required
  /token                                       authorization_code, refresh_token, client_credentials
  /revoke                                      RFC 7009 revocation

`--auth ask` (the default) shows a page with Approve and Deny for a person;
`--auth auto` approves at once with a redirect (tests follow it with a GET).
Refresh tokens come only with `offline_access`, and each is used once (a
refresh hands out a new one). `--openid` makes it an OpenID provider as the
certified ones behave: its metadata only at OpenID discovery's URL (with the
fields that spec requires), and `offline_access` honoured only when the
authorization request says `prompt=consent` (OpenID Connect Core, section
11); otherwise the code's tokens come with no refresh token. `--token-ttl S` sets how long access tokens last;
`--auth-client ID=SECRET` pre-registers a confidential client. The journal
records each step (`oauth`), never a token. Everything lives in memory: a
restart forgets every client and token, which is also how a test revokes all.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import secrets
import threading
import time
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from servers.rpc import Json

Answer = Tuple[int, List[Tuple[str, str]], bytes]

READ, WRITE, OFFLINE = "mcp:read", "mcp:write", "offline_access"
SCOPES = [READ, WRITE, OFFLINE]
CODE_TTL = 60.0  # seconds an authorization code may wait for its exchange
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")
PRM_PATH = "/.well-known/oauth-protected-resource/mcp"
AS_PATH = "/.well-known/oauth-authorization-server"
OIDC_PATH = "/.well-known/openid-configuration"


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def json_answer(status: int, body: Any, headers: Optional[List[Tuple[str, str]]] = None) -> Answer:
    return status, [("Content-Type", "application/json"), ("Cache-Control", "no-store"), *(headers or [])], \
        json.dumps(body).encode()


def oauth_error(status: int, error: str, description: str) -> Answer:
    return json_answer(status, {"error": error, "error_description": description})


def same_redirect(registered: str, given: str) -> bool:
    """Exact, except that a loopback redirect's port may differ (RFC 8252 section 7.3)."""
    if registered == given:
        return True
    a, b = urlsplit(registered), urlsplit(given)
    return a.hostname in LOOPBACK and (a.scheme, a.hostname, a.path) == (b.scheme, b.hostname, b.path)


class AuthServer:
    """The authorization server's state and rules: requests in, answers out (no sockets)."""

    def __init__(self, base: str, mode: str = "ask", token_ttl: float = 3600.0,
                 clients: Optional[Dict[str, str]] = None, journal: Any = None, openid: bool = False) -> None:
        self.base = base  # http://127.0.0.1:PORT: the issuer, and the resource's origin
        self.mode = mode
        self.token_ttl = token_ttl
        self.openid = openid
        self.journal = journal
        self.lock = threading.Lock()
        self.clients: Dict[str, Json] = {cid: {"client_id": cid, "client_secret": secret, "redirect_uris": [],
                                                "token_endpoint_auth_method": "client_secret_basic"}
                                         for cid, secret in (clients or {}).items()}
        self.pending: Dict[str, Json] = {}  # an approval page's transaction -> the request it shows
        self.codes: Dict[str, Json] = {}
        self.access: Dict[str, Json] = {}  # token -> {client_id, scope, expires_at, grant}
        self.refresh: Dict[str, Json] = {}  # token -> {client_id, scope, grant}

    @property
    def resource(self) -> str:
        return self.base + "/mcp"

    def note(self, step: str, **fields: Any) -> None:
        if self.journal is not None:
            self.journal.record("oauth", step=step, **fields)

    # -- metadata ---------------------------------------------------------------------------

    def resource_metadata(self) -> Answer:
        return json_answer(200, {"resource": self.resource, "authorization_servers": [self.base],
                                 "scopes_supported": [READ, WRITE], "bearer_methods_supported": ["header"]})

    @property
    def metadata_path(self) -> str:
        """Where its metadata is served: RFC 8414's URL, or (an OpenID provider) only discovery's."""
        return OIDC_PATH if self.openid else AS_PATH

    def server_metadata(self) -> Answer:
        provider = {"id_token_signing_alg_values_supported": ["RS256"], "subject_types_supported": ["public"]}
        return json_answer(200, {**(provider if self.openid else {}),
            "issuer": self.base, "authorization_endpoint": self.base + "/authorize",
            "token_endpoint": self.base + "/token", "registration_endpoint": self.base + "/register",
            "revocation_endpoint": self.base + "/revoke", "scopes_supported": SCOPES,
            "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"]})

    def challenge(self, status: int, scope: str, error: Optional[str] = None) -> Answer:
        fields = ([f'error="{error}"'] if error else []) + [f'scope="{scope}"',
                                                            f'resource_metadata="{self.base}{PRM_PATH}"']
        body = {"error": error or "invalid_token", "error_description": "sign in to use this server"}
        return json_answer(status, body, [("WWW-Authenticate", "Bearer " + ", ".join(fields))])

    # -- the resource's side ----------------------------------------------------------------

    def admit(self, authorization: Optional[str], needs_write: bool) -> Optional[Answer]:
        """None when the request may go on; else the 401 or 403 to answer with."""
        token = authorization[7:].strip() if authorization and authorization[:7].lower() == "bearer " else None
        with self.lock:
            grant = self.access.get(token or "")
            if grant is not None and grant["expires_at"] <= time.time():
                self.access.pop(token or "", None)
                grant = None
        if grant is None:
            self.note("refused", why="no token" if token is None else "unknown, revoked or expired token")
            return self.challenge(401, READ, None if token is None else "invalid_token")
        wanted = [READ, WRITE] if needs_write else [READ]
        if not set(wanted) <= set(grant["scope"].split()):
            self.note("refused", why="insufficient scope", wanted=" ".join(wanted))
            return self.challenge(403, " ".join(wanted), "insufficient_scope")
        return None

    # -- the authorization server's side ----------------------------------------------------

    def register(self, body: bytes) -> Answer:
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        uris = document.get("redirect_uris") if isinstance(document, dict) else None
        if not isinstance(uris, list) or not all(isinstance(u, str) and urlsplit(u).hostname in LOOPBACK
                                                  for u in uris):
            return oauth_error(400, "invalid_redirect_uri", "redirect_uris must be loopback http URLs")
        assert isinstance(document, dict)
        method = document.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in ("none", "client_secret_basic", "client_secret_post"):
            return oauth_error(400, "invalid_client_metadata", f"unsupported token_endpoint_auth_method {method}")
        client: Json = {"client_id": "client-" + secrets.token_hex(8), "redirect_uris": uris,
                        "token_endpoint_auth_method": method, "client_name": document.get("client_name", ""),
                        "grant_types": document.get("grant_types", ["authorization_code"])}
        if method != "none":
            client["client_secret"] = secrets.token_urlsafe(24)
        with self.lock:
            self.clients[client["client_id"]] = client
        self.note("registered", client_id=client["client_id"], method=method)
        return json_answer(201, client)

    def authorize(self, query: Dict[str, str]) -> Answer:
        """GET /authorize: a bad client or redirect is shown, never redirected to; anything
        else wrong goes back to the client as an error; a good request is approved at once
        (`auto`) or shown to a person."""
        client = self.clients.get(query.get("client_id", ""))
        redirect = query.get("redirect_uri", "")
        registered = client.get("redirect_uris") if client else None
        if client is None or not redirect or (registered and not any(same_redirect(r, redirect)
                                                                      for r in registered)):
            return 400, [("Content-Type", "text/plain")], b"unknown client or redirect_uri"
        scope = query.get("scope") or READ
        problem = None
        if query.get("response_type") != "code":
            problem = ("unsupported_response_type", "only code")
        elif query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            problem = ("invalid_request", "PKCE with S256 is required")
        elif query.get("resource") != self.resource:
            problem = ("invalid_target", f"resource must be {self.resource}")
        elif not set(scope.split()) <= set(SCOPES):
            problem = ("invalid_scope", "unknown scope")
        request = {**query, "scope": scope}
        if problem is not None:
            self.note("authorize-refused", error=problem[0])
            return self.back(request, {"error": problem[0], "error_description": problem[1]})
        if self.mode == "auto":
            return self.approve(request)
        txn = secrets.token_urlsafe(16)
        with self.lock:
            self.pending[txn] = request
        page = (f"<!doctype html><title>Sign in</title><h1>Allow {html.escape(client.get('client_name') or '')}"
                f" ({html.escape(client['client_id'])})?</h1><p>It asks for: {html.escape(scope)}</p>"
                f"<form method=post action=/authorize><input type=hidden name=txn value={txn}>"
                f"<button name=decision value=approve>Approve</button> "
                f"<button name=decision value=deny>Deny</button></form>")
        return 200, [("Content-Type", "text/html; charset=utf-8")], page.encode()

    def decide(self, form: Dict[str, str]) -> Answer:
        with self.lock:
            request = self.pending.pop(form.get("txn", ""), None)
        if request is None:
            return 400, [("Content-Type", "text/plain")], b"no such sign-in (it may have been answered)"
        if form.get("decision") != "approve":
            self.note("denied", client_id=request["client_id"])
            return self.back(request, {"error": "access_denied", "error_description": "the person said no"})
        return self.approve(request)

    def approve(self, request: Json) -> Answer:
        code = secrets.token_urlsafe(24)
        with self.lock:
            self.codes[code] = {**request, "expires_at": time.time() + CODE_TTL}
        self.note("approved", client_id=request["client_id"], scope=request["scope"], prompt=request.get("prompt"))
        return self.back(request, {"code": code})

    def back(self, request: Json, fields: Dict[str, str]) -> Answer:
        params = {**fields, "iss": self.base, **({"state": request["state"]} if request.get("state") else {})}
        joiner = "&" if "?" in request["redirect_uri"] else "?"
        return 302, [("Location", request["redirect_uri"] + joiner + urlencode(params))], b""

    def authenticated(self, form: Dict[str, str], authorization: Optional[str]) -> Optional[Json]:
        """The client a token request comes from, checked the way it registered (None: refused)."""
        given_id, secret = form.get("client_id"), form.get("client_secret")
        if authorization and authorization[:6].lower() == "basic ":
            try:
                pair = base64.b64decode(authorization[6:]).decode()
            except ValueError:
                return None
            given_id, _, secret = (unquote(part) for part in pair.partition(":"))
        client = self.clients.get(given_id or "")
        if client is None:
            return None
        if client["token_endpoint_auth_method"] == "none":
            return client
        expected = client.get("client_secret", "")
        return client if secret is not None and secrets.compare_digest(secret, expected) else None

    def token(self, form: Dict[str, str], authorization: Optional[str]) -> Answer:
        client = self.authenticated(form, authorization)
        if client is None:
            self.note("token-refused", error="invalid_client")
            return oauth_error(401, "invalid_client", "client authentication failed")
        grant = form.get("grant_type")
        with self.lock:
            if grant == "authorization_code":
                found = self.codes.pop(form.get("code", ""), None)
                if found is None or found["expires_at"] < time.time() or found["client_id"] != client["client_id"] \
                        or found["redirect_uri"] != form.get("redirect_uri") \
                        or s256(form.get("code_verifier", "")) != found["code_challenge"]:
                    return self.refused("invalid_grant", "the code is unknown, used, expired, or not this client's")
                scope = found["scope"]
                offline = OFFLINE in scope.split() and (not self.openid or found.get("prompt") == "consent")
            elif grant == "refresh_token":
                held = self.refresh.pop(form.get("refresh_token", ""), None)  # used once
                if held is None or held["client_id"] != client["client_id"]:
                    return self.refused("invalid_grant", "the refresh token is unknown, used or revoked")
                scope, offline = held["scope"], True
            elif grant == "client_credentials" and client["token_endpoint_auth_method"] != "none":
                scope = " ".join(s for s in (form.get("scope") or READ).split() if s != OFFLINE)
                offline = False
            else:
                return self.refused("unsupported_grant_type", f"grant {grant!r} is not offered to this client")
            if form.get("resource", self.resource) != self.resource:
                return self.refused("invalid_target", f"resource must be {self.resource}")
            access = secrets.token_urlsafe(32)
            self.access[access] = {"client_id": client["client_id"], "scope": scope,
                                   "expires_at": time.time() + self.token_ttl}
            answer: Json = {"access_token": access, "token_type": "Bearer", "expires_in": int(self.token_ttl),
                            "scope": scope}
            if offline:
                answer["refresh_token"] = secrets.token_urlsafe(32)
                self.refresh[answer["refresh_token"]] = {"client_id": client["client_id"], "scope": scope}
        self.note("token", grant=grant, client_id=client["client_id"], scope=scope,
                  refresh_token="refresh_token" in answer)
        return json_answer(200, answer)

    def refused(self, error: str, description: str) -> Answer:
        self.note("token-refused", error=error)
        return oauth_error(400, error, description)

    def revoke(self, form: Dict[str, str]) -> Answer:
        token = form.get("token", "")
        with self.lock:
            gone = self.access.pop(token, None) or self.refresh.pop(token, None)
            if gone is not None:  # the whole grant goes: its other tokens too
                for table in (self.access, self.refresh):
                    for other in [t for t, g in table.items() if g["client_id"] == gone["client_id"]]:
                        del table[other]
        self.note("revoked", found=gone is not None)
        return 200, [("Content-Length", "0")], b""


def guarded(handler: type, shell: Any) -> type:
    """`handler` (over_http.py's) behind the authorization server, when `--auth` is given."""
    if not getattr(shell.options, "auth", None):
        return handler
    auth: List[AuthServer] = []  # made on the first request, when the port is known
    clients = dict(pair.partition("=")[::2] for pair in shell.options.auth_client)

    class Guarded(handler):  # type: ignore[misc]
        def state(self) -> AuthServer:
            if not auth:
                auth.append(AuthServer(f"http://127.0.0.1:{self.server.server_address[1]}", shell.options.auth,
                                       shell.options.token_ttl, clients, shell.journal, shell.options.openid))
            return auth[0]

        def answer(self, reply: Answer) -> None:
            status, headers, body = reply
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            if not any(name.lower() == "content-length" for name, _ in headers):
                self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

        def form(self) -> Tuple[bytes, Dict[str, str]]:
            size = self.headers.get("Content-Length") or "0"
            body = self.rfile.read(int(size)) if size.isdigit() else b""
            return body, dict(parse_qsl(body.decode("utf-8", "replace")))

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            state = self.state()
            routes = {PRM_PATH: state.resource_metadata, state.metadata_path: state.server_metadata}
            if path in routes:
                return self.answer(routes[path]())
            if path == "/authorize":
                return self.answer(state.authorize(dict(parse_qsl(query))))
            refused = state.admit(self.headers.get("Authorization"), False)
            if refused:
                return self.answer(refused)
            super().do_GET()

        def do_DELETE(self) -> None:
            refused = self.state().admit(self.headers.get("Authorization"), False)
            if refused:
                return self.answer(refused)
            super().do_DELETE()

        def do_POST(self) -> None:
            path = self.path.partition("?")[0]
            body, form = self.form()
            state = self.state()
            routes = {"/register": lambda: state.register(body), "/authorize": lambda: state.decide(form),
                      "/token": lambda: state.token(form, self.headers.get("Authorization")),
                      "/revoke": lambda: state.revoke(form)}
            if path in routes:
                return self.answer(routes[path]())
            refused = state.admit(self.headers.get("Authorization"), self.writes(body))
            if refused:
                return self.answer(refused)
            self.rfile = io.BytesIO(body)  # the fixture's own handler reads the body again
            super().do_POST()

        def writes(self, body: bytes) -> bool:
            """A call of a tool not marked read-only (it needs mcp:write)."""
            try:
                message = json.loads(body)
            except ValueError:
                return False
            if not isinstance(message, dict) or message.get("method") != "tools/call":
                return False
            given = message.get("params")
            params: Json = given if isinstance(given, dict) else {}
            front = shell.server  # the handshake era's front wraps the server that has the tools
            tools = getattr(front, "tools", None) or getattr(getattr(front, "server", None), "tools", [])
            tool = next((t for t in tools if t.name == params.get("name")), None)
            return tool is not None and not (tool.annotations or {}).get("readOnlyHint")

    return Guarded
