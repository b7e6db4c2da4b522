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


def encode(message: Json) -> bytes:
    """One message as one line: compact JSON, UTF-8, a single trailing newline."""
    return (_encoder.encode(message) + "\n").encode("utf-8")


def parse_line(line: bytes) -> Optional[Json]:
    """The JSON object on this line, or None if it is not one.

    Servers may print stray lines (a misconfigured logger, a banner); those are
    noise to be reported, never a reason to stop reading.
    """
    try:
        message = json.loads(line)
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

    def close(self, request_id: RequestId) -> None:
        self._slots.pop(request_id, None)

    def fail_all(self, error: BaseException) -> None:
        """Reject every request still waiting (the server is gone)."""
        for slot in self._slots.values():
            slot.reject(error)

    def __len__(self) -> int:
        return len(self._slots)
