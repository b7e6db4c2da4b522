"""The requests OAuth 2.1 makes, and reading their answers, with no I/O: PKCE, the
authorization URL, the token endpoint's forms and client authentication, the
registration document, the redirect's query and the token response.

Standard library only (hashlib, secrets, base64, urllib.parse): PKCE and form
encoding are a few lines each, and the lab shows its wire shapes in plain view.
The one exception is a signed client assertion (`private_key_jwt`), which needs
public-key signatures the standard library does not have: PyJWT (with
`cryptography`) is imported for it, and only when a key file is configured.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from ..untrusted import keep_secret, shown
from .config import OAuthConfig
from .oauth import AuthFailed
from .tokens import Client, Record, Tokens

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"  # RFC 7523: an assertion as the grant
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"  # RFC 8693
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"  # SEP-990's identity assertion grant
ASSERTION_LIFETIME = 300  # seconds a signed client assertion is good for
MAX_LIFETIME = 10 * 365 * 24 * 3600  # seconds: an access token said to last longer is refused
CLIENT_NAME = "mcp-client-lab"


def s256(verifier: str) -> str:
    """The PKCE S256 challenge: BASE64URL(SHA256(verifier)) without padding (RFC 7636 4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


@dataclass(frozen=True)
class Attempt:
    """One authorization request's secrets, kept until its redirect comes back."""

    state: str
    verifier: str
    redirect_uri: str

    @classmethod
    def new(cls, redirect_uri: str) -> "Attempt":
        # 32 random bytes give a 43-character verifier, the least RFC 7636 allows.
        attempt = cls(secrets.token_urlsafe(32), secrets.token_urlsafe(48), redirect_uri)
        keep_secret(attempt.verifier)
        return attempt


def authorization_url(endpoint: str, *, client_id: str, attempt: Attempt, resource: str,
                      scope: Optional[str], prompt: Optional[str] = None) -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": attempt.redirect_uri,
              "state": attempt.state, "code_challenge": s256(attempt.verifier), "code_challenge_method": "S256",
              "resource": resource}
    if scope:
        params["scope"] = scope
    if prompt:  # oauth.consent_prompt: an OpenID provider's condition for a refresh token
        params["prompt"] = prompt
    joiner = "&" if urlsplit(endpoint).query else "?"
    return endpoint + joiner + urlencode(params)


def code_from_redirect(target: str, attempt: Attempt, *, issuer: str, iss_required: bool) -> str:
    """The authorization code from the redirect's request target, once its `state` is
    ours (RFC 6749 10.12) and its `iss`, if any, names the server asked (RFC 9207)."""
    query = dict(parse_qsl(urlsplit(target).query, keep_blank_values=True))
    if not secrets.compare_digest(query.get("state", ""), attempt.state):
        raise AuthFailed("the sign-in's answer did not carry this sign-in's state; it was refused")
    iss = query.get("iss")
    if (iss is not None and iss != issuer) or (iss is None and iss_required):
        raise AuthFailed("the sign-in's answer came from another authorization server (iss); it was refused")
    if "error" in query:
        described = query.get("error_description")
        raise AuthFailed(f"the authorization server refused the sign-in: {shown(query['error'], 60)}"
                         + (f" ({shown(described, 200)})" if described else ""))
    code = query.get("code")
    if not code:
        raise AuthFailed("the sign-in's answer carried no authorization code")
    keep_secret(code)
    return code


def registration_document(*, redirect_uri: Optional[str], auth_method: str, scope: Optional[str],
                          grant_types: List[str]) -> Dict[str, Any]:
    """What RFC 7591 dynamic registration sends for this client."""
    document: Dict[str, Any] = {"client_name": CLIENT_NAME, "grant_types": grant_types,
                                "token_endpoint_auth_method": auth_method}
    if redirect_uri:
        document["redirect_uris"] = [redirect_uri]
        document["response_types"] = ["code"]
    if scope:
        document["scope"] = scope
    return document


def registered_client(status: int, body: Any, *, issuer: str, redirect_uri: Optional[str]) -> Client:
    if status not in (200, 201) or not isinstance(body, dict) or not isinstance(body.get("client_id"), str):
        raise AuthFailed(f"the authorization server refused to register this client ({refusal(status, body)})")
    secret = body.get("client_secret")
    method = body.get("token_endpoint_auth_method")
    client = Client(body["client_id"], secret if isinstance(secret, str) else None,
                    method if isinstance(method, str) else None, redirect_uri, issuer, registered=True)
    if client.client_secret:
        keep_secret(client.client_secret)
    return client


def client_authentication(method: str, client: Client, *, audience: str,
                          key_pem: Optional[str] = None) -> Tuple[Dict[str, str], Dict[str, str]]:
    """(headers, form fields) that authenticate `client` at the token endpoint by `method`."""
    if method == "client_secret_basic" and client.client_secret:
        # RFC 6749 2.3.1: each part form-encoded, then joined by ':' and Base64.
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        basic = base64.b64encode(pair.encode("utf-8")).decode("ascii")
        keep_secret(basic)
        return {"Authorization": f"Basic {basic}"}, {}
    if method == "client_secret_post" and client.client_secret:
        return {}, {"client_id": client.client_id, "client_secret": client.client_secret}
    if method == "private_key_jwt":
        if key_pem is None:
            raise AuthFailed("the authorization server wants a signed assertion (private_key_jwt), "
                             "and the config gives no key file")
        return {}, {"client_id": client.client_id, "client_assertion_type": ASSERTION_TYPE,
                    "client_assertion": client_assertion(client.client_id, audience, key_pem)}
    if method in ("none", "client_secret_basic", "client_secret_post"):
        return {}, {"client_id": client.client_id}  # a public client: it names itself, PKCE proves it
    raise AuthFailed(f"the client is registered for token endpoint authentication {shown(method, 40)!r}, "
                     "which this client does not speak")


def configured_client(oauth: OAuthConfig, record: Record) -> Optional[Client]:
    """The client to authenticate as: the config's (its secret is never stored), else the record's."""
    if oauth.client_id:
        method = record.client.auth_method if record.client else None
        return Client(oauth.client_id, oauth.client_secret, method)
    return record.client


def storable(oauth: OAuthConfig, client: Client) -> Client:
    """What of `client` the tokens file keeps: a client from the config stays there, its secret too."""
    if oauth.client_id:
        return Client(client.client_id, None, client.auth_method, client.redirect_uri)
    return client


def key_algorithm(key_pem: str) -> str:
    """The JWS algorithm a PEM private key signs with (RFC 7518)."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(key_pem.encode("utf-8"), password=None)
    except (ValueError, TypeError):
        raise AuthFailed("the key file is not an unencrypted PEM private key") from None
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}.get(key.curve.name, "ES256")
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise AuthFailed("the key file holds a kind of key this client cannot sign with")


def client_assertion(client_id: str, audience: str, key_pem: str) -> str:
    """An RFC 7523 client assertion: the client is issuer and subject, the authorization
    server's issuer the audience, good for a few minutes, never used twice (jti)."""
    try:
        import jwt
    except ImportError:
        raise AuthFailed("a key file needs PyJWT with cryptography: pip install -e '.[oauth-keys]'") from None
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + ASSERTION_LIFETIME,
              "jti": secrets.token_urlsafe(16)}
    assertion = jwt.encode(claims, key_pem, algorithm=key_algorithm(key_pem))
    keep_secret(assertion)
    return assertion


def token_form(grant: str, *, resource: str, scope: Optional[str] = None, code: Optional[str] = None,
               attempt: Optional[Attempt] = None, refresh_token: Optional[str] = None,
               assertion: Optional[str] = None) -> Dict[str, str]:
    """The token request's form for `grant` (the client's own fields are added apart)."""
    form = {"grant_type": grant, "resource": resource}
    if grant == "authorization_code":
        assert code is not None and attempt is not None
        form.update(code=code, redirect_uri=attempt.redirect_uri, code_verifier=attempt.verifier)
    elif grant == "refresh_token":
        assert refresh_token is not None
        form["refresh_token"] = refresh_token
    elif grant == JWT_BEARER:
        assert assertion is not None
        form["assertion"] = assertion
    if scope and grant != "authorization_code":  # the code already carries what was authorized
        form["scope"] = scope
    return form


def exchange_form(*, id_token: str, audience: str, resource: str, scope: Optional[str],
                  client_id: Optional[str]) -> Dict[str, str]:
    """SEP-990's first step, at the identity provider: an ID token exchanged (RFC 8693) for an
    ID-JAG naming the MCP server's authorization server (`audience`) and the resource."""
    form = {"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG_TYPE, "audience": audience,
            "resource": resource, "subject_token": id_token, "subject_token_type": ID_TOKEN_TYPE}
    if scope:
        form["scope"] = scope
    if client_id:
        form["client_id"] = client_id
    return form


def issued_assertion(status: int, body: Any) -> str:
    """The ID-JAG in the identity provider's token exchange answer."""
    if status != 200 or not isinstance(body, dict):
        raise AuthFailed(f"the identity provider refused the token exchange ({refusal(status, body)})")
    token = body.get("access_token")
    if not isinstance(token, str) or not token or body.get("issued_token_type", ID_JAG_TYPE) != ID_JAG_TYPE:
        raise AuthFailed("the identity provider's answer holds no identity assertion grant (ID-JAG)")
    keep_secret(token)
    return token


def encoded(form: Mapping[str, str]) -> bytes:
    return urlencode(dict(form)).encode("ascii")


def refusal(status: int, body: Any) -> str:
    """An OAuth error answer in a few words: its `error` and description, else the status."""
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        described = body.get("error_description")
        return f"HTTP {status} {shown(body['error'], 60)}" + (
            f": {shown(described, 200)}" if isinstance(described, str) else "")
    return f"HTTP {status}"


def tokens_from(status: int, body: Any, *, asked_scope: Optional[str], before: Optional[Tokens] = None,
                now: Optional[float] = None) -> Tokens:
    """The tokens in a token endpoint's answer. A refresh answer may leave out the refresh
    token and the scope (RFC 6749 6): the ones held before carry on."""
    if status != 200 or not isinstance(body, dict):
        raise AuthFailed(f"the token endpoint refused ({refusal(status, body)})")
    access = body.get("access_token")
    kind = body.get("token_type")
    if not isinstance(access, str) or not access or not isinstance(kind, str) or kind.lower() != "bearer":
        raise AuthFailed("the token endpoint's answer holds no bearer access token")
    keep_secret(access)
    refresh = body.get("refresh_token")
    refresh = refresh if isinstance(refresh, str) and refresh else (before.refresh_token if before else None)
    if refresh:
        keep_secret(refresh)
    lifetime = body.get("expires_in")
    if not isinstance(lifetime, (int, float)) or isinstance(lifetime, bool):
        lifetime = None  # not said (or not as a number): the token is used until it is refused
    elif not 0 < lifetime <= MAX_LIFETIME:  # NaN, 0, negative, or 401 digits (too big for a float)
        raise AuthFailed(f"the token endpoint's answer gives an expires_in of {shown(str(lifetime), 40)}, "
                         f"not a number of seconds from 1 to {MAX_LIFETIME:,}; the tokens were not kept")
    moment = time.time() if now is None else now
    expires = None if lifetime is None else moment + float(lifetime)
    scope = body.get("scope") if isinstance(body.get("scope"), str) else (before.scope if before else asked_scope)
    return Tokens(access, refresh, expires, scope, None if lifetime is None else float(lifetime))


def json_body(data: bytes) -> Any:
    try:
        return json.loads(data) if data else None
    except ValueError:
        return None
