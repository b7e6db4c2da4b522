"""What an HTTP request to a fixture must be before its body is read as MCP:
from this machine (Origin and Host name a local host exactly, against DNS
rebinding), with a Content-Length as HTTP writes it, and header values that
may be base64-wrapped (`=?base64?...?=`) compared decoded.
"""

from __future__ import annotations

import base64
from typing import Optional
from urllib.parse import urlsplit

MAX_BODY = 4 * 1024 * 1024
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def host_is_local(authority: str) -> bool:
    """`authority` (host[:port], as in Host) names this machine: the host is compared
    whole, so `localhost.evil.example` or `localhost@evil.example` is not local."""
    try:
        return urlsplit("//" + authority).hostname in LOCAL_HOSTS
    except ValueError:  # a bracket left open, say
        return False


def origin_is_local(origin: str) -> bool:
    """An Origin of a page on this machine: http(s), a local host, nothing else."""
    scheme, _, authority = origin.partition("://")
    return scheme in ("http", "https") and "/" not in authority and host_is_local(authority)


def body_length(value: Optional[str]) -> Optional[int]:
    """A Content-Length as HTTP writes it (digits only); None for anything else,
    which int() would take (-1, +5, ' 5') or refuse with a traceback."""
    if value is None:
        return 0
    return int(value) if value.isascii() and value.isdigit() else None


def decoded(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2]).decode("utf-8")
        except ValueError:
            return "\0"  # never equal to a body value
    return value
