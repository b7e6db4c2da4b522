"""The OAuth rules, in memory: challenges, where metadata is looked for, which resource
and scope are asked for, how the client authenticates, and reading the answers."""

from __future__ import annotations

import base64
import json
from typing import Any, Dict
from urllib.parse import parse_qs, urlsplit

import pytest

from solution.remote.oauth import (AuthFailed, ServerMetadata, as_metadata_urls, bearer_challenge, canonical_resource,
                            choose_auth_method, choose_scope, parse_challenges, prm_urls, registration_method,
                            resource_allowed, resource_metadata, secure_enough, server_metadata, step_up_futile,
                            unattended, union_scopes)
from solution.remote.oauth_forms import (Attempt, authorization_url, client_authentication, code_from_redirect, s256,
                                  token_form, tokens_from)
from solution.untrusted import redacted
from solution.remote.tokens import Client, Tokens

ISSUER = "https://auth.example.com"


def metadata(**extra: Any) -> Dict[str, Any]:
    return {"issuer": ISSUER, "authorization_endpoint": ISSUER + "/authorize", "token_endpoint": ISSUER + "/token",
            **extra}


def test_a_challenge_is_read_with_quoted_commas_escapes_and_beside_other_schemes() -> None:
    header = ('Basic realm="x", Bearer error="insufficient_scope", scope="a b", '
              'resource_metadata="https://mcp.example.com/.well-known/x", error_description="say \\"no\\", twice"')
    found = parse_challenges(header)
    assert [c.scheme for c in found] == ["basic", "bearer"]
    bearer = bearer_challenge(header)
    assert (bearer.error, bearer.scope, bearer.resource_metadata) == (
        "insufficient_scope", "a b", "https://mcp.example.com/.well-known/x")
    assert bearer.params["error_description"] == 'say "no", twice'
    assert bearer_challenge('Bearer scope=read, realm="r"').scope == "read"  # a token, not quoted
    assert bearer_challenge(None).params == {} and bearer_challenge("Basic realm=x").params == {}


def test_resource_metadata_is_looked_for_in_the_header_then_path_based_then_at_the_root() -> None:
    assert prm_urls("https://mcp.example.com/v1/mcp", "https://mcp.example.com/custom.json") == [
        "https://mcp.example.com/custom.json",
        "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource"]
    root = "https://mcp.example.com/.well-known/oauth-protected-resource"
    assert prm_urls("https://mcp.example.com/", None) == [root]


def test_server_metadata_is_looked_for_path_aware_first_for_an_issuer_with_a_path() -> None:
    assert as_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration"]
    assert as_metadata_urls("https://auth.example.com/") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration"]


@pytest.mark.parametrize("url, canonical", [
    ("HTTPS://MCP.Example.COM:443/mcp/", "https://mcp.example.com/mcp"),
    ("http://127.0.0.1:8765/mcp?key=s3cret#top", "http://127.0.0.1:8765/mcp"),  # a query may hold a key
    ("https://mcp.example.com", "https://mcp.example.com"),
])
def test_the_resource_indicator_is_the_canonical_server_url(url: str, canonical: str) -> None:
    assert canonical_resource(url) == canonical


@pytest.mark.parametrize("resource, allowed", [
    ("https://mcp.example.com/v1/mcp", True), ("https://mcp.example.com/v1", True),
    ("https://mcp.example.com", True), ("https://MCP.example.com/v1/mcp/", True),
    ("https://evil.example.com/v1/mcp", False), ("https://mcp.example.com/v1/mc", False),
    ("http://mcp.example.com/v1/mcp", False), ("https://mcp.example.com:8443/v1/mcp", False),
    ("https://mcp.example.com/v1/mcp/deeper", False),
])
def test_metadata_may_speak_only_for_this_server_or_a_parent_on_its_origin(resource: str, allowed: bool) -> None:
    assert resource_allowed("https://mcp.example.com/v1/mcp", resource) is allowed


def test_endpoints_without_tls_are_refused_except_on_this_machine() -> None:
    assert secure_enough("https://auth.example.com/token") and secure_enough("http://127.0.0.1:9/token")
    assert secure_enough("http://localhost/token") and not secure_enough("http://auth.example.com/token")
    with pytest.raises(AuthFailed, match="without https"):
        server_metadata(metadata(token_endpoint="http://auth.example.com/token"), ISSUER)


def test_server_metadata_must_name_the_issuer_it_was_fetched_for() -> None:
    assert server_metadata(metadata(issuer=ISSUER + "/"), ISSUER).token_endpoint == ISSUER + "/token"
    with pytest.raises(AuthFailed, match="issuer"):
        server_metadata(metadata(issuer="https://other.example.com"), ISSUER)
    legacy = server_metadata(metadata(issuer=ISSUER + "/oauth"), None)  # 2025-03-26: not checked
    assert legacy.issuer == ISSUER + "/oauth"
    with pytest.raises(AuthFailed):
        resource_metadata({"resource": "https://mcp.example.com/mcp", "authorization_servers": []})


def test_scope_comes_from_the_challenge_then_the_resource_else_it_is_left_out() -> None:
    found = resource_metadata({"resource": "https://m.example/mcp", "authorization_servers": [ISSUER],
                               "scopes_supported": ["read", "write"]})
    bare = resource_metadata({"resource": "https://m.example/mcp", "authorization_servers": [ISSUER]})
    server = server_metadata(metadata(), ISSUER)
    assert choose_scope("read", found, server) == "read"
    assert choose_scope(None, found, server) == "read write"
    assert choose_scope(None, bare, server) is None
    assert choose_scope("read", found, server, configured="admin") == "admin"


def test_offline_access_is_asked_for_only_where_the_server_lists_it() -> None:
    found = resource_metadata({"resource": "https://m.example/mcp", "authorization_servers": [ISSUER]})
    offering = server_metadata(metadata(scopes_supported=["read", "offline_access"]), ISSUER)
    silent = server_metadata(metadata(scopes_supported=["read"]), ISSUER)
    assert choose_scope("read", found, offering) == "read offline_access"
    assert choose_scope("read", found, silent) == "read"
    assert choose_scope(None, found, offering) is None  # nothing to ask for: no scope at all


def test_a_step_up_adds_scopes_once_and_a_challenge_for_what_is_granted_is_futile() -> None:
    assert union_scopes("read offline_access", "read write") == "read offline_access write"
    assert union_scopes(None, "read") == "read" and union_scopes(None, None) is None
    assert step_up_futile("admin", "admin") and step_up_futile("a b", "b") and step_up_futile("a", None)
    assert not step_up_futile("read", "read write") and not step_up_futile(None, "read")


def test_the_token_endpoint_is_met_as_the_registration_said_else_as_the_server_prefers() -> None:
    assert choose_auth_method(has_secret=True, has_key=False, registered="client_secret_post",
                              supported=["client_secret_basic"]) == "client_secret_post"
    assert choose_auth_method(has_secret=True, has_key=False, registered=None, supported=None) == "client_secret_basic"
    assert choose_auth_method(has_secret=True, has_key=False, registered=None,
                              supported=["client_secret_post"]) == "client_secret_post"
    assert choose_auth_method(has_secret=False, has_key=True, registered=None, supported=None) == "private_key_jwt"
    assert choose_auth_method(has_secret=False, has_key=False, registered=None, supported=None) == "none"
    assert registration_method(["client_secret_basic", "none"]) == "none"
    assert registration_method(["client_secret_post"]) == "client_secret_post"


def test_client_credentials_are_used_when_configured_or_when_the_server_offers_nothing_else() -> None:
    both = server_metadata(metadata(grant_types_supported=["authorization_code", "client_credentials"]), ISSUER)
    machine = server_metadata(metadata(grant_types_supported=["client_credentials"]), ISSUER)
    assert not unattended(both, configured=None, has_credentials=True)
    assert unattended(both, configured="client_credentials", has_credentials=True)
    assert unattended(machine, configured=None, has_credentials=True)
    assert not unattended(machine, configured=None, has_credentials=False)


def test_pkce_s256_matches_rfc_7636_appendix_b() -> None:
    assert s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_the_authorization_url_carries_pkce_state_the_resource_and_the_scope_only_when_there_is_one() -> None:
    attempt = Attempt.new("http://127.0.0.1:5000/callback")
    url = authorization_url(ISSUER + "/authorize", client_id="c1", attempt=attempt, resource="https://m.example/mcp",
                            scope="read")
    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert query == {"response_type": "code", "client_id": "c1", "redirect_uri": attempt.redirect_uri,
                     "state": attempt.state, "code_challenge": s256(attempt.verifier),
                     "code_challenge_method": "S256", "resource": "https://m.example/mcp", "scope": "read"}
    assert len(attempt.verifier) >= 43 and attempt.verifier not in url
    bare = authorization_url(ISSUER + "/authorize", client_id="c1", attempt=attempt, resource="r", scope=None)
    assert "scope" not in parse_qs(urlsplit(bare).query)


def test_the_redirect_is_taken_only_with_our_state_and_the_right_issuer() -> None:
    attempt = Attempt.new("http://127.0.0.1:5000/callback")
    good = f"/callback?code=abc123xyz789&state={attempt.state}&iss={ISSUER}"
    assert code_from_redirect(good, attempt, issuer=ISSUER, iss_required=True) == "abc123xyz789"
    with pytest.raises(AuthFailed, match="state"):
        code_from_redirect("/callback?code=abc&state=forged", attempt, issuer=ISSUER, iss_required=False)
    with pytest.raises(AuthFailed, match="iss"):
        code_from_redirect(f"/callback?code=abc&state={attempt.state}&iss=https://evil.example", attempt,
                           issuer=ISSUER, iss_required=False)
    with pytest.raises(AuthFailed, match="iss"):
        code_from_redirect(f"/callback?code=abc&state={attempt.state}", attempt, issuer=ISSUER, iss_required=True)
    with pytest.raises(AuthFailed, match="access_denied"):
        code_from_redirect(f"/callback?error=access_denied&state={attempt.state}", attempt, issuer=ISSUER,
                           iss_required=False)


def test_client_authentication_basic_post_and_none() -> None:
    client = Client("my client", "p@ss:word")
    headers, fields = client_authentication("client_secret_basic", client, audience=ISSUER)
    assert fields == {} and base64.b64decode(headers["Authorization"][6:]).decode() == "my%20client:p%40ss%3Aword"
    assert client_authentication("client_secret_post", client, audience=ISSUER) == (
        {}, {"client_id": "my client", "client_secret": "p@ss:word"})
    assert client_authentication("none", Client("public"), audience=ISSUER) == ({}, {"client_id": "public"})
    with pytest.raises(AuthFailed, match="key file"):
        client_authentication("private_key_jwt", Client("c"), audience=ISSUER)


def test_a_private_key_jwt_assertion_is_signed_for_the_issuer() -> None:
    jwt = pytest.importorskip("jwt")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    _, fields = client_authentication("private_key_jwt", Client("machine"), audience=ISSUER, key_pem=pem)
    assert fields["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    claims = jwt.decode(fields["client_assertion"], key.public_key(), algorithms=["ES256"], audience=ISSUER)
    assert claims["iss"] == claims["sub"] == "machine" and claims["exp"] > claims["iat"] and claims["jti"]


def test_token_forms_for_each_grant() -> None:
    attempt = Attempt.new("http://127.0.0.1:1/callback")
    assert token_form("authorization_code", resource="r", scope="s", code="c", attempt=attempt) == {
        "grant_type": "authorization_code", "resource": "r", "code": "c", "redirect_uri": attempt.redirect_uri,
        "code_verifier": attempt.verifier}
    assert token_form("refresh_token", resource="r", refresh_token="t") == {
        "grant_type": "refresh_token", "resource": "r", "refresh_token": "t"}
    assert token_form("client_credentials", resource="r", scope="s") == {
        "grant_type": "client_credentials", "resource": "r", "scope": "s"}


def test_a_token_answer_is_read_and_its_tokens_are_never_shown_again() -> None:
    answer = {"access_token": "at-0123456789abcdef", "token_type": "bearer", "expires_in": 60,
              "refresh_token": "rt-0123456789abcdef"}
    tokens = tokens_from(200, answer, asked_scope="read", now=1000.0)
    assert (tokens.expires_at, tokens.scope, tokens.refresh_token) == (1060.0, "read", "rt-0123456789abcdef")
    assert redacted(json.dumps(answer)).count("[hidden]") == 2  # both kept as secrets at once
    renewed = tokens_from(200, {"access_token": "at-fedcba9876543210", "token_type": "Bearer"},
                          asked_scope=None, before=tokens)
    assert renewed.refresh_token == tokens.refresh_token and renewed.scope == "read" and renewed.expires_at is None
    with pytest.raises(AuthFailed, match="invalid_grant"):
        tokens_from(400, {"error": "invalid_grant", "error_description": "used"}, asked_scope=None)
    with pytest.raises(AuthFailed, match="bearer"):
        tokens_from(200, {"access_token": "x", "token_type": "mac"}, asked_scope=None)
    assert Tokens("t", expires_at=100.0).expired(now=80.0) and not Tokens("t").expired()


def test_default_endpoints_are_the_servers_origin() -> None:
    from solution.remote.oauth import default_endpoints

    fallback = default_endpoints("https://mcp.example.com/v1/mcp")
    assert isinstance(fallback, ServerMetadata) and not fallback.discovered
    assert (fallback.authorization_endpoint, fallback.token_endpoint, fallback.registration_endpoint) == (
        "https://mcp.example.com/authorize", "https://mcp.example.com/token", "https://mcp.example.com/register")


def test_an_enterprise_id_token_is_exchanged_for_an_id_jag_and_presented_as_a_jwt_bearer_grant() -> None:
    from solution.remote.oauth_forms import ID_JAG_TYPE, JWT_BEARER, exchange_form, issued_assertion

    form = exchange_form(id_token="idt", audience=ISSUER, resource="https://m.example/mcp", scope=None,
                         client_id="idp-client")
    assert form == {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                    "requested_token_type": ID_JAG_TYPE, "audience": ISSUER, "resource": "https://m.example/mcp", "subject_token": "idt",
                    "subject_token_type": "urn:ietf:params:oauth:token-type:id_token", "client_id": "idp-client"}
    jag = issued_assertion(200, {"access_token": "eyJ.id-jag.0123456789", "issued_token_type": ID_JAG_TYPE,
                                 "token_type": "N_A"})
    assert redacted(jag) == "[hidden]"
    assert token_form(JWT_BEARER, resource="r", scope="s", assertion=jag) == {
        "grant_type": JWT_BEARER, "resource": "r", "assertion": jag, "scope": "s"}
    with pytest.raises(AuthFailed, match="identity provider refused"):
        issued_assertion(400, {"error": "invalid_grant"})
    with pytest.raises(AuthFailed, match="ID-JAG"):
        issued_assertion(200, {"access_token": "x", "issued_token_type": "urn:ietf:params:oauth:token-type:jwt"})


@pytest.mark.parametrize("lifetime", [1, 5, 30, 60, 3600])
def test_a_token_is_renewed_near_its_end_by_its_life_and_never_on_arrival(lifetime: int) -> None:
    answer = {"access_token": "at-0123456789abcdef", "token_type": "Bearer", "expires_in": lifetime}
    tokens = tokens_from(200, answer, asked_scope=None, now=1000.0)
    # The last tenth of its life, or its last second (at most half of it), and never more than 30 s.
    margin = {1: 0.5, 5: 1.0, 30: 3.0, 60: 6.0, 3600: 30.0}[lifetime]
    assert not tokens.expired(now=1000.0) and not tokens.expired(now=1000.0 + lifetime - margin - 0.01)
    assert tokens.expired(now=1000.0 + lifetime - margin)


@pytest.mark.parametrize("url", ["http://[evil.example/mcp", "http://evil]example/mcp", "http://127.0.0.1:99999/mcp"])
def test_a_url_a_server_names_that_cannot_be_read_is_a_refusal(url: str) -> None:
    for rule in (canonical_resource, lambda u: prm_urls(u, None), as_metadata_urls, secure_enough,
                 lambda u: resource_allowed("http://127.0.0.1:8765/mcp", u)):
        with pytest.raises(AuthFailed, match="not a usable URL"):
            rule(url)
    with pytest.raises(AuthFailed, match="no usable 'token_endpoint'"):
        server_metadata(metadata(token_endpoint=url), ISSUER)


@pytest.mark.parametrize("lifetime", [10 ** 400, float("nan"), float("inf"), -5, 0])
def test_a_lifetime_no_token_can_have_is_a_refusal_on_a_grant_and_on_a_refresh(lifetime: Any) -> None:
    answer = {"access_token": "at-0123456789abcdef", "token_type": "Bearer", "expires_in": lifetime}
    held = Tokens("at-old-0123456789", "rt-0123456789abcdef", 1.0, "read")
    for before in (None, held):
        with pytest.raises(AuthFailed, match="expires_in"):
            tokens_from(200, answer, asked_scope="read", before=before)


def test_an_openid_provider_is_asked_for_consent_with_offline_access_and_only_then() -> None:
    from solution.remote.oauth import consent_prompt

    provider = server_metadata(metadata(id_token_signing_alg_values_supported=["RS256"],
                                        subject_types_supported=["public"]), ISSUER)
    plain = server_metadata(metadata(), ISSUER)
    assert provider.openid_provider and not plain.openid_provider
    assert consent_prompt(provider, "read offline_access") == "consent"
    assert consent_prompt(provider, "read") is None and consent_prompt(plain, "read offline_access") is None
    attempt = Attempt.new("http://127.0.0.1:5000/callback")
    url = authorization_url(ISSUER + "/authorize", client_id="c1", attempt=attempt, resource="r",
                            scope="read offline_access", prompt=consent_prompt(provider, "read offline_access"))
    assert parse_qs(urlsplit(url).query)["prompt"] == ["consent"]
