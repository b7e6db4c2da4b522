"""The conformance suite's client adapter for the official Python SDK's client,
run beside ours so both are judged by the same suite in the same run.

    python -m checks.dev.conformance_sdk_client URL   (MCP_CONFORMANCE_SCENARIO names the scenario)

It does what `conformance_client` does, with `mcp.Client`: connect, and call
each tool the scenario offers. The SDK has no form of its own; a form is
answered the way an SDK user would write it, from each field's `default`.

The auth scenarios use the SDK's own OAuth providers (`mcp.client.auth`), as
an SDK user would: `OAuthClientProvider` for the authorization code, with a
redirect handler that follows the authorization URL with a GET and takes the
code from the redirect it answers with (the suite's authorization server
approves at once); `ClientCredentialsOAuthProvider` and
`PrivateKeyJWTOAuthProvider` for client credentials; and for the enterprise
flow (SEP-990) `IdentityAssertionOAuthProvider`, whose ID-JAG this adapter
fetches from the suite's identity provider by token exchange (RFC 8693), the
part the SDK leaves to its user. What MCP_CONFORMANCE_CONTEXT hands over is
given to them as an SDK user would give it.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any, Dict, Optional
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.auth.extensions.client_credentials import (ClientCredentialsOAuthProvider,
                                                           PrivateKeyJWTOAuthProvider, SignedJWTParameters)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

ARGUMENTS: Dict[str, Dict[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}
REDIRECT = "http://localhost:3000/callback"  # never listened on: the redirect is read, not followed
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


async def defaults(context: Any, params: Any) -> types.ElicitResult:
    schema = getattr(params, "requested_schema", None) or {}
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    content = {name: field["default"] for name, field in properties.items()
               if isinstance(field, dict) and "default" in field}
    return types.ElicitResult(action="accept", content=content)


class Memory(TokenStorage):
    """Tokens and the client's registration, for this one run."""

    def __init__(self, client: Optional[OAuthClientInformationFull] = None) -> None:
        self.tokens: Optional[OAuthToken] = None
        self.client = client

    async def get_tokens(self) -> Optional[OAuthToken]:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Optional[OAuthClientInformationFull]:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class FollowRedirect:
    """The redirect handler follows the authorization URL; the callback handler hands
    back the code and state from the redirect the authorization server answered with."""

    def __init__(self) -> None:
        self.result: Optional[AuthorizationCodeResult] = None

    async def redirect(self, url: str) -> None:
        async with httpx2.AsyncClient(timeout=20) as http:
            answer = await http.get(url, follow_redirects=False)
        query = {k: v[0] for k, v in parse_qs(urlsplit(answer.headers.get("location", "")).query).items()}
        if "code" not in query:
            raise RuntimeError(f"the authorization URL answered HTTP {answer.status_code} without a code")
        self.result = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None, "the redirect handler ran first"
        return self.result


async def authorization_server(url: str) -> str:
    """The MCP server's authorization server, as its protected resource metadata names it
    (for the enterprise flow, whose provider takes the issuer as configuration)."""
    async with httpx2.AsyncClient(timeout=20) as http:
        refused = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        header = refused.headers.get("www-authenticate", "")
        found = header.split('resource_metadata="', 1)[1].split('"', 1)[0] if "resource_metadata=" in header \
            else f"{url.split('/mcp')[0]}/.well-known/oauth-protected-resource/mcp"
        return str((await http.get(found)).json()["authorization_servers"][0])


def id_jag_fetcher(context: Dict[str, Any]) -> Any:
    async def fetch(audience: str, resource: str) -> str:
        async with httpx2.AsyncClient(timeout=20) as http:
            answer = await http.post(context["idp_token_endpoint"], data={
                "grant_type": TOKEN_EXCHANGE, "subject_token": context["idp_id_token"],
                "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                "audience": audience, "resource": resource, "client_id": context["idp_client_id"]})
        return str(answer.json()["access_token"])
    return fetch


async def provider(url: str, scenario: str, context: Dict[str, Any]) -> httpx2.Auth:
    """The SDK's provider for the scenario, given what the suite handed over."""
    client_id, secret = context.get("client_id"), context.get("client_secret")
    given_id, given_secret = str(client_id or ""), str(secret or "")
    if scenario == "auth/client-credentials-jwt":
        signer = SignedJWTParameters(issuer=given_id, subject=given_id, signing_key=context["private_key_pem"],
                                     signing_algorithm=context.get("signing_algorithm", "ES256"))
        return PrivateKeyJWTOAuthProvider(url, Memory(), given_id, signer.create_assertion_provider())
    if scenario == "auth/client-credentials-basic":
        return ClientCredentialsOAuthProvider(url, Memory(), given_id, given_secret)
    if scenario == "auth/cross-app-access-complete-flow":
        return IdentityAssertionOAuthProvider(url, Memory(), given_id, given_secret, await authorization_server(url),
                                              id_jag_fetcher(context), token_endpoint_auth_method="client_secret_basic")
    registered = OAuthClientInformationFull(
        client_id=client_id, client_secret=secret, redirect_uris=[REDIRECT],  # type: ignore[list-item]
        token_endpoint_auth_method="client_secret_basic" if secret else "none") if client_id else None
    follow = FollowRedirect()
    return OAuthClientProvider(url, OAuthClientMetadata(client_name="conformance-sdk-client",
                                                        redirect_uris=[REDIRECT],  # type: ignore[list-item]
                                                        grant_types=["authorization_code", "refresh_token"],
                                                        response_types=["code"]),
                               Memory(registered), follow.redirect, follow.callback,
                               client_metadata_url=CLIENT_METADATA_URL)


async def run(url: str, scenario: str) -> int:
    transport: Any = url
    if scenario.startswith("auth/"):
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        http = httpx2.AsyncClient(auth=await provider(url, scenario, context), timeout=30)
        transport = streamable_http_client(url, http_client=http)
    async with Client(transport, elicitation_callback=defaults) as client:
        if scenario == "initialize":
            return 0
        listed = await client.list_tools()
        for tool in listed.tools:
            result = await client.call_tool(tool.name, ARGUMENTS.get(tool.name, {}))
            print(f"{tool.name}: {str(result)[:300]}", file=sys.stderr)
    return 0


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: python -m checks.dev.conformance_sdk_client URL")
    warnings.simplefilter("ignore")  # the SDK's deprecation notes (an issuer not given) are not results
    sys.exit(anyio.run(run, sys.argv[1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))


if __name__ == "__main__":
    main()
