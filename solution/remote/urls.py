"""What in a URL is a secret, and the URL as it may be shown.

A URL is shown without its query and user info, and without the path segments
that look like keys: one after a word such as `key` or `token`, or a long one
that mixes letters and digits the way random tokens do (`/v1/sk-4f9c2a…/mcp`).
Those segments and the query's values are secrets too (kept as such by the
server's spec, host/config.py). Pure, and without h11: every config with a
remote server reads it, whether or not a request is ever made.
"""

from __future__ import annotations

from typing import Iterator, List
from urllib.parse import parse_qsl, urlsplit

from ..untrusted import HIDDEN

KEY_WORDS = {"key", "keys", "apikey", "api-key", "api_key", "token", "tokens", "secret", "secrets",
             "password", "passwd", "auth", "bearer", "access_token", "access-token", "credential", "credentials"}
KEY_LENGTH = 16  # a segment at least this long ...
KEY_SWITCHES = 4  # ... that goes from letter to digit or back this often looks random


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
