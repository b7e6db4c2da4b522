from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from solution.config import ServerSpec, config_of, load_config, parse_config
from solution.host.config import parse_host_config
from solution.errors import ConfigError


def test_a_config_file_in_the_usual_shape(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {
        "notes": {"command": "python", "args": ["n.py"], "env": {"A": "1"}}}}))
    config = load_config(path)
    (spec,) = config.servers
    assert (spec.alias, spec.args, dict(spec.env)) == ("notes", ("n.py",), {"A": "1"})
    assert spec.cwd == str(tmp_path)  # relative paths mean relative to the config file
    assert spec.argv()[0] == sys.executable  # "python" is this interpreter


def test_a_duplicate_alias_is_an_error_even_as_duplicate_json_keys() -> None:
    text = '{"mcpServers": {"notes": {"command": "a"}, "notes": {"command": "b"}}}'
    with pytest.raises(ConfigError, match="duplicate key 'notes'"):
        parse_config(text)


@pytest.mark.parametrize("alias", ["my notes", "nötes", "a.b", "a__b", "", "x" * 33, "notes\n", "a_"])
def test_an_alias_outside_the_allowed_characters_is_an_error(alias: str) -> None:
    with pytest.raises(ConfigError, match="invalid server alias"):
        parse_config(json.dumps({"mcpServers": {alias: {"command": "x"}}}))


@pytest.mark.parametrize("entry, problem", [
    ({}, "'command' is missing"),
    ({"command": ""}, "'command' is missing"),
    ({"command": "x", "args": "a b"}, "'args' must be a list"),
    ({"command": "x", "env": {"A": 1}}, "'env' must map"),
    ("python", "expected an object"),
])
def test_bad_server_entries_name_the_problem(entry: object, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_config(json.dumps({"mcpServers": {"s": entry}}))


@pytest.mark.parametrize("text, problem", [
    ("{", "not valid JSON"), ("[]", "expected"), ('{"servers": {}}', "expected"),
    ('{"mcpServers": {}}', "names no servers"),
])
def test_a_malformed_document_is_a_clear_error(text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_config(text, "x.json")


def test_unknown_keys_are_warned_about_not_fatal() -> None:
    config = parse_config('{"mcpServers": {"s": {"command": "x", "disabled": true}}}')
    assert config.warnings == ("<memory>: server 's': ignoring unknown keys disabled",)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.json")


def test_configs_built_in_code_follow_the_same_rules() -> None:
    with pytest.raises(ConfigError, match="duplicate"):
        config_of([ServerSpec("a", "x"), ServerSpec("a", "y")])
    with pytest.raises(ConfigError, match="invalid"):
        config_of([ServerSpec("a b", "x")])


def test_variables_expand_in_command_args_and_env() -> None:
    text = json.dumps({"mcpServers": {"s": {"command": "${TOOL_HOME}/bin/srv",
                                            "args": ["--db", "${DB:-notes.db}", "x${EMPTY:-y}z"],
                                            "env": {"TOKEN": "${SECRET}"}}}})
    (spec,) = parse_config(text, environ={"TOOL_HOME": "/opt/t", "SECRET": "s3", "EMPTY": ""}).servers
    assert (spec.command, spec.args, dict(spec.env)) == ("/opt/t/bin/srv", ("--db", "notes.db", "xyz"),
                                                         {"TOKEN": "s3"})


def test_an_unset_variable_is_named_with_where_it_was_used() -> None:
    text = json.dumps({"mcpServers": {"s": {"command": "x", "args": ["${MISSING}"]}}})
    with pytest.raises(ConfigError, match=r"server 's' args\[0\]: \$\{MISSING\} is not set"):
        parse_config(text, environ={})


def test_a_server_may_set_its_own_timeout() -> None:
    (spec,) = parse_config('{"mcpServers": {"s": {"command": "x", "timeout": 2.5}}}').servers
    assert spec.timeout == 2.5
    for bad in ('"2"', "0", "-1", "true", "NaN", "Infinity", "1e309"):
        with pytest.raises(ConfigError, match="'timeout' must be a finite number of seconds above 0"):
            parse_config('{"mcpServers": {"s": {"command": "x", "timeout": %s}}}' % bad)


def test_aliases_that_differ_only_by_case_are_an_error(tmp_path: Path) -> None:
    """`time` and `Time` would give model names that differ only by case."""
    text = json.dumps({"mcpServers": {"time": {"command": "a"}, "Time": {"command": "b"}}})
    with pytest.raises(ConfigError, match="'Time' differs from 'time' only by case"):
        parse_config(text)
    with pytest.raises(ConfigError, match="only by case"):
        config_of([ServerSpec("time", "x"), ServerSpec("TIME", "y")])
    path = tmp_path / "servers.json"
    path.write_text(text)
    done = subprocess.run([sys.executable, "-m", "solution", "tools", "--config", str(path)], capture_output=True,
                          text=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "only by case" in done.stderr, done.stderr
def test_a_remote_servers_oauth_entry_is_read_its_secret_hidden_and_its_key_file_found(tmp_path: Path) -> None:
    from solution.host.config import host_options, parse_host_config
    from solution.untrusted import HIDDEN, redacted

    text = json.dumps({"mcpServers": {"docs": {"url": "https://mcp.example.com/mcp", "oauth": {
        "clientId": "lab", "clientSecret": "${DOCS_SECRET}", "keyFile": "keys/lab.pem", "scope": "read",
        "redirectPort": 8976, "clientMetadataUrl": "https://lab.example.com/client.json"}}}})
    spec = host_options(parse_host_config(text, "c.json", tmp_path, environ={"DOCS_SECRET": "oauth-secret-0123456789"}).servers[0])
    assert spec.oauth is not None and spec.oauth.client_secret == "oauth-secret-0123456789"
    assert spec.oauth.key_file == str(tmp_path / "keys" / "lab.pem") and spec.oauth.redirect_port == 8976
    assert "oauth-secret" not in repr(spec) and redacted("oauth-secret-0123456789") == HIDDEN


@pytest.mark.parametrize("oauth, complaint", [
    ({"clientSecret": "s"}, "needs its 'clientId'"),
    ({"clientId": "c", "grant": "client_credentials"}, "needs 'clientSecret' or 'keyFile'"),
    ({"clientId": "c", "grant": "implicit"}, "'grant' must be one of"),
    ({"clientMetadataUrl": "http://lab.example.com/client.json"}, "https URL with a path"),
    ({"redirectPort": 0}, "'redirectPort'"), ({"clientid": "c"}, "unknown keys clientid"),
    ({"clientId": "c", "clientSecret": "s", "idToken": "t"}, "an 'idToken' needs 'idpTokenEndpoint'"),
])
def test_an_unusable_oauth_entry_stops_the_client_with_one_line(oauth: Any, complaint: str) -> None:
    text = json.dumps({"mcpServers": {"docs": {"url": "https://mcp.example.com/mcp", "oauth": oauth}}})
    with pytest.raises(ConfigError, match=re.escape(complaint)):
        parse_host_config(text, "c.json")
    local = json.dumps({"mcpServers": {"notes": {"command": "x", "oauth": {}}}})
    with pytest.raises(ConfigError, match="'oauth' is for a remote server"):
        parse_host_config(local, "c.json")


def test_no_two_servers_tools_share_a_model_name_through_their_aliases() -> None:
    # ("a_", "x") and ("a", "_x") would both be mcp__a___x: an alias ends in no "_".
    from solution.naming import model_tool_name
    legal = [a for a in ("a", "a-", "a_b", "ab") if parse_config(json.dumps({"mcpServers": {a: {"command": "x"}}}))]
    names = {model_tool_name(alias, tool) for alias in legal for tool in ("x", "_x", "-x", "b_x", "x_")}
    assert len(names) == len(legal) * 5
