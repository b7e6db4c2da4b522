"""What signing in leaves behind, per server: the client's registration and its tokens,
kept in one file only this user can read.

The file (`--tokens-file`, by default ~/.config/mcp-client-lab/tokens.json) is
JSON, `{"version": 1, "servers": {key: record}}`, one record per config entry
and client (`record_key`: two entries for one URL, a person's and a machine's,
never share tokens), rewritten whole
through `safe_files` (never through a link, under the directory's lock, by
rename from a temporary file that `mkstemp` made 0600, so it is never
readable by others, even for a moment). Every token and secret read from it
or stored in it is handed to `redact.keep_secret` first: from then on no text
the client shows can carry one. A store with no path keeps records in memory
(the conformance adapter's, and tests').
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, Optional

from ..host import safe_files
from ..untrusted import keep_secret

VERSION = 1
# A token is renewed before it is sent once it is this close to its end: a tenth of its life,
# or a second when that is more (servers count whole seconds: a token said to last 5 s may
# lapse a second early), but never more than half its life nor more than 30 s. So a 5 s token
# is renewed after 4 s, never the moment it arrives (a fixed 30 s made every token of 30 s or
# less expired on arrival), and an hour's in its last 30 s.
EXPIRY_MARGIN = 30.0
EXPIRY_SHARE = 0.1
CLOCK_STEP = 1.0


def renewal_margin(lifetime: float) -> float:
    """Seconds before its end that a token granted for `lifetime` seconds is renewed."""
    return min(EXPIRY_MARGIN, max(EXPIRY_SHARE * lifetime, min(CLOCK_STEP, lifetime / 2)))


def record_key(alias: str, url: str, client_id: Optional[str] = None) -> str:
    """Whose record it is: the server's URL, the config entry's alias and the client the config
    names (if any). Keyed by the URL alone, an entry set up for client credentials sent a
    person's token that another entry for the same URL had signed in for."""
    return f"{url} (server '{alias}'" + (f", client {client_id})" if client_id else ")")


def default_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mcp-client-lab" / "tokens.json"


@dataclass
class Client:
    """Who the client is to one authorization server."""

    client_id: str
    client_secret: Optional[str] = field(default=None, repr=False)
    auth_method: Optional[str] = None  # token endpoint authentication, as the registration said
    redirect_uri: Optional[str] = None  # the one registered (dynamic registration)
    issuer: Optional[str] = None  # the authorization server that registered it
    registered: bool = False  # True: made by dynamic registration, so it may be made again


@dataclass
class Tokens:
    access_token: str = field(repr=False)
    refresh_token: Optional[str] = field(default=None, repr=False)
    expires_at: Optional[float] = None  # seconds since the epoch; None: the server did not say
    scope: Optional[str] = None  # what was granted (or, when the server did not say, asked for)
    lifetime: Optional[float] = None  # seconds it was granted for (expires_in); None: kept before it was kept

    def expired(self, now: Optional[float] = None) -> bool:
        """Whether it is time to renew it (see EXPIRY_MARGIN)."""
        if self.expires_at is None:
            return False
        moment = time.time() if now is None else now
        margin = EXPIRY_MARGIN if self.lifetime is None else renewal_margin(self.lifetime)
        return moment >= self.expires_at - margin


@dataclass
class Record:
    """One server's sign-in: where its tokens come from, the client, the tokens."""

    issuer: Optional[str] = None
    resource: Optional[str] = None  # the resource indicator the tokens were asked for (RFC 8707)
    token_endpoint: Optional[str] = None
    revocation_endpoint: Optional[str] = None
    client: Optional[Client] = None
    tokens: Optional[Tokens] = None


def _kept(record: Record) -> Record:
    """Record every secret in `record` with redact.py, and return it."""
    for secret in (record.client.client_secret if record.client else None,
                   record.tokens.access_token if record.tokens else None,
                   record.tokens.refresh_token if record.tokens else None):
        if secret:
            keep_secret(secret)
    return record


def _only(kind: Any, data: Any) -> Any:
    """`kind(**data)` with the fields it knows (a newer client's extra keys are ignored)."""
    if not isinstance(data, dict):
        return None
    names = {f.name for f in fields(kind)}
    try:
        return kind(**{k: v for k, v in data.items() if k in names})
    except TypeError:  # a required field missing: the entry is unusable, as if absent
        return None


def record_from_json(data: Any) -> Record:
    if not isinstance(data, dict):
        return Record()
    record = _only(Record, {k: v for k, v in data.items() if k not in ("client", "tokens")}) or Record()
    record.client = _only(Client, data.get("client"))
    record.tokens = _only(Tokens, data.get("tokens"))
    return _kept(record)


class TokenStore:
    def __init__(self, path: Optional[Path]) -> None:
        self.path = path
        self._memory: Dict[str, Record] = {}

    def get(self, server: str) -> Record:
        if self.path is None:
            return self._memory.get(server) or Record()
        return record_from_json(self._read().get(server))

    def put(self, server: str, record: Record) -> None:
        _kept(record)
        if self.path is None:
            self._memory[server] = record
            return
        self._change(server, asdict(record))

    def forget(self, server: str) -> Record:
        """Remove a server's record; returns what it held (for revoking its tokens)."""
        before = self.get(server)
        if self.path is None:
            self._memory.pop(server, None)
        elif self.path.exists():
            self._change(server, None)
        return before

    def _read(self) -> Dict[str, Any]:
        assert self.path is not None
        text = safe_files.read(self.path)
        try:
            document = json.loads(text) if text else {}
        except ValueError:
            document = {}  # a damaged file is treated as empty; the next sign-in rewrites it
        servers = document.get("servers") if isinstance(document, dict) else None
        return servers if isinstance(servers, dict) else {}

    def _change(self, server: str, entry: Optional[Dict[str, Any]]) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with safe_files.locked(self.path):
            servers = self._read()
            if entry is None:
                servers.pop(server, None)
            else:
                servers[server] = entry
            safe_files.replace(self.path, json.dumps({"version": VERSION, "servers": servers}, indent=2) + "\n")
