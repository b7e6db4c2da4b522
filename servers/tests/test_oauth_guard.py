"""The fixture's authorization server (`--auth`), in memory: it refuses what OAuth 2.1
says to refuse, so a client's slips show; and over HTTP it guards the MCP endpoint."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator, Tuple
from urllib.parse import parse_qs, urlsplit

import pytest

from servers.oauth_guard import AuthServer
from servers.tests.test_over_http import ROOT, META

BASE = "http://127.0.0.1:9"
VERIFIER = "v" * 43
REDIRECT = "http://127.0.0.1:5000/callback"


def challenge(verifier: str = VERIFIER) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def body(answer: Tuple[int, Any, bytes]) -> Any:
    return json.loads(answer[2])


def registered(server: AuthServer, method: str = "none") -> Dict[str, Any]:
    answer = server.register(json.dumps({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": method}).encode())
    assert answer[0] == 201
    return dict(body(answer))


def code_for(server: AuthServer, client: Dict[str, Any], **extra: str) -> str:
    query = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": REDIRECT,
             "code_challenge": challenge(), "code_challenge_method": "S256", "resource": BASE + "/mcp",
             "state": "st", **extra}
    status, headers, _ = server.authorize(query)
    assert status == 302
    location = dict(headers)["Location"]
    back = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    assert location.startswith(REDIRECT) and back["state"] == "st" and back["iss"] == BASE
    return back["code"]


def exchange(server: AuthServer, client: Dict[str, Any], code: str, verifier: str = VERIFIER) -> Any:
    return server.token({"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                         "code_verifier": verifier, "client_id": client["client_id"], "resource": BASE + "/mcp"},
                        None)


def test_the_metadata_names_the_resource_the_issuer_and_pkce() -> None:
    server = AuthServer(BASE, "auto")
    assert body(server.resource_metadata())["resource"] == BASE + "/mcp"
    meta = body(server.server_metadata())
    assert meta["issuer"] == BASE and meta["code_challenge_methods_supported"] == ["S256"]


def test_a_request_without_a_token_is_challenged_with_where_to_sign_in() -> None:
    status, headers, _ = AuthServer(BASE, "auto").admit(None, False)  # type: ignore[misc]
    assert status == 401
    assert dict(headers)["WWW-Authenticate"] == (
        f'Bearer scope="mcp:read", resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"')


def test_a_sign_in_gives_a_token_that_reads_but_does_not_write_without_its_scope() -> None:
    server = AuthServer(BASE, "auto")
    client = registered(server)
    tokens = body(exchange(server, client, code_for(server, client, scope="mcp:read")))
    bearer = f"Bearer {tokens['access_token']}"
    assert server.admit(bearer, False) is None and "refresh_token" not in tokens
    status, headers, _ = server.admit(bearer, True)  # type: ignore[misc]
    assert status == 403 and 'error="insufficient_scope", scope="mcp:read mcp:write"' in dict(headers)[
        "WWW-Authenticate"]


def test_a_wrong_verifier_a_reused_code_and_a_missing_resource_are_refused() -> None:
    server = AuthServer(BASE, "auto")
    client = registered(server)
    code = code_for(server, client)
    assert exchange(server, client, code, verifier="w" * 43)[0] == 400
    assert exchange(server, client, code)[0] == 400  # the code went with the first attempt
    status, headers, _ = server.authorize({"response_type": "code", "client_id": client["client_id"],
                                           "redirect_uri": REDIRECT, "code_challenge": challenge(),
                                           "code_challenge_method": "S256", "state": "st"})
    assert status == 302 and "error=invalid_target" in dict(headers)["Location"]
    assert server.authorize({"client_id": "nobody", "redirect_uri": REDIRECT})[0] == 400  # never redirected


def test_a_refresh_token_comes_with_offline_access_and_is_used_once() -> None:
    server = AuthServer(BASE, "auto")
    client = registered(server)
    first = body(exchange(server, client, code_for(server, client, scope="mcp:read offline_access")))
    form = {"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": client["client_id"]}
    second = server.token(form, None)
    assert second[0] == 200 and body(second)["refresh_token"] != first["refresh_token"]
    assert server.token(form, None)[0] == 400


def test_revoking_a_token_ends_its_whole_grant() -> None:
    server = AuthServer(BASE, "auto")
    client = registered(server)
    tokens = body(exchange(server, client, code_for(server, client, scope="mcp:read offline_access")))
    assert server.revoke({"token": tokens["refresh_token"]})[0] == 200
    assert server.admit(f"Bearer {tokens['access_token']}", False) is not None


def test_a_confidential_client_must_prove_itself_and_may_use_client_credentials() -> None:
    server = AuthServer(BASE, "auto", clients={"robot": "robot-secret"})
    basic = "Basic " + base64.b64encode(b"robot:robot-secret").decode()
    assert server.token({"grant_type": "client_credentials", "scope": "mcp:read"}, basic)[0] == 200
    wrong = "Basic " + base64.b64encode(b"robot:guess").decode()
    assert server.token({"grant_type": "client_credentials"}, wrong)[0] == 401
    public = registered(server)
    assert server.token({"grant_type": "client_credentials", "client_id": public["client_id"]}, None)[0] == 400


def test_ask_mode_shows_a_page_and_approves_only_when_told() -> None:
    server = AuthServer(BASE, "ask")
    client = registered(server)
    query = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": REDIRECT,
             "code_challenge": challenge(), "code_challenge_method": "S256", "resource": BASE + "/mcp", "state": "s"}
    status, _, page = server.authorize(query)
    assert status == 200 and b"Approve" in page
    txn = page.decode().split("name=txn value=")[1].split(">")[0]
    status, headers, _ = server.decide({"txn": txn, "decision": "deny"})
    assert status == 302 and "error=access_denied" in dict(headers)["Location"]
    assert server.decide({"txn": txn, "decision": "approve"})[0] == 400  # answered once


@pytest.fixture
def guarded_url() -> Iterator[str]:
    process = subprocess.Popen([sys.executable, str(ROOT / "servers" / "notes.py"), "--http", "0", "--auth", "auto"],
                               stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = ""
        for line in process.stderr:  # bounded: the process prints "ready" or exits
            if "ready" in line:
                break
        yield line.split(" at ")[-1].strip()
    finally:
        process.kill()
        process.wait(30)


def test_over_http_the_mcp_endpoint_wants_a_token_and_the_metadata_is_beside_it(guarded_url: str) -> None:
    request = urllib.request.Request(guarded_url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                                              "params": {"_meta": META}}).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Mcp-Method": "tools/list",
                                              "MCP-Protocol-Version": "2026-07-28"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 401 and "resource_metadata=" in refused.value.headers["WWW-Authenticate"]
    origin = guarded_url.rsplit("/", 1)[0]
    with urllib.request.urlopen(origin + "/.well-known/oauth-protected-resource/mcp", timeout=30) as answer:
        assert json.loads(answer.read())["resource"] == guarded_url
