"""Server-Sent Events: the bytes of an HTTP response body, cut into events.

An MCP server over Streamable HTTP may answer a POST with
`Content-Type: text/event-stream` instead of one JSON object. The body is
then lines of `field: value`; a blank line ends an event, a line starting
with `:` is a comment (servers send them to keep a quiet stream open), and
`data` lines join with newlines into the event's text, which for MCP is one
JSON-RPC message. `id` is remembered even on an event with no message (a
server's "priming" event, `data:` left empty), because a client that loses the stream asks for
what came after it (`Last-Event-ID`); `retry` is how long to wait before
asking.

Pure: `feed` takes whatever chunks the network delivers, split anywhere, and
returns the events they complete. Tested without a socket.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional

MAX_EVENT_BYTES = 16 * 1024 * 1024  # one event, like one stdio line: past this the stream is dropped
# A retry of more digits is ignored: 10**15 ms is over 30,000 years, so no server
# means it, and int() refuses a string of over 4,300 digits (a hostile stream's easy raise).
RETRY_DIGITS = 15
LINE_END = re.compile(rb"\r\n|\r|\n")  # the first one found from a point; nothing past it is read


class EventTooLarge(ValueError):
    """An event (or a line) grew past MAX_EVENT_BYTES without ending."""


@dataclass(frozen=True)
class Event:
    data: str
    event: str = "message"
    id: Optional[str] = None


class EventStream:
    """Incremental parser; `last_id` and `retry_ms` outlive the events that set them."""

    def __init__(self, limit: int = MAX_EVENT_BYTES) -> None:
        self.limit = limit
        self.last_id: Optional[str] = None
        self.retry_ms: Optional[int] = None
        self._buffer = bytearray()  # an unfinished line
        self._searched = 0  # how much of the buffer is known to hold no line end
        self._data: List[str] = []
        self._size = 0
        self._type = ""
        self._skip_lf = False  # a chunk ended on "\r": a "\n" starting the next is the same line end

    def feed(self, chunk: bytes) -> List[Event]:
        """The events that `chunk` completes, in order. Linear in the bytes fed, however
        they are cut: each byte is searched once, and what is left unfinished is kept in
        a buffer that grows in place (a copy per chunk or per line made a long line in
        small pieces, or many lines in one chunk, cost their length squared)."""
        if not chunk:
            return []  # nothing, and a "\r" just before still waits for its "\n"
        if self._skip_lf and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._skip_lf = False
        buffer = self._buffer
        buffer += chunk
        events: List[Event] = []
        start = 0  # where the next line begins
        while True:
            end = LINE_END.search(buffer, max(start, self._searched))
            if end is None:
                break
            line = buffer[start:end.start()]
            if end.group() == b"\r" and end.end() == len(buffer):
                self._skip_lf = True  # the "\n" of "\r\n" may come in the next chunk
            start = end.end()
            text = line.decode("utf-8", "replace")
            event = self._line(text)
            if event is not None:
                events.append(event)
            # Counted here, whatever the line did: an event that never ends is refused.
            self._size = 0 if text == "" else self._size + len(line) + 1
        del buffer[:start]  # once per chunk: what is left is one unfinished line
        self._searched = len(buffer)  # and it holds no line end
        if len(buffer) + self._size > self.limit:
            raise EventTooLarge(f"an event longer than {self.limit} bytes")
        return events

    def _line(self, line: str) -> Optional[Event]:
        """One line of the stream: an event when it ends one, else None."""
        # >>> extension E9 (remote): one line of an event stream
        if line == "":  # a blank line ends the event
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: keep-alive, nothing else
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]  # one space after the colon is the format's, not the value's
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._type = value
        elif name == "id" and "\0" not in value:
            self.last_id = value
        elif name == "retry" and value.isascii() and value.isdigit() and len(value) <= RETRY_DIGITS:
            self.retry_ms = int(value)
        return None  # any other field is ignored, as the format requires
        # <<< extension E9

    def _dispatch(self) -> Optional[Event]:
        data, kind = self._data, self._type or "message"
        self._data, self._size, self._type = [], 0, ""
        if not data:
            return None  # no data line at all: nothing to dispatch (id and retry are kept)
        return Event("\n".join(data), kind, self.last_id)
