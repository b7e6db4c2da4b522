"""The conformance runner's install: npm is run so that it works from the
Node wheel's copied launcher as well as from a machine's own Node. Its verdict,
and how our adapter turns the suite's context into a server entry's "oauth"."""

from __future__ import annotations

from pathlib import Path

from checks.dev.conformance import FIXTURE_SCENARIOS, NAMED_SCENARIOS, falling_short, npm_command
from checks.dev.conformance_client import CLIENT_METADATA_URL, oauth_entry


def test_a_wheel_layout_runs_npms_own_entry_script_under_the_chosen_node(tmp_path: Path) -> None:
    # The wheel's bin/npm is a plain copy whose relative require fails: never use it.
    (tmp_path / "bin").mkdir()
    node = tmp_path / "bin" / "node"
    node.write_text("")
    (tmp_path / "bin" / "npm").write_text("#!/usr/bin/env node\nrequire('../lib/cli.js')(process)\n")
    cli = tmp_path / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    cli.parent.mkdir(parents=True)
    cli.write_text("")
    assert npm_command(str(node)) == [str(node), str(cli)]


def test_without_npms_entry_script_beside_node_the_npm_on_path_is_used(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    assert npm_command(str(tmp_path / "bin" / "node")) == ["npm"]


def test_this_client_must_pass_what_the_sdk_passes_and_every_core_scenario() -> None:
    rows = [{"name": "initialize", "ours": "fail", "sdk": "fail"},
            {"name": "auth/a", "ours": "fail", "sdk": "pass"},
            {"name": "auth/b", "ours": "fail", "sdk": "fail"},
            {"name": "auth/c", "ours": "pass", "sdk": "fail"}]
    assert falling_short(rows) == ["initialize", "auth/a"]


def test_the_suites_context_becomes_the_server_entrys_oauth_as_a_user_would_write_it(tmp_path: Path) -> None:
    entry = oauth_entry({"client_id": "c", "private_key_pem": "-----BEGIN PRIVATE KEY-----", "idp_id_token": "t",
                         "idp_token_endpoint": "http://localhost:1/token", "idp_client_id": "i"}, tmp_path)
    assert entry.client_id == "c" and entry.client_secret is None and entry.client_metadata_url == CLIENT_METADATA_URL
    assert entry.key_file is not None and Path(entry.key_file).read_text() == "-----BEGIN PRIVATE KEY-----"
    assert (entry.id_token, entry.idp_token_endpoint, entry.idp_client_id) == ("t", "http://localhost:1/token", "i")
    assert oauth_entry({}, tmp_path).key_file is None


def test_every_scenario_run_with_the_suites_names_is_one_the_fixture_answers() -> None:
    assert set(NAMED_SCENARIOS) <= set(FIXTURE_SCENARIOS)
    assert not {"resources-list", "prompts-list", "logging-set-level"} & set(NAMED_SCENARIOS)  # the plain fixture's
