"""`login ALIAS` and `logout ALIAS`, and how every other command may sign in.

    python -m solution login docs     # sign in to the remote server 'docs' now (a browser, or the URL to open)
    python -m solution login docs --scope "read write"   # for this scope (a step-up's advice says which)
    python -m solution logout docs    # forget its tokens (and tell its authorization server, where it can be told)

A person signs in only here: a sign-in can take minutes, longer than any
request may wait. Other commands renew tokens by themselves (a refresh token,
client credentials) and otherwise say to run `login`. `MCP_LAB_SIGN_IN=follow`
(for tests and scripts against an authorization server that approves without a
person) follows the authorization URL instead of asking, in every command.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional

from ..config import Config, config_of
from ..host.aggregator import Aggregator
from ..host.config import HostServerSpec, host_options
from ..remote.oauth import AuthFailed, OAuthSettings, SignIn
from ..remote.tokens import TokenStore, default_path
from ..untrusted import shown

COMMAND = f"python -m {__package__.split('.')[0]}"


def say(line: str) -> None:
    print(shown(line), file=sys.stderr, flush=True)


def oauth_settings(options: argparse.Namespace, *, person: bool = False) -> OAuthSettings:
    """The run's sign-in settings: the tokens file, and who signs in when a server asks
    (`person`: someone at a browser, for `login`; otherwise nobody, unless following)."""
    path = Path(options.tokens_file) if getattr(options, "tokens_file", None) else default_path()
    sign_in: Optional[SignIn] = None
    if os.environ.get("MCP_LAB_SIGN_IN") == "follow" or person:
        from ..remote.sign_in import InBrowser, follow  # h11 and sockets: only when a sign-in may happen

        sign_in = follow if os.environ.get("MCP_LAB_SIGN_IN") == "follow" else InBrowser(say)
    return OAuthSettings(TokenStore(path), sign_in=sign_in, say=say, timeout=options.timeout, command=COMMAND)


def remote_spec(config: Config, alias: str) -> "HostServerSpec | str":
    """The remote server `alias` names, or why there is none."""
    spec = next((s for s in config.servers if s.alias == alias), None)
    if spec is None:
        return f"no server '{shown(alias, 40)}' in {config.source}"
    if host_options(spec).url is None:
        return f"server '{alias}' is a local (stdio) server: it takes its credentials from its environment"
    return host_options(spec)


def error(line: str) -> None:
    """One line on stderr: every line `login` and `logout` print passes through `shown`, since
    an authorization server's words (hosts, error descriptions) reach it in their messages."""
    print(f"error: {shown(line)}", file=sys.stderr)


async def sign_in_command(options: argparse.Namespace, config: Config) -> int:
    found = remote_spec(config, options.alias)
    if isinstance(found, str):
        error(found)
        return 2
    from ..remote.oauth_flow import Authorizer  # only a sign-in loads the HTTP parts

    settings = oauth_settings(options, person=options.command == "login")
    try:
        authorizer = Authorizer(found, settings)
        if options.command == "logout":
            kept, note = await authorizer.sign_out()
            print(shown(f"signed out of server '{found.alias}'{note}" if kept
                        else f"no sign-in was kept for server '{found.alias}'"))
            return 0
        tokens = await authorizer.sign_in(getattr(options, "scope", None))
    except AuthFailed as exc:  # every refusal, said in one line (sign_in.py unwraps the listener's)
        error(str(exc))
        return 1
    scope = f" (scope: {tokens.scope})" if tokens.scope else ""
    print(shown(f"signed in to server '{found.alias}'{scope}; the tokens are kept in {settings.store.path}"))
    # The proof: the server now answers, with the token just kept.
    async with Aggregator(config_of([found], config.source), request_timeout=options.timeout) as tools:
        tools.connector.oauth = oauth_settings(options)
        await tools.refresh()
        if found.alias in tools.offline:
            error(f"the server still cannot be used: {shown(tools.offline[found.alias], 300)}")
            return 1
        print(f"server '{found.alias}' answers: {len(tools.entries)} tools")
    return 0
