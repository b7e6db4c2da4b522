"""Secrets from the config never leave the client.

A remote server's header values (an API key, a bearer token) go to that server
and nowhere else. They are kept here as they are configured (`keep_secret`,
from every ServerSpec), and `redacted` puts HIDDEN in place of each wherever
it turns up: a server that echoes the token in an error or a result, a
library that quotes a header it would not send. Every text that leaves the
client passes through `untrusted.shown`, `json_text` or `quoted` (the
terminal, --json, the audit log, the model's context), and they call it.

A URL is shown without its query and user info, and without the path
segments that look like keys: one after a word such as `key` or `token`, or
a long one that mixes letters and digits the way random tokens do
(`/v1/sk-4f9c2a…/mcp`). Those segments and the query's values are secrets too.

Process-wide by design: a secret is a fact about the run, not about one call.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator, List, Optional, Set
from urllib.parse import parse_qsl, urlsplit

HIDDEN = "[hidden]"
# A value this short ("eu", "json", "1") is too likely an ordinary word to be hidden wherever it appears.
MIN_SECRET = 8
KEY_WORDS = {"key", "keys", "apikey", "api-key", "api_key", "token", "tokens", "secret", "secrets",
             "password", "passwd", "auth", "bearer", "access_token", "access-token", "credential", "credentials"}
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]* +")  # "Bearer ", "Basic ", "Token ": the secret follows
KEY_LENGTH = 16  # a segment at least this long ...
KEY_SWITCHES = 4  # ... that goes from letter to digit or back this often looks random

_secrets: Set[str] = set()
_pattern: Optional["re.Pattern[str]"] = None


def keep_secret(value: str) -> None:
    """Hide `value` from now on; for `Bearer X`, X on its own too."""
    global _pattern
    added = False
    for piece in (value, SCHEME.sub("", value)):
        for form in (piece, json.dumps(piece)[1:-1]):  # as written, and as JSON writes it
            if len(form) >= MIN_SECRET and form not in _secrets:
                _secrets.add(form)
                added = True
    if added:  # longest first: a value is hidden whole, not around a shorter secret inside it
        _pattern = re.compile("|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True)))


def redacted(text: str) -> str:
    """`text` with every secret kept so far replaced by HIDDEN."""
    return text if _pattern is None else _pattern.sub(HIDDEN, text)


def redacted_json(value: Any) -> Any:
    """A JSON value with every string in it (keys too) redacted."""
    if isinstance(value, str):
        return redacted(value)
    if isinstance(value, dict):
        return {redacted(str(k)): redacted_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted_json(v) for v in value]
    return value


def looks_like_key(segment: str, previous: str) -> bool:
    """A URL path segment that is probably a credential."""
    if segment and previous.lower() in KEY_WORDS:
        return True
    if len(segment) < KEY_LENGTH:
        return False
    switches = sum(1 for a, b in zip(segment, segment[1:])
                   if a.isalnum() and b.isalnum() and a.isdigit() != b.isdigit())
    return switches >= KEY_SWITCHES


def shown_path(path: str) -> str:
    """`path` with each segment that looks like a key replaced by HIDDEN."""
    segments = path.split("/")
    return "/".join(HIDDEN if looks_like_key(s, p) else s for p, s in zip(["", *segments], segments))


def url_secrets(url: str) -> Iterator[str]:
    """What a URL holds that is not to be shown: key-like path segments, the query's values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    segments: List[str] = parts.path.split("/")
    yield from (s for p, s in zip(["", *segments], segments) if looks_like_key(s, p))
    yield from (v for _, v in parse_qsl(parts.query))
