"""Where one HTTP request's messages go: a lone reply as JSON, anything more as
a Server-Sent Events stream, written plainly or (`--sse`) with every liberty
the format allows; and the messages a broken stream still owes (`--sse-break`).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, List, Optional, Protocol

from servers.rpc import Json


class StreamOwner(Protocol):
    """What a stream needs from its shell: the switches, and ids for events."""

    options: Any

    def event_id(self) -> str: ...


def token_boundary(data: bytes) -> int:
    """Just after a comma outside any string, past the middle where one is: a cut
    there leaves JSON that a newline rejoins (a newline inside a string would not)."""
    inside = escaped = False
    for at, byte in enumerate(data):
        if escaped:
            escaped = False
        elif byte == 0x5C and inside:  # backslash
            escaped = True
        elif byte == 0x22:  # quote
            inside = not inside
        elif byte == 0x2C and not inside and at >= len(data) // 2:
            return at + 1
    return len(data)


class Sink:
    """Where one POST's messages go: JSON for a lone reply, else an SSE stream."""

    def __init__(self, handler: BaseHTTPRequestHandler, request_id: Any, headers: List[tuple[str, str]],
                 shell: StreamOwner) -> None:
        self.handler = handler
        self.request_id = request_id
        # Each answer ends its connection (an event stream's end is the close), and says so: a
        # client that keeps connections alive would otherwise send its next request on this one.
        self.headers = [*headers, ("Connection", "close")]
        self.session: Optional[str] = None  # a handshake-era GET stream: the session it belongs to
        self.wants: Json = {}  # a listen stream (2026-07-28): what its acknowledgement honoured
        self.streaming = False
        self.shell = shell
        self.noisy = bool(shell.options.sse)
        self.lock = threading.Lock()  # a listen stream is written from other requests' threads too

    def open_stream(self) -> None:
        self.streaming = True
        self.handler.send_response(200)
        for name, value in [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                            ("X-Accel-Buffering", "no"), *self.headers]:
            self.handler.send_header(name, value)
        self.handler.end_headers()
        if self.noisy:  # a priming event: an id, a retry no client can use, no message
            self.handler.wfile.write(f": stream for request {self.request_id}\r\nid: {self.shell.event_id()}\r\n"
                                     f"retry: soon\r\ndata:\r\n\r\n".encode())
            self.handler.wfile.flush()

    def event(self, data: bytes, decoy: bool = False) -> None:
        if not self.noisy:
            self.handler.wfile.write(b"event: message\ndata: " + data + b"\n\n")
            self.handler.wfile.flush()
            return
        if decoy:  # an event of another type: not a message, though its data looks like this reply
            fake = data.replace(b'"text":"', b'"text":"decoy, not a message: ', 1)
            self.handler.wfile.write(b"event: decoy\r\ndata: " + fake + b"\r\n\r\n")
        cut = token_boundary(data)
        # `aside` sorts before every field name and `x-later` after: both are to be ignored.
        head = (f"event: message\r\nid: {self.shell.event_id()}\r\naside: 7\r\ndata: ".encode() + data[:cut]
                + b"\r\n")
        self.handler.wfile.write(head + b": the rest follows\r\n")
        self.handler.wfile.flush()  # the client reads the event in two pieces
        self.handler.wfile.write(b"data: " + data[cut:] + b"\r\nx-later: 3\r\n\r\n")
        self.handler.wfile.flush()

    def send(self, message: Json) -> None:
        with self.lock:
            self._send(message)

    def keep_alive(self) -> None:
        with self.lock:
            self.handler.wfile.write(b": keep-alive\n\n")
            self.handler.wfile.flush()

    def _send(self, message: Json) -> None:
        data = json.dumps(message, separators=(",", ":")).encode()
        final = message.get("id") == self.request_id and "method" not in message
        if final and not self.streaming and not self.noisy:
            self.handler.send_response(200)
            for name, value in [("Content-Type", "application/json"), *self.headers]:
                self.handler.send_header(name, value)
            self.handler.send_header("Content-Length", str(len(data)))
            self.handler.end_headers()
            self.handler.wfile.write(data)
            return
        if not self.streaming:
            self.open_stream()
        self.event(data, decoy=final and b'"text":"' in data)


@dataclass
class Held:
    """A broken stream's messages, kept for the GET that resumes it (`--sse-break`)."""

    request_id: Any
    messages: List[Json] = field(default_factory=list)

    def send(self, message: Json) -> None:
        self.messages.append(message)
