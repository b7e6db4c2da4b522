"""A server behind the notes fixture's authorization server (`--auth auto`), reached the
way a user would: `login`, then `call`, in both eras. The sign-in is automated by
following the authorization URL (`MCP_LAB_SIGN_IN=follow`). Every test greps what
came out (stdout, stderr, --json, the audit log) for the tokens."""

from __future__ import annotations

import json
import stat
import threading
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import List

import pytest

from solution.tests.oauth_fixture import Answering, Guarded, guarded  # noqa: F401 (a fixture)
from solution.remote.tokens import record_key


def test_a_server_that_asks_for_a_sign_in_names_the_command_that_does_it(guarded: Guarded) -> None:
    status, _, err = guarded.run("call", "mcp__notes__read_note", '{"id": "n-2"}', env={})
    assert status == 2 and "server 'notes' asks for a sign-in: run `python -m solution login notes`" in err
    assert guarded.steps() == ["refused"]  # nothing was registered or asked for without a person


def test_login_then_call_works_and_the_token_is_never_shown(guarded: Guarded) -> None:
    status, out, err = guarded.run("login", "notes")
    assert status == 0, err
    assert "signed in to server 'notes' (scope: mcp:read offline_access)" in out and "3 tools" in out
    assert stat.S_IMODE(guarded.tokens.stat().st_mode) == 0o600
    assert guarded.steps()[:4] == ["refused", "registered", "approved", "token"]
    status, called, err2 = guarded.run("call", "mcp__notes__read_note", '{"id": "n-2"}', env={})
    assert status == 0 and "Timeouts" in called, err2
    status, listed, err3 = guarded.run("tools", "--json", env={})
    assert status == 0 and json.loads(listed)["servers"]["notes"]["era"] in ("current", "legacy")
    guarded.assert_never_shown(out, err, called, err2, listed, err3)


def test_an_expired_token_is_renewed_with_the_refresh_token_in_one_line(guarded: Guarded) -> None:
    assert guarded.run("login", "notes")[0] == 0
    before = guarded.held()
    document = json.loads(guarded.tokens.read_text())
    document["servers"][record_key("notes", guarded.url)]["tokens"]["expires_at"] = 1.0  # long past, as the client's clock sees it
    guarded.tokens.write_text(json.dumps(document))
    status, out, err = guarded.run("call", "mcp__notes__read_note", '{"id": "n-1"}', env={})
    assert status == 0 and "Paging" in out, err
    said = [line for line in err.splitlines() if "server 'notes'" in line]
    assert said == ["server 'notes': the access token had expired; renewed it with the refresh token"]
    assert guarded.held()["access_token"] != before["access_token"]
    assert guarded.steps()[-2:] == ["token", "token"] and "refused" not in guarded.steps()[4:]
    guarded.assert_never_shown(out, err)


def test_a_revoked_token_leads_to_a_new_sign_in_in_one_line(guarded: Guarded) -> None:
    assert guarded.run("login", "notes")[0] == 0
    origin = guarded.url.rsplit("/", 1)[0]

    def revoke() -> None:  # the whole grant goes: access and refresh tokens alike
        form = f"token={guarded.held()['refresh_token']}".encode()
        with urllib.request.urlopen(urllib.request.Request(origin + "/revoke", form, method="POST"), timeout=30):
            pass
    revoke()
    status, out, err = guarded.run("call", "mcp__notes__read_note", '{"id": "n-2"}')
    assert status == 0 and "Timeouts" in out, err
    said = [line for line in err.splitlines() if "server 'notes'" in line]
    assert said == ["server 'notes' refused the access token and it could not be renewed; signing in again"]
    guarded.assert_never_shown(out, err)
    revoke()  # and now with nobody to sign in: the message says how
    status, _, err = guarded.run("call", "mcp__notes__read_note", '{"id": "n-2"}', env={})
    assert status == 2 and "server 'notes' refused the stored token and it could not be renewed; run " \
                           "`python -m solution login notes`" in err


def test_a_call_that_writes_asks_for_more_scope_and_gets_it(guarded: Guarded) -> None:
    assert guarded.run("login", "notes")[0] == 0
    status, out, err = guarded.run("call", "mcp__notes__add_note", '{"title": "t", "body": "b"}', "--yes", "--json")
    assert status == 0 and '"isError": false' in out, err
    assert "server 'notes' asks for more scope (mcp:read offline_access mcp:write); signing in again for it" in err
    assert guarded.held()["scope"] == "mcp:read offline_access mcp:write"
    guarded.assert_never_shown(out, err)


def test_logout_forgets_the_tokens_and_tells_the_authorization_server(guarded: Guarded) -> None:
    assert guarded.run("login", "notes")[0] == 0
    kept = guarded.secrets()
    status, out, _ = guarded.run("logout", "notes")
    assert status == 0 and out.strip() == "signed out of server 'notes'"
    assert guarded.steps()[-1] == "revoked" and not any(s in guarded.tokens.read_text() for s in kept)
    assert guarded.run("logout", "notes")[1].strip() == "no sign-in was kept for server 'notes'"
    assert guarded.run("call", "mcp__notes__search", '{"query": "x"}', env={})[0] == 2


def test_a_machine_client_signs_in_by_itself_with_client_credentials(tmp_path: Path) -> None:
    server = Guarded(tmp_path, "--auth-client", "robot=robot-secret-0123456789")
    try:
        server.write_config({"oauth": {"clientId": "robot", "clientSecret": "${ROBOT_SECRET}",
                                       "grant": "client_credentials"}})
        status, out, err = server.run("call", "mcp__notes__search", '{"query": "timeouts"}', "--json",
                                      env={"ROBOT_SECRET": "robot-secret-0123456789"})
        assert status == 0 and "n-2" in out, err
        assert "robot-secret-0123456789" not in out + err + server.tokens.read_text()  # never kept in the file
        assert server.steps()[-1] == "token"
        server.assert_never_shown(out, err)
    finally:
        server.process.kill()
        server.process.wait(30)


class Elsewhere(Answering):
    """A server whose metadata speaks for another resource; it records every path asked."""

    asked: List[str] = []

    def do_GET(self) -> None:
        self.asked.append(self.path)
        origin = f"http://127.0.0.1:{self.server.server_address[1]}"  # type: ignore[index]
        if self.path == "/.well-known/oauth-protected-resource/mcp":
            return self.reply(200, {"resource": "https://evil.example.com/mcp", "authorization_servers": [origin]})
        self.reply(404, {})

    def do_POST(self) -> None:
        self.asked.append(self.path)
        self.rfile.read(int(self.headers["Content-Length"]))
        self.reply(401, {}, ("WWW-Authenticate", "Bearer"))


@pytest.mark.anyio
async def test_metadata_for_another_resource_is_refused_before_any_sign_in() -> None:
    from solution.host.aggregator import Aggregator
    from solution.host.config import HostServerSpec
    from solution.config import ServerSpec, config_of
    from solution.remote.oauth import OAuthSettings
    from solution.remote.sign_in import follow
    from solution.remote.tokens import TokenStore

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
        async with Aggregator(config_of([HostServerSpec("mcp", "", url=url, timeout=20)])) as tools:
            tools.connector.oauth = OAuthSettings(TokenStore(None), sign_in=follow)
            await tools.refresh()
        assert "speaks for another resource (https://evil.example.com/mcp); not signing in" in tools.offline["mcp"]
        assert "/.well-known/oauth-protected-resource/mcp" in Elsewhere.asked
        assert not any(p.startswith(("/authorize", "/token", "/register", "/.well-known/oauth-authorization"))
                       for p in Elsewhere.asked)
    finally:
        httpd.shutdown()
        httpd.server_close()
