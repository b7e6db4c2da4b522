"""Text from a server is untrusted: how it is shown, hashed, logged and quoted.

Servers pick their tool names, titles, descriptions, results, progress
messages and stderr. None of it may act on the user's terminal, break an
encoder, or pass for the client's own words:

- `shown` is for a terminal: control characters (escape sequences, carriage
  returns, bidirectional overrides, line separators) and lone surrogates
  become visible escapes, on one line.
- `indented` is a server's text of many lines for a terminal: each line shown,
  and set in by two spaces, so none of it can pass for a line of the client's
  own (which start at the margin: errors, notes, questions).
- `utf8` encodes anything, lone surrogates included, for hashing.
- `json_text` is JSON for a terminal or a file: exact, but with every
  character a terminal could act on written as a \\u escape.
- `quoted` is for the model: shortened, on one line, inside quotation marks
  that the text itself cannot close, to be put after a label that says whose
  words these are.

All of them hide the client's secrets: whatever is shown, logged or quoted
passes through `redacted`. A secret (a remote server's header, a token) is
kept with `keep_secret` as soon as the client knows it, and from then on it is
replaced by HIDDEN wherever it turns up: a server that echoes it in an error or
a result, a library that quotes a header. Process-wide by design: a secret is
a fact about the run, not about one call.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional, Set


HIDDEN = "[hidden]"
# A value this short ("eu", "json", "1") is too likely an ordinary word to be hidden wherever it appears.
MIN_SECRET = 8
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]* +")  # "Bearer ", "Basic ", "Token ": the secret follows

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


# C0 controls but tab, DEL, C1 controls, bidirectional marks and overrides, the
# line and paragraph separators, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
# The same, as JSON would otherwise write them raw (it escapes C0 itself).
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: "re.Match[str]") -> str:
    char = match.group(0)
    return {"\n": "\\n", "\r": "\\r"}.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100
                                                   else f"\\u{ord(char):04x}")


def shown(value: Any, limit: int = 0) -> str:
    """`value` as one safe line for a terminal; cut to `limit` characters (0: no cut)."""
    text = _UNSAFE.sub(_escape, redacted(value if isinstance(value, str) else str(value)))
    return text if not limit or len(text) <= limit else text[:limit - 1] + "…"


INDENT = "  "


def indented(text: str) -> str:
    """A server's text of many lines as `shown` lines, each set in by INDENT."""
    return "\n".join(INDENT + shown(line) for line in text.splitlines())


def utf8(text: str) -> bytes:
    """Any str as bytes: a lone surrogate (which no encoder accepts) kept as its code."""
    return text.encode("utf-8", "surrogatepass")


def json_text(value: Any, indent: "int | None" = None) -> str:
    """JSON that is safe to print and to append to a log: exact (the escapes are
    JSON's own), with no NaN or Infinity, and nothing a terminal could act on."""
    text = redacted(json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False, default=str))
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def not_json(value: Any) -> "str | None":
    """Why `value` cannot go on the wire as JSON (NaN, Infinity, an object JSON
    has no word for), or None when it can. Python's json writes NaN, which is
    not JSON, so every call is asked this before it is sent."""
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        return str(exc).split(":")[0] or type(exc).__name__
    return None


def loggable(value: Any) -> Any:
    """`value` with every number JSON cannot hold (NaN, Infinity) written as a
    string, so a log line can still say what was refused."""
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): loggable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [loggable(v) for v in value]
    return value


def quoted(value: Any, limit: int = 300) -> str:
    """Server words for the model: one line, shortened at a word, in quotes they cannot close."""
    text = " ".join(shown(value).replace('"', "'").split())
    if len(text) > limit:
        cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
        text = cut + " …"
    return f'"{text}"'


def last_words(text: str, limit: int) -> str:
    """The end of `text`, at most `limit` characters, starting at a line or a word."""
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    for boundary in ("\n", " "):
        cut = tail.find(boundary)
        if 0 <= cut < limit // 2:
            return "…" + tail[cut + 1:]
    return "…" + tail
