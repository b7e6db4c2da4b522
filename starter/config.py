"""The servers config: `{"mcpServers": {alias: {command, args, env, cwd, ...}}}`.

The alias is the user's name for a server and the only source of the tool
name prefix (a server's self-reported `serverInfo.name` is neither unique nor
trustworthy). So a bad or duplicate alias must stop the client at start-up,
not surface later as a tool that quietly reaches the wrong server.

Each entry is read by a function (`stdio_entry` here): the reference client
reads more keys with its own (host/config.py: remote servers, per-tool
timeouts, tasks), the way it was always read, alias rules and all.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import ConfigError

# Letters, digits, '_' and '-', as model APIs allow in tool names; no '__',
# which is the separator in `mcp__<alias>__<tool>`.
ALIAS_PATTERN = re.compile(r"\A[A-Za-z0-9_-]{1,32}\Z")  # \Z: `$` would let a final "\n" in
STDIO_KEYS = {"command", "args", "env", "cwd", "inheritEnv", "timeout", "trusted", "description"}
# ${NAME} or ${NAME:-default}, as in shells and in other MCP clients' configs.
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
# A `command` of python runs the client's own interpreter, so the default
# config works in a virtual environment and where only `python3` exists.
PYTHON_COMMANDS = {"python", "python3"}


@dataclass(frozen=True)
class ServerSpec:
    alias: str
    command: str
    args: Tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Optional[str] = None
    timeout: Optional[float] = None  # seconds per request; None: the client's default
    trusted: bool = True  # False: every call asks, whatever the server's annotations claim
    # The user's environment is not the server's: by default a server sees only a
    # short list of variables (stdio_client.BASE_ENV) and its own `env`. True passes
    # everything on; a tuple of names passes those.
    inherit_env: "bool | Tuple[str, ...]" = False

    def argv(self) -> List[str]:
        command = sys.executable if self.command in PYTHON_COMMANDS else self.command
        return [command, *self.args]


@dataclass(frozen=True)
class Config:
    servers: Tuple[ServerSpec, ...]
    source: str = "<memory>"
    warnings: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Place:
    """Where an entry is read: for its messages, its ${VARIABLES} and its relative paths."""

    where: str  # "servers.json: server 'notes'"
    environ: Mapping[str, str]
    base: Path  # the config file's directory


# Reads one server's entry into its spec; a warning (an ignored key) goes to `warn`.
EntryReader = Callable[[str, Dict[str, Any], Place, Callable[[str], None]], ServerSpec]


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


def usable_seconds(value: Any) -> bool:
    """A number of seconds a timer can use: above 0 and finite (not NaN, not inf)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0)


def stdio_fields(entry: Dict[str, Any], place: Place) -> Dict[str, Any]:
    """What a local server's entry says of its process: command, args, env, cwd, inheritEnv."""
    where, environ = place.where, place.environ
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise ConfigError(f"{where}: 'command' is missing or not a string")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{where}: 'args' must be a list of strings")
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ConfigError(f"{where}: 'env' must map names to strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"{where}: 'cwd' must be a string")
    inherit = entry.get("inheritEnv", False)
    if not isinstance(inherit, bool) and not (isinstance(inherit, list)
                                              and all(isinstance(n, str) and n for n in inherit)):
        raise ConfigError(f"{where}: 'inheritEnv' must be true, false or a list of variable names")
    return {"command": expand(command, f"{where} command", environ),
            "args": tuple(expand(a, f"{where} args[{i}]", environ) for i, a in enumerate(args)),
            "env": {k: expand(v, f"{where} env {k}", environ) for k, v in env.items()},
            # Relative paths in a config mean "relative to the config file".
            "cwd": str(place.base / cwd) if cwd else str(place.base),
            "inherit_env": inherit if isinstance(inherit, bool) else tuple(inherit)}


def common_fields(entry: Dict[str, Any], place: Place) -> Dict[str, Any]:
    """What any server's entry may say: its timeout, and whether it is trusted."""
    timeout = entry.get("timeout")
    if timeout is not None and not usable_seconds(timeout):
        raise ConfigError(f"{place.where}: 'timeout' must be a finite number of seconds above 0 "
                          f"(got {timeout!r})")
    trusted = entry.get("trusted", True)
    if not isinstance(trusted, bool):
        raise ConfigError(f"{place.where}: 'trusted' must be true or false")
    return {"timeout": float(timeout) if timeout is not None else None, "trusted": trusted}


def stdio_entry(alias: str, entry: Dict[str, Any], place: Place, warn: Callable[[str], None]) -> ServerSpec:
    """A local server, started as a process and spoken to over stdio."""
    if "url" in entry:
        raise ConfigError(f"{place.where}: a remote server ('url'): this client speaks stdio; the reference "
                          "client (python -m solution) also speaks Streamable HTTP")
    unknown = sorted(set(entry) - STDIO_KEYS)
    if unknown:
        warn(f"{place.where}: ignoring unknown keys {', '.join(unknown)}")
    return ServerSpec(alias, **stdio_fields(entry, place), **common_fields(entry, place))


def parse_config(text: str, source: str = "<memory>", base_dir: Optional[Path] = None,
                 environ: Optional[Mapping[str, str]] = None, read_entry: EntryReader = stdio_entry) -> Config:
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
        servers.append(read_entry(alias, entry, Place(where, environ, base_dir or Path.cwd()), warnings.append))
    if not servers:
        raise ConfigError(f"{source}: 'mcpServers' names no servers")
    check_unique([spec.alias for spec in servers], source)
    return Config(tuple(servers), source, tuple(warnings))


def load_config(path: "str | os.PathLike[str]", read_entry: EntryReader = stdio_entry) -> Config:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {file}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x})") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc.strerror}") from None
    return parse_config(text, str(file), file.resolve().parent, read_entry=read_entry)
