"""Signing in at its edges, through the command line and the fixtures (issue 45): tokens
that live 5 s, client credentials renewing them, an OpenID provider's refresh tokens,
refusals said in one line, a hostile authorization server's words and URLs, a step-up
that needs a person, and two config entries for one server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from solution.tests.conftest import ROOT
from solution.tests.oauth_fixture import FOLLOW, Guarded, guarded, hostile, renewed_early, started  # noqa: F401


def test_five_second_tokens_work_from_login_on_and_are_renewed_once_per_expiry(tmp_path: Path) -> None:
    with started(tmp_path, "--token-ttl", "5") as server:
        status, out, err = server.run("login", "notes")
        assert status == 0 and "server 'notes' answers: 3 tools" in out, out + err  # not dropped on arrival
        assert renewed_early(server, 5.0) == []
        server.expire()  # as if 5 s had gone by: the next run renews it, once
        before = len(server.grants("refresh_token"))
        status, out, err = server.run("call", "mcp__notes__read_note", '{"id": "n-2"}', env={})
        assert status == 0 and "Timeouts" in out, err
        assert len(server.grants("refresh_token")) > before  # the expired token was renewed
        assert renewed_early(server, 5.0, forced=1) == []  # and no fresh one was: not once per request
        assert "refused" not in server.steps()[4:]  # no request went with a token the server had let go


def test_client_credentials_go_on_with_five_second_tokens_the_server_accepted(tmp_path: Path) -> None:
    with started(tmp_path, "--token-ttl", "5", "--auth-client", "robot=robot-secret-0123456789") as server:
        server.write_config({"oauth": {"clientId": "robot", "clientSecret": "robot-secret-0123456789",
                                       "grant": "client_credentials"}})
        status, out, err = server.run("call", "mcp__notes__search", '{"query": "timeouts"}', "--json", env={})
        assert status == 0 and "n-2" in out, err
        # Each grant answered a refusal (a request without a token, or with one the server let go): none
        # was asked for while the server still took the one held, as happened to tokens expired on arrival.
        assert len(server.grants("client_credentials")) == server.steps().count("refused")


@pytest.mark.anyio
async def test_client_credentials_renew_at_each_expiry_and_never_give_up_on_accepted_tokens(tmp_path: Path) -> None:
    from solution.host.aggregator import Aggregator
    from solution.config import config_of
    from solution.host.config import HostServerSpec
    from solution.remote.config import OAuthConfig
    from solution.remote.oauth import OAuthSettings
    from solution.remote.tokens import TokenStore

    now = [1000.0]  # the client's clock, moved on by hand past each token's end
    with started(tmp_path, "--token-ttl", "5", "--auth-client", "robot=robot-secret-0123456789") as server:
        spec = HostServerSpec("notes", "", url=server.url, timeout=20, oauth=OAuthConfig(
            "robot", "robot-secret-0123456789", grant="client_credentials"))
        async with Aggregator(config_of([spec])) as tools:
            tools.connector.oauth = OAuthSettings(TokenStore(None), clock=lambda: now[0])
            await tools.refresh()
            assert "notes" not in tools.offline, tools.offline
            for _ in range(5):  # more expiries than MAX_AUTHORIZATIONS
                now[0] += 10.0
                result = await tools.call("mcp__notes__read_note", {"id": "n-1"})
                assert not result.get("isError"), result
        refusals = [e for e in server.oauth() if e["step"] == "refused" and e["why"] != "no token"]
        # One grant at the start and one per expiry, and one more only for a token the server let go itself.
        assert len(server.grants("client_credentials")) == 1 + 5 + len(refusals)


ATTACK = "\x1bc\x1b(0\x07\x1bP1$r\x1b\\evil.example"  # reset, a charset switch, BEL, a DCS string


def test_login_shows_an_authorization_servers_words_escaped_as_every_command_does(tmp_path: Path) -> None:
    metadata = {"issuer": "{origin}", "authorization_endpoint": "{origin}/authorize",
                "token_endpoint": f"http://{ATTACK}/token", "code_challenge_methods_supported": ["S256"]}
    with hostile(metadata) as url:
        config = tmp_path / "servers.json"
        config.write_text(json.dumps({"mcpServers": {"docs": {"url": url}}}))
        for command in (["login", "docs"], ["call", "mcp__docs__x"]):
            done = subprocess.run([sys.executable, "-m", "solution", *command, "--config", str(config),
                                   "--tokens-file", str(tmp_path / "tokens.json"), "--audit", ""], cwd=ROOT,
                                  env={**os.environ, **FOLLOW}, capture_output=True, text=True, timeout=120)
            assert "names token_endpoint http://\\x1bc\\x1b(0\\x07" in done.stderr, (command, done.stderr)
            assert not any(c in done.stdout + done.stderr for c in "\x1b\x07"), (command, done.stderr)


def test_every_sign_in_refusal_is_one_line_naming_what_was_refused(guarded: Guarded, tmp_path: Path) -> None:
    guarded.write_config({"oauth": {"scope": "bogus"}})  # refused at /authorize: an error= redirect
    refused = "server 'notes': the authorization server refused the sign-in: invalid_scope (unknown scope)"
    status, out, err = guarded.run("login", "notes")
    assert status == 1 and err.splitlines() == [f"error: {refused}"], err
    status, out, err = guarded.run("call", "mcp__notes__read_note", '{"id": "n-2"}')
    assert status == 2 and refused in err and "ExceptionGroup" not in err and "cannot handle" not in err, err
    guarded.write_config({})
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    guarded.tokens.unlink(missing_ok=True)
    os.symlink(elsewhere, guarded.tokens)  # an unsafe token store
    status, out, err = guarded.run("login", "notes")
    assert status == 1 and len(err.splitlines()) == 1 and "symbolic link" in err, err
    assert elsewhere.read_text() == "{}"


def test_a_step_up_that_needs_a_person_says_how_to_sign_in_for_the_scope_it_asks(guarded: Guarded) -> None:
    assert guarded.run("login", "notes")[0] == 0
    status, out, err = guarded.run("call", "mcp__notes__add_note", '{"title": "t", "body": "b"}', "--yes", env={})
    advice = ("server 'notes' asks for more scope (mcp:read offline_access mcp:write): run "
              "`python -m solution login notes --scope 'mcp:read offline_access mcp:write'`")
    assert advice in out + err, out + err
    assert guarded.run("login", "notes", "--scope", "mcp:read offline_access mcp:write")[0] == 0  # as advised
    status, out, err = guarded.run("call", "mcp__notes__add_note", '{"title": "t", "body": "b"}', "--yes", env={})
    assert status == 0 and "asks for more scope" not in err, out + err
    assert guarded.held()["scope"] == "mcp:read offline_access mcp:write"


def test_two_entries_for_one_server_keep_their_own_tokens(tmp_path: Path) -> None:
    with started(tmp_path, "--auth-client", "robot=robot-secret-0123456789") as server:
        server.config.write_text(json.dumps({"mcpServers": {
            "notes": {"url": server.url},
            "robot": {"url": server.url, "oauth": {"clientId": "robot", "clientSecret": "robot-secret-0123456789",
                                                   "grant": "client_credentials"}}}}))
        assert server.run("login", "notes")[0] == 0  # a person's sign-in, for the entry 'notes'
        status, out, err = server.run("call", "mcp__robot__search", '{"query": "timeouts"}', env={})
        assert status == 0 and "n-2" in out, err
        machine = server.grants("client_credentials")
        assert [e["client_id"] for e in machine] == ["robot"]  # it signed in as itself, not with the person's
        assert server.held("robot", "robot")["access_token"] != server.held("notes")["access_token"]


def test_an_openid_provider_is_asked_for_consent_so_a_refresh_token_comes(tmp_path: Path) -> None:
    with started(tmp_path, "--openid", "--token-ttl", "5") as server:
        status, out, err = server.run("login", "notes")
        assert status == 0 and "answers: 3 tools" in out, out + err
        assert [e.get("prompt") for e in server.oauth() if e["step"] == "approved"] == ["consent"]
        assert server.held().get("refresh_token") and "granted no refresh token" not in err
        server.expire()
        status, out, err = server.run("call", "mcp__notes__read_note", '{"id": "n-2"}', env={})
        assert status == 0 and "Timeouts" in out, err  # renewed by itself: no person asked again
        assert renewed_early(server, 5.0, forced=1) == []


@pytest.mark.anyio
async def test_no_refresh_token_granted_for_offline_access_is_said_in_one_line(tmp_path: Path) -> None:
    from solution.host.config import HostServerSpec
    from solution.remote.oauth import OAuthSettings, Redirect
    from solution.remote.oauth_flow import Authorizer
    from solution.remote.sign_in import follow
    from solution.remote.tokens import TokenStore

    async def without_prompt(url: str, redirect: Redirect, who: str) -> None:  # as a client that never sent it
        await follow(url.replace("&prompt=consent", ""), redirect, who)
    said: List[str] = []
    with started(tmp_path, "--openid", "--token-ttl", "5") as server:
        settings = OAuthSettings(TokenStore(None), sign_in=without_prompt, say=said.append)
        tokens = await Authorizer(HostServerSpec("notes", "", url=server.url), settings).sign_in()
    assert tokens.refresh_token is None and tokens.scope == "mcp:read offline_access"
    assert said == ["server 'notes': its authorization server granted no refresh token, so you will be asked "
                    "to sign in again when the access token expires (in 5 s)"]


@pytest.mark.parametrize("endpoint", ["http://[{origin}/token", "http://127.0.0.1:99999/token"])
def test_a_url_a_server_names_that_cannot_be_read_is_one_line_from_login(tmp_path: Path, endpoint: str) -> None:
    metadata = {"issuer": "{origin}", "authorization_endpoint": "{origin}/authorize", "token_endpoint": endpoint,
                "code_challenge_methods_supported": ["S256"]}
    with hostile(metadata) as url:
        config = tmp_path / "servers.json"
        config.write_text(json.dumps({"mcpServers": {"docs": {"url": url}}}))
        done = subprocess.run([sys.executable, "-m", "solution", "login", "docs", "--config", str(config),
                               "--tokens-file", str(tmp_path / "tokens.json")], cwd=ROOT,
                              env={**os.environ, **FOLLOW}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "the authorization server metadata has no usable 'token_endpoint'" in done.stderr
