"""The reference client's servers config: the core's, with the keys its layers read.

    "tickets": {"command": "python", "args": ["-m", "servers.tickets"],
                "toolTimeouts": {"export_csv": 120}, "taskTimeout": 900, "onDemand": true,
                "description": "the team's tickets"}
    "docs":    {"url": "https://example.com/mcp", "headers": {...}, "oauth": {...}}

Read by `host_entry` in place of the core's `stdio_entry` (config.py), so the
alias rules, ${VARIABLES} and relative paths are the core's own. A spec the
core made (`config.ServerSpec`, in a test or a library) is taken as it is,
with every key below at its default (`host_options`).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional

from ..config import (STDIO_KEYS, Config, Place, ServerSpec, common_fields, load_config, parse_config,
                      stdio_fields, usable_seconds)
from ..errors import ConfigError
from ..remote.config import REMOTE_KEYS, OAuthConfig, oauth_entry, remote
from ..remote.urls import url_secrets
from ..untrusted import keep_secret

HOST_KEYS = {"onDemand", "description", "progressResetsTimeout", "protocolVersion", "toolTimeouts",
             "taskTimeout", "preferTasks"}
SERVER_KEYS = STDIO_KEYS | HOST_KEYS | REMOTE_KEYS
PINNABLE = ("2026-07-28", "2025-11-25")  # protocolVersion: the eras this client speaks


@dataclass(frozen=True)
class HostServerSpec(ServerSpec):
    on_demand: bool = False  # True: connected only when the model looks for what it offers
    description: str = ""  # what the server is for (how an on-demand server is found)
    progress_resets_timeout: bool = False
    protocol_version: Optional[str] = None  # pins the era: "2026-07-28" or "2025-11-25"; None: probe
    tool_timeouts: Mapping[str, float] = field(default_factory=dict)  # original tool name -> seconds
    # How long a call that became a task may take in all (a tool's own toolTimeouts wins).
    task_timeout: float = 600.0
    prefer_tasks: bool = False  # handshake era: run `optional` task tools as tasks too
    url: Optional[str] = None  # a remote server (Streamable HTTP); then `command` is ""
    # Sent on every request to `url` (credentials, usually): never shown, so not in repr.
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    oauth: Optional[OAuthConfig] = None  # a remote server's sign-in settings (remote/oauth_flow.py)

    def __post_init__(self) -> None:
        # However the spec was made (a file, code): what it must not show is known from now on.
        secrets = [*self.headers.values(), *url_secrets(self.url or "")]
        if self.oauth is not None:
            secrets += [s for s in (self.oauth.client_secret, self.oauth.id_token, self.oauth.idp_client_secret) if s]
        for secret in secrets:
            keep_secret(secret)


def host_options(spec: ServerSpec) -> HostServerSpec:
    """`spec` with the reference's keys: its own, or their defaults for a core spec."""
    if isinstance(spec, HostServerSpec):
        return spec
    return HostServerSpec(**{f.name: getattr(spec, f.name) for f in dataclasses.fields(ServerSpec)})


def host_entry(alias: str, entry: Dict[str, Any], place: Place, warn: Callable[[str], None]) -> HostServerSpec:
    """One server's entry, local or remote, with every key the reference reads."""
    where = place.where
    url, headers = remote(entry, place)
    if url is None and "oauth" in entry:
        raise ConfigError(f"{where}: 'oauth' is for a remote server ('url')")
    if url is not None and entry.get("command"):
        raise ConfigError(f"{where}: give 'command' (a local server) or 'url' (a remote one), not both")
    if url is None and (not isinstance(entry.get("command"), str) or not entry["command"]):
        raise ConfigError(f"{where}: 'command' is missing or not a string (a remote server has 'url')")
    process: Dict[str, Any] = stdio_fields(entry, place) if url is None else {"command": ""}
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
    for key in ("onDemand", "progressResetsTimeout", "preferTasks"):
        if key in entry and not isinstance(entry[key], bool):
            raise ConfigError(f"{where}: '{key}' must be true or false")
        flags[key] = bool(entry.get(key))
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"{where}: 'description' must be a string")
    unknown = sorted(set(entry) - SERVER_KEYS)
    if unknown:
        warn(f"{where}: ignoring unknown keys {', '.join(unknown)}")
    oauth = oauth_entry(entry["oauth"], place) if url is not None and "oauth" in entry else None
    return HostServerSpec(alias, **process, **common_fields(entry, place), on_demand=flags["onDemand"],
                          description=description, progress_resets_timeout=flags["progressResetsTimeout"],
                          protocol_version=pinned, tool_timeouts={str(k): float(v) for k, v in tool_timeouts.items()},
                          task_timeout=float(task_timeout), prefer_tasks=flags["preferTasks"],
                          url=url, headers=headers, oauth=oauth)


def parse_host_config(text: str, source: str = "<memory>", base_dir: Optional[Path] = None,
                      environ: Optional[Mapping[str, str]] = None) -> Config:
    return parse_config(text, source, base_dir, environ, read_entry=host_entry)


def load_host_config(path: "str | os.PathLike[str]") -> Config:
    return load_config(path, read_entry=host_entry)

