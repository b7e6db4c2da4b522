"""The servers config: `{"mcpServers": {alias: {command, args, env, cwd}}}`, or for a
remote server `{alias: {"url": ..., "headers": {...}}}` (`"type": "http"` accepted).

The alias is the user's name for a server and the only source of the tool
name prefix (a server's self-reported `serverInfo.name` is neither unique nor
trustworthy). So a bad or duplicate alias must stop the client at start-up,
not surface later as a tool that quietly reaches the wrong server.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import ConfigError
from .remote.param_headers import TOKEN
from .redact import keep_secret, url_secrets

# Letters, digits, '_' and '-', as model APIs allow in tool names; no '__',
# which is the separator in `mcp__<alias>__<tool>`.
ALIAS_PATTERN = re.compile(r"\A[A-Za-z0-9_-]{1,32}\Z")  # \Z: `$` would let a final "\n" in
SERVER_KEYS = {"command", "args", "env", "cwd", "timeout", "trusted", "onDemand", "description",
               "progressResetsTimeout", "inheritEnv", "protocolVersion",
               "toolTimeouts", "taskTimeout", "preferTasks", "url", "headers", "type", "oauth"}
# Headers the HTTP transport sets itself: a config that set them would break the protocol.
OWN_HEADERS = {"host", "content-type", "content-length", "accept", "mcp-protocol-version", "mcp-session-id",
               "mcp-method", "mcp-name", "last-event-id", "transfer-encoding", "connection"}
PINNABLE = ("2026-07-28", "2025-11-25")  # protocolVersion: the eras this client speaks
# ${NAME} or ${NAME:-default}, as in shells and in other MCP clients' configs.
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
# A `command` of python runs the client's own interpreter, so the default
# config works in a virtual environment and where only `python3` exists.
PYTHON_COMMANDS = {"python", "python3"}


OAUTH_KEYS = {"clientId", "clientSecret", "keyFile", "clientMetadataUrl", "scope", "redirectPort", "grant",
              "idToken", "idpTokenEndpoint", "idpClientId", "idpClientSecret"}
GRANTS = ("authorization_code", "client_credentials")


@dataclass(frozen=True)
class OAuthConfig:
    """A remote server entry's `"oauth"`: how this client is known to its authorization
    server when it is not registered dynamically. Every field may be left out."""

    client_id: Optional[str] = None  # pre-registered with the authorization server
    client_secret: Optional[str] = field(default=None, repr=False)  # a confidential client's
    key_file: Optional[str] = None  # PEM private key: private_key_jwt client authentication
    client_metadata_url: Optional[str] = None  # an https Client ID Metadata Document
    scope: Optional[str] = None  # asked for instead of what the server suggests
    redirect_port: Optional[int] = None  # a fixed port for the redirect, as some registrations need
    grant: Optional[str] = None  # "client_credentials": unattended; None: as the server offers
    # Enterprise-managed authorization (SEP-990): an ID token from the company's identity
    # provider, exchanged there for an ID-JAG (RFC 8693), presented to the MCP server's
    # authorization server as a JWT bearer grant (RFC 7523). Unattended too.
    id_token: Optional[str] = field(default=None, repr=False)
    idp_token_endpoint: Optional[str] = None
    idp_client_id: Optional[str] = None
    idp_client_secret: Optional[str] = field(default=None, repr=False)


@dataclass(frozen=True)
class ServerSpec:
    alias: str
    command: str
    args: Tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Optional[str] = None
    timeout: Optional[float] = None  # seconds per request; None: the client's default
    trusted: bool = True  # False: every call asks, whatever the server's annotations claim
    on_demand: bool = False  # True: connected only when the model looks for what it offers
    description: str = ""  # what the server is for (how an on-demand server is found)
    progress_resets_timeout: bool = False
    # The user's environment is not the server's: by default a server sees only a
    # short list of variables (process.BASE_ENV) and its own `env`. True passes
    # everything on; a tuple of names passes those.
    inherit_env: "bool | Tuple[str, ...]" = False
    protocol_version: Optional[str] = None  # pins the era: "2026-07-28" or "2025-11-25"; None: probe
    tool_timeouts: Mapping[str, float] = field(default_factory=dict)  # original tool name -> seconds
    # How long a call that became a task may take in all (a tool's own toolTimeouts wins).
    task_timeout: float = 600.0
    prefer_tasks: bool = False  # handshake era: run `optional` task tools as tasks too
    url: Optional[str] = None  # a remote server (Streamable HTTP); then `command` is ""
    # Sent on every request to `url` (credentials, usually): never shown, so not in repr.
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    oauth: Optional[OAuthConfig] = None  # a remote server's sign-in settings (solution/remote/oauth_flow.py)

    def __post_init__(self) -> None:
        # However the spec was made (a file, code): what it must not show is known from now on.
        secrets = [*self.headers.values(), *url_secrets(self.url or "")]
        if self.oauth is not None:
            secrets += [s for s in (self.oauth.client_secret, self.oauth.id_token, self.oauth.idp_client_secret) if s]
        for secret in secrets:
            keep_secret(secret)

    def argv(self) -> List[str]:
        command = sys.executable if self.command in PYTHON_COMMANDS else self.command
        return [command, *self.args]


@dataclass(frozen=True)
class Config:
    servers: Tuple[ServerSpec, ...]
    source: str = "<memory>"
    warnings: Tuple[str, ...] = ()


def check_alias(alias: str, where: str) -> None:
    # No "__", and no "_" at the end: the model's name is mcp__<alias>__<tool>, and
    # ("a_", "x") and ("a", "_x") would both be mcp__a___x, one server's tool lost.
    if not ALIAS_PATTERN.match(alias) or "__" in alias or alias.endswith("_"):
        raise ConfigError(
            f"{where}: invalid server alias {alias!r}: use 1-32 letters, digits, '_' or '-' "
            "(no '__', and no '_' at the end), since the alias becomes part of every tool name the model sees")


def check_unique(aliases: Sequence[str], where: str) -> None:
    """Each alias once, ignoring case: `time` and `Time` would give model names that
    differ only by case, which a model (or a person reading a transcript) mixes up."""
    seen: Dict[str, str] = {}  # lower case (aliases are ASCII: check_alias) -> the alias as written
    for alias in aliases:
        other = seen.get(alias.lower())
        if other == alias:
            raise ConfigError(f"{where}: duplicate server alias {alias!r}")
        if other is not None:
            raise ConfigError(f"{where}: server alias {alias!r} differs from {other!r} only by case; "
                              "aliases must be unique ignoring case")
        seen[alias.lower()] = alias


def config_of(servers: Sequence[ServerSpec], source: str = "<memory>") -> Config:
    """A config built in code, held to the same alias rules as a file."""
    for spec in servers:
        check_alias(spec.alias, source)
    check_unique([spec.alias for spec in servers], source)
    return Config(tuple(servers), source)


def expand(text: str, where: str, environ: Mapping[str, str]) -> str:
    """Replace ${NAME} and ${NAME:-default}; a variable that is unset (and has
    no default) is an error, since running with a blank would fail later and
    less clearly."""
    def value(match: "re.Match[str]") -> str:
        name, default = match.group(1), match.group(2)
        found = environ.get(name)
        if found:
            return found
        if default is not None:
            return default
        raise ConfigError(f"{where}: ${{{name}}} is not set in the environment "
                          f"(set it, or write ${{{name}:-default}})")
    return VARIABLE.sub(value, text)


def _reject_duplicates(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    # json.loads keeps the last of two equal keys; for aliases that would
    # silently drop a server, so duplicates are refused instead.
    result: Dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ConfigError(f"duplicate key {key!r}")
        result[key] = value
    return result


def parse_config(text: str, source: str = "<memory>", base_dir: Optional[Path] = None,
                 environ: Optional[Mapping[str, str]] = None) -> Config:
    environ = os.environ if environ is None else environ
    try:
        document = json.loads(text, object_pairs_hook=_reject_duplicates)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc} (each server alias must appear once)") from None
    except ValueError as exc:
        raise ConfigError(f"{source}: not valid JSON: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{source}: not a usable config: nested too deeply") from None
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), dict):
        raise ConfigError(f'{source}: expected {{"mcpServers": {{"<alias>": {{"command": ...}}}}}}')
    servers: List[ServerSpec] = []
    warnings: List[str] = []
    for alias, entry in document["mcpServers"].items():
        where = f"{source}: server {alias!r}"
        check_alias(alias, source)
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: expected an object with 'command' (or 'url')")
        url, headers = remote(entry, where, environ)
        oauth = oauth_entry(entry.get("oauth"), f"{where} oauth", environ, base_dir or Path.cwd()) \
            if url is not None and "oauth" in entry else None
        if url is None and "oauth" in entry:
            raise ConfigError(f"{where}: 'oauth' is for a remote server ('url')")
        command = entry.get("command", "" if url else None)
        if url is None and (not isinstance(command, str) or not command):
            raise ConfigError(f"{where}: 'command' is missing or not a string (a remote server has 'url')")
        if url is not None and command:
            raise ConfigError(f"{where}: give 'command' (a local server) or 'url' (a remote one), not both")
        assert isinstance(command, str)
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"{where}: 'args' must be a list of strings")
        env = entry.get("env", {})
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise ConfigError(f"{where}: 'env' must map names to strings")
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ConfigError(f"{where}: 'cwd' must be a string")
        command = expand(command, f"{where} command", environ)
        args = [expand(a, f"{where} args[{i}]", environ) for i, a in enumerate(args)]
        env = {k: expand(v, f"{where} env {k}", environ) for k, v in env.items()}
        timeout = entry.get("timeout")
        if timeout is not None and not usable_seconds(timeout):
            raise ConfigError(f"{where}: 'timeout' must be a finite number of seconds above 0 "
                              f"(got {timeout!r})")
        inherit = entry.get("inheritEnv", False)
        if not isinstance(inherit, bool) and not (isinstance(inherit, list)
                                                  and all(isinstance(n, str) and n for n in inherit)):
            raise ConfigError(f"{where}: 'inheritEnv' must be true, false or a list of variable names")
        tool_timeouts = entry.get("toolTimeouts", {})
        if not isinstance(tool_timeouts, dict) or not all(usable_seconds(v) for v in tool_timeouts.values()):
            raise ConfigError(f"{where}: 'toolTimeouts' must map tool names to finite seconds above 0")
        pinned = entry.get("protocolVersion")
        if pinned is not None and pinned not in PINNABLE:
            raise ConfigError(f"{where}: 'protocolVersion' must be one of {', '.join(PINNABLE)} "
                              f"(or left out, to ask the server); got {pinned!r}")
        task_timeout = entry.get("taskTimeout", 600.0)
        if not usable_seconds(task_timeout):
            raise ConfigError(f"{where}: 'taskTimeout' must be a finite number of seconds above 0 "
                              f"(got {task_timeout!r})")
        flags = {}
        for key in ("trusted", "onDemand", "progressResetsTimeout", "preferTasks"):
            if key in entry and not isinstance(entry[key], bool):
                raise ConfigError(f"{where}: '{key}' must be true or false")
            flags[key] = entry.get(key)
        description = entry.get("description", "")
        if not isinstance(description, str):
            raise ConfigError(f"{where}: 'description' must be a string")
        unknown = sorted(set(entry) - SERVER_KEYS)
        if unknown:
            warnings.append(f"{where}: ignoring unknown keys {', '.join(unknown)}")
        # Relative paths in a config mean "relative to the config file".
        base = base_dir or Path.cwd()
        servers.append(ServerSpec(alias, command, tuple(args), dict(env),
                                  str(base / cwd) if cwd else str(base),
                                  float(timeout) if timeout is not None else None,
                                  trusted=flags["trusted"] is not False, on_demand=bool(flags["onDemand"]),
                                  description=description,
                                  progress_resets_timeout=bool(flags["progressResetsTimeout"]),
                                  inherit_env=inherit if isinstance(inherit, bool) else tuple(inherit),
                                  protocol_version=pinned,
                                  tool_timeouts={str(k): float(v) for k, v in tool_timeouts.items()},
                                  task_timeout=float(task_timeout), prefer_tasks=bool(flags["preferTasks"]),
                                  url=url, headers=headers, oauth=oauth))
    if not servers:
        raise ConfigError(f"{source}: 'mcpServers' names no servers")
    check_unique([spec.alias for spec in servers], source)
    return Config(tuple(servers), source, tuple(warnings))


def remote(entry: Dict[str, Any], where: str, environ: Mapping[str, str]) -> "Tuple[Optional[str], Dict[str, str]]":
    """The URL and headers of a remote server's entry (None and {} for a local one).
    A header's value is checked but never repeated in a message: it is usually a secret."""
    kind = entry.get("type")
    if kind is not None and kind not in ("stdio", "http", "streamable-http", "streamableHttp"):
        raise ConfigError(f"{where}: 'type' {kind!r:.40} is not supported: use \"stdio\" or \"http\" "
                          "(Streamable HTTP; the older HTTP+SSE transport is deprecated and not spoken here)")
    url = entry.get("url")
    if url is None:
        if kind not in (None, "stdio"):
            raise ConfigError(f"{where}: 'type' is {kind!r} but there is no 'url'")
        if "headers" in entry:
            raise ConfigError(f"{where}: 'headers' are for a remote server ('url')")
        return None, {}
    if not isinstance(url, str) or not url:
        raise ConfigError(f"{where}: 'url' must be a string")
    from .remote.http_wire import Url, value_problem  # here: a config without remote servers never loads the HTTP parts
    url = expand(url, f"{where} url", environ)
    try:
        Url.parse(url)
    except ValueError as exc:
        raise ConfigError(f"{where}: 'url' is not usable: {exc}") from None
    given = entry.get("headers", {})
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        raise ConfigError(f"{where}: 'headers' must map header names to strings")
    headers: Dict[str, str] = {}
    for name, value in given.items():
        if not TOKEN.match(name):
            raise ConfigError(f"{where}: header name {name!r} is not a valid HTTP header name")
        if name.lower() in OWN_HEADERS:
            raise ConfigError(f"{where}: header {name!r} is set by the client itself (the protocol needs it)")
        value = expand(value, f"{where} header {name}", environ)
        problem = value_problem(value)
        if problem is not None:  # refused now: sending it would fail, in words that quote it
            raise ConfigError(f"{where}: the value of header {name!r} {problem}; the value is not shown")
        headers[name] = value
    return url, headers


def oauth_entry(entry: Any, where: str, environ: Mapping[str, str], base: Path) -> OAuthConfig:
    """A server's `"oauth"` object. The secret may be `${VAR}`; it is never repeated in a message."""
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: must be an object with clientId, clientSecret, keyFile, ...")
    unknown = sorted(set(entry) - OAUTH_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {', '.join(unknown)} (known: {', '.join(sorted(OAUTH_KEYS))})")
    text: Dict[str, Optional[str]] = {}
    for key in sorted(OAUTH_KEYS - {"redirectPort"}):
        value = entry.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise ConfigError(f"{where}: '{key}' must be a non-empty string")
        text[key] = expand(value, f"{where} {key}", environ) if isinstance(value, str) else None
    if text["grant"] is not None and text["grant"] not in GRANTS:
        raise ConfigError(f"{where}: 'grant' must be one of {', '.join(GRANTS)}")
    if (text["clientSecret"] or text["keyFile"]) and not text["clientId"]:
        raise ConfigError(f"{where}: a client secret or key file needs its 'clientId'")
    if text["grant"] == "client_credentials" and not (text["clientSecret"] or text["keyFile"]):
        raise ConfigError(f"{where}: the client_credentials grant needs 'clientSecret' or 'keyFile'")
    if text["idToken"] and not (text["idpTokenEndpoint"] and text["clientId"] and text["clientSecret"]):
        raise ConfigError(f"{where}: an 'idToken' needs 'idpTokenEndpoint', and the 'clientId' and "
                          "'clientSecret' the MCP server's authorization server knows this client by")
    metadata = text["clientMetadataUrl"]
    if metadata is not None and (not metadata.startswith("https://") or metadata.rstrip("/").count("/") < 3):
        raise ConfigError(f"{where}: 'clientMetadataUrl' must be an https URL with a path")
    port = entry.get("redirectPort")
    if port is not None and (not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536):
        raise ConfigError(f"{where}: 'redirectPort' must be a port number from 1 to 65535")
    key_file = str(base / text["keyFile"]) if text["keyFile"] else None  # relative to the config file
    return OAuthConfig(text["clientId"], text["clientSecret"], key_file, metadata, text["scope"], port,
                       text["grant"], text["idToken"], text["idpTokenEndpoint"], text["idpClientId"],
                       text["idpClientSecret"])


def usable_seconds(value: Any) -> bool:
    """A number of seconds a timer can use: above 0 and finite (not NaN, not inf)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0)


def load_config(path: "str | os.PathLike[str]") -> Config:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {file}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x})") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc.strerror}") from None
    return parse_config(text, str(file), file.resolve().parent)
