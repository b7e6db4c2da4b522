"""Where a person (or a test) signs in: the one-shot listener on 127.0.0.1 that takes
the authorization server's redirect, and the two ways to get there.

- `InBrowser`: print the authorization URL (always: a person may be on another
  machine, over ssh), open a browser where there is one, and wait, bounded,
  for the redirect.
- `follow`: GET the authorization URL and follow its redirects as a browser
  would, until one reaches the listener. For an authorization server that
  approves without a person: the conformance suite's, and the notes fixture
  started with `--auth auto` (`MCP_LAB_SIGN_IN=follow` chooses it).

The listener answers only `GET /callback` (anything else is 404), takes the
first one that carries this sign-in's `state`, and shows a page saying the
window may be closed. One without it (from any local process, or a web page
that found the port) is answered 400 and ignored: the wait goes on until the
real redirect or its timeout. It binds 127.0.0.1, never every interface (RFC
8252 section 7.3). A refusal raised while it listens leaves it as itself, one
AuthFailed, never wrapped in the listener's exception group.
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
from contextlib import asynccontextmanager
from typing import AsyncIterator, Callable, Mapping, Optional
from urllib.parse import parse_qsl, urljoin, urlsplit

import anyio
import anyio.abc
import h11

from .http_wire import Exchange, HttpFailure, Url
from .oauth import AuthFailed, Redirect
from ..untrusted import shown

CALLBACK = "/callback"
MAX_HOPS = 10  # redirects followed from the authorization URL to the listener
READ_LIMIT = 16 * 1024  # of a request to the listener
REQUEST_WAIT = 10.0  # seconds one connection to the listener may take to send its request
DONE_PAGE = (b"<!doctype html><title>Signed in</title><p>Signed in. You can close this window "
             b"and go back to the terminal.</p>")
NOT_OURS_PAGE = b"not this sign-in's redirect (no state, or another one)"


def parts_of(target: str) -> "tuple[str, str]":
    """A request target's path and query ("" for one urlsplit cannot read, as `//[x`)."""
    try:
        parts = urlsplit(target)
    except ValueError:
        return "", ""
    return parts.path, parts.query


def carries_state(query: str, state: Optional[str]) -> bool:
    """Whether a callback's query carries `state` (None: no sign-in is waiting yet)."""
    given = dict(parse_qsl(query, keep_blank_values=True)).get("state", "")
    return state is not None and secrets.compare_digest(given.encode(), state.encode())


async def _serve(redirect: Redirect, stream: anyio.abc.ByteStream) -> None:
    """Answer one connection to the listener: the first GET /callback is the redirect."""
    connection = h11.Connection(h11.SERVER, max_incomplete_event_size=READ_LIMIT)
    try:
        with anyio.fail_after(REQUEST_WAIT):
            request: Optional[h11.Request] = None
            while True:
                event = connection.next_event()
                if event is h11.NEED_DATA:
                    connection.receive_data(await stream.receive(READ_LIMIT))
                elif isinstance(event, h11.Request):
                    request = event
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
        target = request.target.decode("ascii", "replace") if request is not None else ""
        path, query = parts_of(target)
        callback = request is not None and request.method == b"GET" and path == CALLBACK
        ours = callback and carries_state(query, redirect.state)
        if ours and not redirect.arrived.is_set():
            redirect.target = target
            redirect.arrived.set()
        status, body = (200, DONE_PAGE) if ours else (400, NOT_OURS_PAGE) if callback else (404, b"not found")
        data = connection.send(h11.Response(status_code=status, headers=[
            ("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body))),
            ("Connection", "close"), ("Cache-Control", "no-store")])) or b""
        data += (connection.send(h11.Data(data=body)) or b"") + (connection.send(h11.EndOfMessage()) or b"")
        await stream.send(data)
    except (TimeoutError, h11.ProtocolError, anyio.EndOfStream, anyio.BrokenResourceError, OSError):
        pass  # a stray or broken connection: nothing to answer, the listener waits on
    finally:
        await stream.aclose()


def port_free(port: int) -> bool:
    """Whether the redirect listener could take `port` again (as anyio binds it: with
    SO_REUSEADDR, so the last sign-in's closed connections do not hold it)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@asynccontextmanager
async def redirect_listener(port: int = 0) -> AsyncIterator[Redirect]:
    """Listen on 127.0.0.1:`port` (0: any free port) for the length of the block."""
    try:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    except OSError as exc:
        raise AuthFailed(f"cannot listen on 127.0.0.1:{port} for the sign-in's redirect ({exc.strerror})") from None
    bound = listener.extra(anyio.abc.SocketAttribute.local_port)
    redirect = Redirect(f"http://127.0.0.1:{bound}{CALLBACK}")
    refused: Optional[AuthFailed] = None
    async with listener, anyio.create_task_group() as group:
        async def handle(stream: anyio.abc.SocketStream) -> None:
            await _serve(redirect, stream)
        group.start_soon(listener.serve, handle)
        try:
            yield redirect
        except AuthFailed as exc:  # raised below, as it is: the task group would wrap it in a group
            refused = exc
        finally:
            group.cancel_scope.cancel()
    if refused is not None:
        raise refused


def next_hop(url: str, location: str) -> str:
    """Where a redirect's Location leads from `url`; one urljoin cannot read is taken as it
    stands, for the next hop to refuse in words."""
    try:
        return urljoin(url, location)
    except ValueError:
        return location


async def follow(url: str, redirect: Redirect, who: str, *, timeout: float = 30.0) -> None:
    """Sign in without a person: follow the authorization URL's redirects to the listener."""
    with anyio.move_on_after(timeout):
        for _ in range(MAX_HOPS):
            try:
                scheme = urlsplit(url).scheme
            except ValueError:
                raise AuthFailed(f"signing in to {who}: the authorization server redirected to "
                                 f"{shown(url, 100)}, which is not a usable URL") from None
            if scheme not in ("http", "https"):
                raise AuthFailed(f"signing in to {who}: the authorization server redirected to a "
                                 f"{shown(scheme, 20)}: address this client cannot follow")
            try:
                async with Exchange(Url.parse(url), "GET", [("Accept", "text/html")]) as sent:
                    status, location = sent.response.status, sent.response.headers.get("location")
            except (HttpFailure, ValueError) as exc:
                raise AuthFailed(f"signing in to {who}: {shown(str(exc), 300)}") from None
            if redirect.arrived.is_set():
                return
            if status in (301, 302, 303, 307, 308) and location:
                url = next_hop(url, location)
                continue
            raise AuthFailed(f"signing in to {who}: the authorization server answered HTTP {status} instead of "
                             "approving at once (it wants a person: sign in with a browser)")
        raise AuthFailed(f"signing in to {who}: more than {MAX_HOPS} redirects")
    raise AuthFailed(f"signing in to {who}: the authorization server did not answer within {timeout:g} s")


def browser_available(environ: Mapping[str, str], platform: str) -> bool:
    """Whether a browser can be opened here: always on macOS and Windows; elsewhere only
    with a graphical session (a text browser would take over the terminal)."""
    if environ.get("BROWSER") == "none":
        return False
    if platform == "darwin" or platform.startswith("win"):
        return True
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


class InBrowser:
    """A person signs in: the URL printed, a browser opened where there is one."""

    def __init__(self, say: Callable[[str], None], *, timeout: float = 300.0,
                 opener: Optional[Callable[[str], object]] = None) -> None:
        self.say = say
        self.timeout = timeout
        self.opener = opener

    async def __call__(self, url: str, redirect: Redirect, who: str) -> None:
        self.say(f"{who} asks you to sign in. Open this address in a browser "
                 f"(waiting up to {self.timeout:g} s):")
        self.say(f"  {shown(url)}")
        opener = self.opener
        if opener is None and browser_available(os.environ, sys.platform):
            import webbrowser
            opener = webbrowser.open
        if opener is not None:
            await anyio.to_thread.run_sync(opener, url)
        with anyio.move_on_after(self.timeout):
            await redirect.arrived.wait()
        if not redirect.arrived.is_set():
            raise AuthFailed(f"signing in to {who}: no sign-in came back within {self.timeout:g} s")
