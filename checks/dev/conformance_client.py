"""The conformance suite's client adapter for this lab's reference client.

    python -m checks.dev.conformance_client URL      (MCP_CONFORMANCE_SCENARIO names the scenario)

The suite starts a test server, runs this with its URL, and judges what the
server saw. The adapter does what a user of `python -m solution` would: one
remote server in the config, discovery, then the calls the scenario is
about. A form is answered by pressing Enter at every field, through the same
terminal form a person uses, so the elicitation scenario tests the real
path (a default shown and taken), not a shortcut.

The auth scenarios sign in as `MCP_LAB_SIGN_IN=follow` does: the authorization
URL is followed with a GET, and its redirect reaches the client's own listener
on 127.0.0.1. What the suite hands over in MCP_CONFORMANCE_CONTEXT becomes the
server entry's `"oauth"`, as a user would write it: a client id and secret, a
key file (written to a temporary file), the identity provider's ID token and
token endpoint (the enterprise flow), and the Client ID Metadata Document URL
the suite expects (the same one the SDK's adapter gives).
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict

import anyio

from solution.host.aggregator import Aggregator
from solution.config import config_of
from solution.host.config import HostServerSpec
from solution.remote.config import OAuthConfig
from solution.remote.oauth import OAuthSettings
from solution.commands.prompts import terminal_form
from solution.remote.sign_in import follow
from solution.commands.terminal import Terminal
from solution.remote.tokens import TokenStore

ARGUMENTS: Dict[str, Dict[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def oauth_entry(context: Dict[str, Any], keys: Path) -> OAuthConfig:
    """The server entry's "oauth", from what the scenario hands over."""
    key_file = None
    if isinstance(context.get("private_key_pem"), str):
        key_file = keys / "client-key.pem"
        key_file.write_text(context["private_key_pem"])
    return OAuthConfig(context.get("client_id"), context.get("client_secret"),
                       str(key_file) if key_file else None, CLIENT_METADATA_URL,
                       id_token=context.get("idp_id_token"), idp_token_endpoint=context.get("idp_token_endpoint"),
                       idp_client_id=context.get("idp_client_id"))


def say(line: str) -> None:
    print(line, file=sys.stderr)


async def run(url: str, scenario: str) -> int:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory() as keys:
        spec = HostServerSpec("server", "", url=url, timeout=20.0, oauth=oauth_entry(context, Path(keys)))
        return await connect_and_call(spec, scenario)


async def connect_and_call(spec: HostServerSpec, scenario: str) -> int:
    async with Aggregator(config_of([spec])) as tools:
        tools.elicitor = terminal_form(Terminal(read=lambda prompt: "", out=io.StringIO()))
        tools.connector.oauth = OAuthSettings(TokenStore(None), sign_in=follow, say=say)
        await tools.refresh()
        if "server" in tools.offline:
            print(f"offline: {tools.offline['server']}", file=sys.stderr)
            return 1
        if scenario == "initialize":
            return 0
        for entry in list(tools.entries.values()):
            result = await tools.call(entry.model_name, ARGUMENTS.get(entry.original_name, {}))
            print(f"{entry.original_name}: {str(result)[:300]}", file=sys.stderr)
    return 0


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: python -m checks.dev.conformance_client URL")
    sys.exit(anyio.run(run, sys.argv[1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))


if __name__ == "__main__":
    main()
