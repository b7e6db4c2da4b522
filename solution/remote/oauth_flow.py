"""Signing in to one MCP server over HTTP: the I/O around oauth.py's rules.

`authorized` is the one place the HTTP client meets OAuth: every exchange
carries the server's access token when one is held, and a refusal that a
sign-in can mend (401, or 403 `insufficient_scope`) is handed to the server's
`Authorizer`, after which the request goes again. The Authorizer, in order:

1. a token that has expired is renewed with its refresh token before it is sent;
2. a 401 to a token: the refresh token is tried; refused too, the sign-in again;
3. a 401 without a token: discovery (oauth.py), then, with no person: an
   enterprise ID token exchanged for an ID-JAG (SEP-990) when the config holds
   one, the client credentials grant when the client is configured for it;
   else the authorization code with PKCE, which needs `settings.sign_in` (a
   person at a browser, or `follow`); without one the message says to run `login`;
4. a 403 `insufficient_scope`: a new authorization for what was granted plus
   what the challenge adds; a challenge for scopes already granted is refused
   at once, since asking again could only loop.

At most MAX_AUTHORIZATIONS in a row with no request accepted between, and
MAX_SENDS per request: a server that refuses every token is given up on, never
asked forever (one whose short tokens are renewed every few seconds is not).
Every renewal and new sign-in is said in one line (`settings.say`).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Dict, List, Mapping, Optional, Tuple

import anyio

from ..host.config import HostServerSpec
from ..untrusted import shown
from .config import OAuthConfig
from .http_wire import Exchange, Url
from .oauth import (AS_WELL_KNOWN, AuthFailed, Challenge, OAuthSettings, ResourceMetadata, ServerMetadata, SignIn,
                    as_metadata_urls, bearer_challenge, canonical_resource, choose_auth_method, choose_scope,
                    consent_prompt, default_endpoints, login_advice, mendable, no_refresh_note, origin_of, prm_urls,
                    registration_method, resource_allowed, resource_metadata, secure_enough, server_metadata, split,
                    step_up_futile, unattended, union_scopes)
from .oauth_forms import (JWT_BEARER, Attempt, authorization_url, client_authentication, code_from_redirect,
                          configured_client, exchange_form, issued_assertion, registered_client, registration_document,
                          storable, token_form, tokens_from)
from .oauth_http import probe, send
from ..host.safe_files import UnsafeFile
from ..untrusted import shown
from .tokens import Client, Record, Tokens, record_key

MAX_AUTHORIZATIONS = 3  # sign-ins and credential grants for one server with no request accepted between
MAX_SENDS = 4  # one request: the first try, a renewal or sign-in, and two step-ups


def authorizer_for(spec: HostServerSpec, settings: Optional[OAuthSettings]) -> "Optional[Authorizer]":
    """The server's Authorizer, unless OAuth is off for it: no settings, or a config that sends
    its own Authorization header (a token the user manages; a 401 then says it was refused)."""
    if settings is None or any(name.lower() == "authorization" for name in spec.headers):
        return None
    return Authorizer(spec, settings)


class Authorizer:
    """One server's sign-in for this run: its tokens, and how to get new ones."""

    def __init__(self, spec: HostServerSpec, settings: OAuthSettings) -> None:
        assert spec.url is not None
        self.spec = spec
        self.url: str = spec.url
        self.settings = settings
        self.where = f"server '{spec.alias}'"
        self.key = record_key(spec.alias, self.url, self.oauth.client_id)  # the tokens file's record
        try:
            self.record = settings.store.get(self.key)
        except UnsafeFile as exc:  # a refusal like any other: one line
            raise AuthFailed(f"{self.where}: the tokens file cannot be used: {exc}") from None
        self.generation = 0  # grows with every new token: a request sent with an older one just goes again
        self.authorizations = 0  # since the server last accepted a request
        # Set when the server wants a sign-in nobody here can give: later requests in this run
        # fail with it at once, rather than ask the server again for the same answer.
        self.verdict: Optional[AuthFailed] = None
        self._found: Optional[Tuple[Optional[ResourceMetadata], ServerMetadata]] = None
        self._lock = anyio.Lock()

    @property
    def oauth(self) -> OAuthConfig:
        return self.spec.oauth or OAuthConfig()

    @property
    def resource(self) -> str:
        return self.record.resource or canonical_resource(self.url)

    def credentials(self) -> Tuple[int, List[Tuple[str, str]]]:
        tokens = self.record.tokens
        return self.generation, [("Authorization", f"Bearer {tokens.access_token}")] if tokens else []

    # -- the public steps, each under the lock, each failure prefixed with the server ---------------

    async def ready(self) -> None:
        """Before a request: an expired token renewed, or dropped (so the server asks anew)."""
        tokens = self.record.tokens
        if tokens is None or not tokens.expired(self.settings.clock()):
            return
        async with self._lock, self._named():
            if self.record.tokens is not tokens:
                return  # renewed meanwhile
            if await self._refresh():
                self.settings.say(f"{self.where}: the access token had expired; renewed it with the refresh token")
            else:
                self._keep(tokens=None)

    async def challenged(self, status: int, header: Optional[str], generation: int) -> None:
        """Mend a refusal so the request can go again, or raise AuthFailed saying why not."""
        challenge = bearer_challenge(header)
        async with self._lock, self._named():
            if generation != self.generation:
                return  # another request renewed the token meanwhile
            if status == 403:
                return await self._step_up(challenge)
            held = self.record.tokens
            if held is not None and await self._refresh():
                self.settings.say(f"{self.where} refused the access token; renewed it with the refresh token")
                return
            if held is not None:
                self._keep(tokens=None)
            await self._authorize(challenge, None, again=held is not None)

    async def sign_in(self, scope: Optional[str] = None) -> Tokens:
        """`login`: a new sign-in, whatever is held, on the server's own challenge; for `scope`
        when given (a server's step-up said which), else as a first request would ask."""
        async with self._lock, self._named():
            status, header = await self._probe()
            if status not in (401, 403):
                raise AuthFailed(f"does not ask for a sign-in (it answered HTTP {status} to a request without one)")
            self._found = None
            self._keep(tokens=None)
            await self._authorize(bearer_challenge(header), None, configured=scope)
            assert self.record.tokens is not None
            return self.record.tokens

    async def sign_out(self) -> Tuple[bool, str]:
        """`logout`: forget the server's tokens and registration, telling the authorization server
        (RFC 7009) where it offers that. Returns whether anything was kept, and a note."""
        async with self._lock, self._named():
            record = self.settings.store.forget(self.key)
            self.record = Record()
            tokens, client = record.tokens, configured_client(self.oauth, record)
            if tokens is None or not record.revocation_endpoint or client is None:
                return record.client is not None or tokens is not None, ""
            token = tokens.refresh_token or tokens.access_token
            try:
                headers, fields = client_authentication(client.auth_method or "none", client,
                                                        audience=record.issuer or "", key_pem=self._key())
                status, _ = await self._send(record.revocation_endpoint, "POST", headers,
                                             {"token": token, **fields})
            except AuthFailed as exc:
                return True, f" (the authorization server was not told: {exc})"
            return True, "" if status == 200 else f" (the authorization server answered HTTP {status} to revoking it)"

    @asynccontextmanager
    async def _named(self) -> AsyncIterator[None]:
        try:
            yield
        except (AuthFailed, UnsafeFile) as exc:  # an unusable tokens file is a refusal like any other
            text = str(exc) if isinstance(exc, AuthFailed) else f"the tokens file cannot be used: {exc}"
            raise AuthFailed(text if text.startswith(self.where) else f"{self.where}: {text}") from None

    # -- the steps themselves (the lock held) ------------------------------------------------------

    async def _step_up(self, challenge: Challenge) -> None:
        granted = self.record.tokens.scope if self.record.tokens else None
        if step_up_futile(granted, challenge.scope):
            raise AuthFailed(f"{self.where} refused the token for want of scope "
                             f"{shown(challenge.scope or '(none named)', 100)}, which it already has; "
                             "not signing in again")
        scope = union_scopes(granted, challenge.scope)
        if self.settings.sign_in is not None:
            self.settings.say(f"{self.where} asks for more scope ({shown(scope, 100)}); signing in again for it")
        await self._authorize(challenge, scope)

    async def _authorize(self, challenge: Challenge, scope: Optional[str], *, again: bool = False,
                         configured: Optional[str] = None) -> None:
        """A new token: `scope` (a step-up's), else the one chosen by `configured` (login's
        --scope), the config's, the challenge's or the resource's (oauth.choose_scope)."""
        if self.authorizations >= MAX_AUTHORIZATIONS:
            raise AuthFailed(f"{self.where} still refuses after {MAX_AUTHORIZATIONS} sign-ins in a row; giving up")
        found, server = await self._discover(challenge)
        oauth = self.oauth
        stepping_up = scope is not None
        scope = scope or choose_scope(challenge.scope, found, server, configured or oauth.scope)
        if oauth.id_token:  # enterprise-managed: the identity provider vouches, no person here
            assert oauth.client_id is not None  # config.py: an ID token comes with the client's id and secret
            self.authorizations += 1
            client = Client(oauth.client_id, oauth.client_secret)
            tokens = await self._identity_assertion(server, client, scope)
        elif unattended(server, configured=oauth.grant, has_credentials=bool(oauth.client_secret or oauth.key_file)):
            assert oauth.client_id is not None  # config.py: a secret or key comes with its id
            self.authorizations += 1
            client = Client(oauth.client_id, oauth.client_secret)
            form = token_form("client_credentials", resource=self.resource, scope=scope)
            tokens = await self._token(server, client, form, scope)
        else:
            sign_in = self.settings.sign_in
            if sign_in is None:
                login = f"{self.settings.command} login {self.spec.alias}"
                self.verdict = AuthFailed(login_advice(self.where, login, scope if stepping_up else None, again))
                raise self.verdict
            if again:
                self.settings.say(f"{self.where} refused the access token and it could not be renewed; "
                                  "signing in again")
            self.authorizations += 1
            client, tokens = await self._authorization_code(server, scope, sign_in)
            note = no_refresh_note(self.where, scope, tokens)
            if note is not None:
                self.settings.say(note)
        self.record = Record(server.issuer, self.resource, server.token_endpoint, server.revocation_endpoint,
                             storable(self.oauth, client), None)
        self._keep(tokens=tokens)

    async def _discover(self, challenge: Challenge) -> Tuple[Optional[ResourceMetadata], ServerMetadata]:
        if self._found is not None:
            return self._found
        found: Optional[ResourceMetadata] = None
        for url in prm_urls(self.url, challenge.resource_metadata):
            status, body = await self._get(url)
            if status == 200 and isinstance(body, dict):
                found = resource_metadata(body)
                break
            if status >= 500 or status == 429:
                raise AuthFailed(f"its protected resource metadata could not be read (HTTP {status})")
        if found is None:  # a 2025-03-26 server: its own origin is the authorization server
            status, body = await self._get(origin_of(self.url) + AS_WELL_KNOWN)
            server = server_metadata(body, None) if status == 200 and isinstance(body, dict) \
                else default_endpoints(self.url)
        else:
            if not resource_allowed(self.url, found.resource):
                raise AuthFailed(f"its metadata speaks for another resource ({shown(found.resource, 100)}); "
                                 "not signing in for it")
            self.record.resource = found.resource
            issuer = found.authorization_servers[0]
            server = await self._server_metadata(issuer)
        self._found = (found, server)
        return self._found

    async def _server_metadata(self, issuer: str) -> ServerMetadata:
        if not secure_enough(issuer):
            raise AuthFailed(f"its authorization server {shown(issuer, 100)} does not use https")
        for url in as_metadata_urls(issuer):
            status, body = await self._get(url)
            if status == 200 and isinstance(body, dict):
                return server_metadata(body, issuer)
            if status >= 500 or status == 429:
                break
        raise AuthFailed(f"no metadata could be found for its authorization server {shown(issuer, 100)}")

    async def _authorization_code(self, server: ServerMetadata, scope: Optional[str],
                                  sign_in: SignIn) -> Tuple[Client, Tokens]:
        from .sign_in import port_free, redirect_listener  # the listener's h11 server side: only here

        if server.authorization_endpoint is None:
            raise AuthFailed("its authorization server names no authorization endpoint")
        if server.discovered and "S256" not in (server.code_challenge_methods_supported or ()):
            raise AuthFailed("its authorization server does not offer PKCE with S256, which the MCP "
                             "authorization spec requires; not signing in")
        held = self.record.client
        stored = split(held.redirect_uri).port if held and held.registered and held.redirect_uri else None
        port = self.oauth.redirect_port or (stored if stored and port_free(stored) else 0)
        async with redirect_listener(port) as redirect:
            client = await self._client(server, scope, redirect.uri)
            attempt = Attempt.new(redirect.uri)
            redirect.state = attempt.state  # the listener takes only the redirect that carries it
            await sign_in(authorization_url(server.authorization_endpoint, client_id=client.client_id,
                                            attempt=attempt, resource=self.resource, scope=scope,
                                            prompt=consent_prompt(server, scope)),
                          redirect, self.where)
            code = code_from_redirect(redirect.target or "", attempt, issuer=server.issuer,
                                      iss_required=server.iss_parameter_supported)
        form = token_form("authorization_code", resource=self.resource, code=code, attempt=attempt)
        return client, await self._token(server, client, form, scope)

    async def _identity_assertion(self, server: ServerMetadata, client: Client, scope: Optional[str]) -> Tokens:
        """SEP-990: the ID token exchanged at the identity provider for an ID-JAG, which the
        MCP server's authorization server takes as a JWT bearer grant."""
        oauth = self.oauth
        assert oauth.id_token is not None and oauth.idp_token_endpoint is not None
        form = exchange_form(id_token=oauth.id_token, audience=server.issuer, resource=self.resource, scope=scope,
                             client_id=oauth.idp_client_id)
        headers: Dict[str, str] = {}
        if oauth.idp_client_id and oauth.idp_client_secret:
            headers, fields = client_authentication("client_secret_basic", Client(oauth.idp_client_id,
                                                                                  oauth.idp_client_secret),
                                                    audience=oauth.idp_token_endpoint)
            form.pop("client_id")
        status, body = await self._send(oauth.idp_token_endpoint, "POST", headers, form)
        grant = token_form(JWT_BEARER, resource=self.resource, scope=scope, assertion=issued_assertion(status, body))
        return await self._token(server, client, grant, scope)

    async def _client(self, server: ServerMetadata, scope: Optional[str], redirect_uri: str) -> Client:
        """Who this client is to the authorization server: the config's, the one registered
        before, a Client ID Metadata Document, or a new dynamic registration (RFC 7591)."""
        oauth, held = self.oauth, self.record.client
        if oauth.client_id:
            return Client(oauth.client_id, oauth.client_secret, None, redirect_uri)
        if held and held.registered and held.issuer == server.issuer and held.redirect_uri == redirect_uri:
            return held
        if oauth.client_metadata_url and server.client_id_metadata_document_supported:
            return Client(oauth.client_metadata_url, None, "none", redirect_uri)
        if server.registration_endpoint is None:
            raise AuthFailed("its authorization server registers no clients, and the config names none "
                             '(give "oauth": {"clientId": ...} for this server)')
        document = registration_document(redirect_uri=redirect_uri, scope=scope,
                                         auth_method=registration_method(server.token_endpoint_auth_methods_supported),
                                         grant_types=["authorization_code", "refresh_token"])
        status, body = await self._send(server.registration_endpoint, "POST", {}, document=document)
        return registered_client(status, body, issuer=server.issuer, redirect_uri=redirect_uri)

    async def _token(self, server: ServerMetadata, client: Client, form: Dict[str, str],
                     scope: Optional[str], before: Optional[Tokens] = None) -> Tokens:
        key = self._key()
        method = choose_auth_method(has_secret=bool(client.client_secret), has_key=key is not None,
                                    registered=client.auth_method,
                                    supported=server.token_endpoint_auth_methods_supported)
        headers, fields = client_authentication(method, client, audience=server.issuer, key_pem=key)
        status, body = await self._send(server.token_endpoint, "POST", headers, {**form, **fields})
        client.auth_method = method  # kept, so a refresh authenticates the same way
        return tokens_from(status, body, asked_scope=scope, before=before, now=self.settings.clock())

    async def _refresh(self) -> bool:
        record = self.record
        tokens, client = record.tokens, configured_client(self.oauth, record)
        if tokens is None or not tokens.refresh_token or not record.token_endpoint or client is None:
            return False
        server = ServerMetadata(record.issuer or "", None, record.token_endpoint)
        form = token_form("refresh_token", resource=self.resource, refresh_token=tokens.refresh_token)
        try:
            renewed = await self._token(server, client, form, tokens.scope, before=tokens)
        except AuthFailed:
            return False  # refused (or unreachable): a sign-in is what is left
        self._keep(tokens=renewed)
        return True

    # -- keeping and sending -------------------------------------------------------------------------

    def _keep(self, *, tokens: Optional[Tokens]) -> None:
        self.record.tokens = tokens
        if tokens is not None:
            self.verdict = None
        self.generation += 1
        self.settings.store.put(self.key, self.record)  # an unusable file: _named says so, in one line

    def _key(self) -> Optional[str]:
        if not self.oauth.key_file:
            return None
        try:
            with open(self.oauth.key_file, encoding="utf-8") as file:
                return file.read(64 * 1024)
        except OSError as exc:
            raise AuthFailed(f"cannot read the key file {self.oauth.key_file}: {exc.strerror}") from None

    async def _probe(self) -> Tuple[int, Optional[str]]:
        return await probe(self.url, self.spec.headers, timeout=self.settings.timeout)

    async def _get(self, url: str) -> Tuple[int, Any]:
        return await send(url, "GET", {}, timeout=self.settings.timeout)

    async def _send(self, url: str, method: str, headers: Mapping[str, str], form: Optional[Dict[str, str]] = None,
                    *, document: Optional[Dict[str, Any]] = None) -> Tuple[int, Any]:
        return await send(url, method, headers, form, document=document, timeout=self.settings.timeout)


@asynccontextmanager
async def authorized(auth: Optional[Authorizer], url: Url, method: str, headers: List[Tuple[str, str]],
                     body: bytes = b"", *, renew: bool = True) -> AsyncIterator[Exchange]:
    """An exchange carrying the server's access token (when `auth` holds one); a refusal a
    sign-in can mend is mended and the request sent again. `renew=False` (a DELETE on the
    way out): the token is sent, and nothing is renewed."""
    if auth is None:
        async with Exchange(url, method, headers, body) as plain:
            yield plain
        return
    if renew:
        await auth.ready()
        if auth.verdict is not None and auth.record.tokens is None:
            raise auth.verdict  # said a moment ago: asking the server again would only repeat it
    for attempt in range(MAX_SENDS):
        generation, token = auth.credentials()
        async with Exchange(url, method, [*headers, *token], body) as sent:
            status, header = sent.response.status, sent.response.headers.get("www-authenticate")
            if not renew or not mendable(status, header) or attempt == MAX_SENDS - 1:
                if token and not mendable(status, header):
                    auth.authorizations = 0  # the server took the token: the sign-ins so far were not refused
                yield sent
                return
        await auth.challenged(status, header, generation)  # the refused exchange closed first
