"""One HTTP/1.1 exchange on a connection of its own, for the Streamable HTTP client.

The protocol is h11's (a sans-I/O HTTP/1.1 implementation: it frames
requests, reads chunked and length-delimited bodies, and refuses malformed
ones); this module is only the thin shell that moves its bytes over an anyio
TCP (or TLS) stream. Each exchange has its own connection, closed when the
exchange ends, which is how Streamable HTTP signals the end of interest in a
response stream (closing it cancels the request in the 2026-07-28 era).

h11 is imported here, and this module only by the HTTP client, so a client
that speaks only stdio never loads it.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import AsyncIterator, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

import anyio
import anyio.abc
import h11

from .urls import shown_path

READ_BYTES = 64 * 1024
MAX_HEADER_BYTES = 64 * 1024  # a response's status line and headers together


class HttpFailure(Exception):
    """The exchange could not happen or broke off (no connection, bad HTTP)."""


@dataclass(frozen=True)
class Url:
    scheme: str
    host: str
    port: int
    target: str  # path and query, as sent in the request line
    shown: str  # for messages: scheme, host, port and path; never the query, user info or a key in the path

    @classmethod
    def parse(cls, text: str) -> "Url":
        """Raises ValueError with the reason when `text` is not a usable http(s) URL."""
        parts = urlsplit(text)
        if parts.scheme not in ("http", "https"):
            raise ValueError("the URL must start with http:// or https://")
        if not parts.hostname:
            raise ValueError("the URL names no host")
        if parts.username or parts.password:
            raise ValueError("put credentials in 'headers', not in the URL (a URL is shown in messages)")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise ValueError("the URL's port is not a number from 1 to 65535") from None
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        default = port == (443 if parts.scheme == "https" else 80)
        shown = f"{parts.scheme}://{host}{'' if default else f':{port}'}{shown_path(parts.path or '/')}"
        return cls(parts.scheme, parts.hostname, port, target, shown)

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == (443 if self.scheme == "https" else 80) else f"{host}:{self.port}"


@dataclass
class Response:
    status: int
    reason: str
    headers: Dict[str, str] = field(default_factory=dict)  # names in lower case

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


def value_problem(value: str) -> Optional[str]:
    """Why `value` cannot go out as a header value (None: it can). Stricter than h11,
    which lets bytes beyond ASCII through as Latin-1: visible ASCII, with spaces and
    tabs only between. Said without the value, which is often a secret."""
    if value != value.strip(" \t"):
        return "starts or ends with a space or a tab (HTTP would not carry them)"
    if not all(c == "\t" or " " <= c <= "~" for c in value):
        return "has characters a header cannot carry (only visible ASCII, spaces and tabs)"
    return None


class Exchange:
    """`async with Exchange(...) as ex:` sends the request on a new connection;
    `ex.response` is the status and headers, `ex.body()` the body's chunks."""

    def __init__(self, url: Url, method: str, headers: List[Tuple[str, str]], body: bytes = b"") -> None:
        self.url = url
        self.method = method
        self.headers = headers
        self.payload = body
        self.response = Response(0, "")
        self._stream: Optional[anyio.abc.ByteStream] = None
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEADER_BYTES)

    async def __aenter__(self) -> "Exchange":
        for name, value in self.headers:  # before h11, whose error would quote the value
            problem = value_problem(value)
            if problem is not None:
                raise HttpFailure(f"the request was not sent: the value of header {name} {problem}")
        try:
            self._stream = await connect(self.url)
        except (OSError, ssl.SSLError, anyio.BrokenResourceError) as exc:
            raise HttpFailure(f"cannot connect ({describe(exc)})") from None
        try:
            request = h11.Request(method=self.method, target=self.url.target, headers=[
                ("Host", self.url.host_header), *self.headers,
                *([("Content-Length", str(len(self.payload)))] if self.payload or self.method == "POST" else [])])
            data = self._h11.send(request) or b""
            if self.payload:
                data += self._h11.send(h11.Data(data=self.payload)) or b""
            data += self._h11.send(h11.EndOfMessage()) or b""
            await self._stream.send(data)
        except h11.LocalProtocolError as exc:  # a header value h11 will not send (a server's session id, say)
            await self.aclose()
            raise HttpFailure(f"the request could not be written as HTTP/1.1 ({exc})") from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            await self.aclose()
            raise HttpFailure(f"the connection broke while sending ({describe(exc)})") from None
        except BaseException:
            await self.aclose()
            raise
        try:
            while True:
                event = await self._next()
                if isinstance(event, h11.Response):
                    break
                if isinstance(event, h11.ConnectionClosed):
                    raise HttpFailure("the connection closed before a response")
            self.response = Response(event.status_code, event.reason.decode("latin-1", "replace"),
                                     {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in event.headers})
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def body(self, limit: Optional[int] = None) -> AsyncIterator[bytes]:
        """The body's chunks as they arrive (at most `limit` bytes in all)."""
        taken = 0
        while True:
            event = await self._next()
            if isinstance(event, h11.Data):
                taken += len(event.data)
                if limit is not None and taken > limit:
                    raise HttpFailure(f"a response body longer than {limit} bytes")
                yield bytes(event.data)
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                return

    async def read(self, limit: int) -> bytes:
        return b"".join([chunk async for chunk in self.body(limit)])

    async def _next(self) -> object:
        assert self._stream is not None
        closed = False
        while True:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                if closed:  # h11's words for it ("incomplete chunked read") say nothing to a user
                    raise HttpFailure("the server closed the connection before its answer was complete") from None
                raise HttpFailure(f"the server broke HTTP/1.1 ({exc})") from None
            if event is not h11.NEED_DATA:
                return event
            try:
                data = await self._stream.receive(READ_BYTES)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                data = b""  # h11 decides whether the body was complete
            closed = not data
            self._h11.receive_data(data)

    async def aclose(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            with anyio.CancelScope(shield=True):
                await stream.aclose()


async def connect(url: Url) -> anyio.abc.ByteStream:
    if url.scheme == "https":
        return await anyio.connect_tcp(url.host, url.port, tls=True, ssl_context=ssl.create_default_context(),
                                       tls_hostname=url.host, tls_standard_compatible=False)
    return await anyio.connect_tcp(url.host, url.port)


def describe(exc: BaseException) -> str:
    """An OS or TLS error in a few words (its errno name and text, no traceback)."""
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return str(text)[:200]
