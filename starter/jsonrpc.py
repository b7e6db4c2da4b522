"""JSON-RPC 2.0 framing and the table of requests waiting for a reply.

Pure logic, no I/O: `encode` makes one wire line, `parse_line` reads one, and
`PendingRequests` holds one slot per request id until its reply (or failure)
arrives. The stdio client is the I/O shell around these.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Dict, Iterator, Optional, Union

import anyio

Json = Dict[str, Any]
RequestId = Union[int, str]

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


_ascii_encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))


def encode(message: Json) -> bytes:
    """One message as one line: compact JSON, UTF-8, a single trailing newline.
    Text no UTF-8 encoder takes (a lone surrogate, as a server may send in a
    tool name) goes out as JSON's own \\u escape, exactly as it came in."""
    try:
        return (_encoder.encode(message) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (_ascii_encoder.encode(message) + "\n").encode("ascii")


MAX_DEPTH = 64  # arrays and objects inside each other; real messages stay far below
_OPENERS = frozenset(b"[{")
_QUOTE = ord('"')
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')


class TooDeep(ValueError):
    """A line nested deeper than MAX_DEPTH: refused before parsing."""


def nesting(line: bytes) -> int:
    """How deep arrays and objects nest on this line (brackets inside strings do not
    count), read until it passes MAX_DEPTH: deeper than that is refused whatever it is.

    Its memory is a small multiple of the line, whatever the line holds: a plain scan of
    copies, never a regular expression that keeps a frame per character (one did, and
    cost 148 times a line of long strings). Measured with tracemalloc for a 16 MiB line of
    brackets, strings and escapes: the peak is 1.8 times the line (the two copies made
    without the escapes); without escapes, once (the quotes and brackets alone).
    """
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:
        return 0  # cannot be too deep: nothing to measure
    # Inside a string a quote or a backslash is always escaped, so with the escapes taken
    # out every quote left opens or closes a string; then only quotes and brackets matter.
    # (A backslash outside a string is not JSON: the parser stops there, and the line up
    # to it is read right.)
    structure = line.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    depth = deepest = 0
    in_string = False
    for byte in structure:
        if byte == _QUOTE:
            in_string = not in_string
        elif in_string:
            continue
        elif byte in _OPENERS:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    break  # deep enough to refuse: nothing further can change that
        else:
            depth -= 1
    return deepest


def _no_constants(name: str) -> None:
    return None  # NaN and Infinity are not JSON: read as null, never passed on


def parse_line(line: bytes) -> Optional[Json]:
    """The JSON object on this line, or None if it is not one.

    Servers may print stray lines (a misconfigured logger, a banner); those are
    noise to be reported, never a reason to stop reading. A line nested deeper
    than MAX_DEPTH raises TooDeep: parsing it could exhaust the stack.
    """
    if nesting(line) > MAX_DEPTH:
        raise TooDeep(f"a message nested more than {MAX_DEPTH} levels deep")
    try:
        message = json.loads(line, parse_constant=_no_constants)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


class Pending:
    """One request waiting for its reply: a result, or an exception to raise."""

    __slots__ = ("method", "done", "result", "error")

    def __init__(self, method: str) -> None:
        self.method = method
        self.done = anyio.Event()
        self.result: Optional[Json] = None
        self.error: Optional[BaseException] = None

    def resolve(self, result: Json) -> None:
        if not self.done.is_set():
            self.result = result
            self.done.set()

    def reject(self, error: BaseException) -> None:
        if not self.done.is_set():
            self.error = error
            self.done.set()


class PendingRequests:
    """Request ids in flight, each mapped to its `Pending` slot."""

    def __init__(self) -> None:
        self._slots: Dict[RequestId, Pending] = {}
        self._ids: Iterator[int] = itertools.count(1)

    def open(self, method: str) -> "tuple[RequestId, Pending]":
        """Allocate a fresh id (never reused while in flight) and its slot."""
        request_id = next(self._ids)
        slot = Pending(method)
        self._slots[request_id] = slot
        return request_id, slot

    def get(self, request_id: Any) -> Optional[Pending]:
        """The slot for a reply's id; None for unknown or already-finished ids."""
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            return None
        return self._slots.get(request_id)

    def near_miss(self, request_id: Any) -> Optional[int]:
        """The pending id a reply's id was probably meant for, when it differs only
        in type ("1" or 1.0 for 1): never matched, but worth naming."""
        if isinstance(request_id, bool) or not isinstance(request_id, (str, float)):
            return None
        try:
            number = float(request_id)
        except ValueError:
            return None
        return int(number) if number.is_integer() and int(number) in self._slots else None

    def close(self, request_id: RequestId) -> None:
        self._slots.pop(request_id, None)

    def fail_all(self, error: BaseException) -> None:
        """Reject every request still waiting (the server is gone)."""
        for slot in self._slots.values():
            slot.reject(error)

    def __len__(self) -> int:
        return len(self._slots)
