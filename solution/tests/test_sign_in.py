"""Where the sign-in comes back: the one-shot listener on 127.0.0.1, following an
authorization URL that approves at once, and a person's browser (only where there is one)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, List

import anyio
import anyio.abc
import anyio.from_thread
import pytest

from solution.remote.http_wire import Exchange, Url
from solution.remote.oauth import AuthFailed
from solution.remote.sign_in import InBrowser, browser_available, follow, redirect_listener

pytestmark = pytest.mark.anyio


async def get(url: str) -> int:
    async with Exchange(Url.parse(url), "GET", []) as sent:
        await sent.read(65536)
        return sent.response.status


async def test_the_listener_takes_only_the_first_callback_on_loopback() -> None:
    async with redirect_listener() as redirect:
        redirect.state = "s"
        assert redirect.uri.startswith("http://127.0.0.1:") and redirect.uri.endswith("/callback")
        origin = redirect.uri.rsplit("/", 1)[0]
        assert await get(origin + "/favicon.ico") == 404 and not redirect.arrived.is_set()
        assert await get(redirect.uri + "?code=one&state=s") == 200
        assert await get(redirect.uri + "?code=two&state=s") == 200
        assert redirect.arrived.is_set() and redirect.target == "/callback?code=one&state=s"


@asynccontextmanager
async def redirecting(status: int, location: str) -> AsyncIterator[str]:
    """A stand-in authorization server: every request is answered `status` with `location`."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def answer(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.receive()
            await stream.send(f"HTTP/1.1 {status} X\r\nLocation: {location}\r\nContent-Length: 0\r\n"
                              "Connection: close\r\n\r\n".encode())
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, answer)
        yield f"http://127.0.0.1:{port}/authorize"
        group.cancel_scope.cancel()


async def test_the_listener_ignores_callbacks_without_this_sign_ins_state_and_waits_on() -> None:
    said: List[str] = []
    async with redirect_listener() as redirect:
        redirect.state = "the-right-state"
        origin = redirect.uri.rsplit("/", 1)[0]

        def browser(url: str) -> None:  # a local process forges three callbacks before the real one comes
            for forged in ("?code=forged", "?code=forged&state=guessed", "?code=forged&state="):
                assert anyio.from_thread.run(get, redirect.uri + forged) == 400
            assert anyio.from_thread.run(get, origin + "//[odd/callback") in (400, 404)
            assert not redirect.arrived.is_set()
            anyio.from_thread.run(get, redirect.uri + "?code=real&state=the-right-state")
        await InBrowser(said.append, timeout=30, opener=browser)("https://a.example/", redirect, "server 'x'")
        assert redirect.target == "/callback?code=real&state=the-right-state"


async def test_a_refusal_while_the_listener_waits_is_raised_as_itself_not_in_an_exception_group() -> None:
    with pytest.raises(AuthFailed, match="no sign-in came back within 0.05 s") as raised:
        async with redirect_listener() as redirect:
            redirect.state = "s"
            await InBrowser(lambda line: None, timeout=0.05, opener=lambda url: None)("https://a.example/",
                                                                                     redirect, "s")
    assert type(raised.value) is AuthFailed


async def test_following_an_approving_server_reaches_the_listener() -> None:
    async with redirect_listener() as redirect:
        redirect.state = "s"
        async with redirecting(302, redirect.uri + "?code=c&state=s") as second, redirecting(303, second) as first:
            await follow(first, redirect, "server 'x'")
        assert redirect.target == "/callback?code=c&state=s"


async def test_a_server_that_wants_a_person_is_not_followed_into_a_page() -> None:
    async with redirect_listener() as redirect, redirecting(200, "") as page:
        with pytest.raises(AuthFailed, match="HTTP 200.*wants a person"):
            await follow(page, redirect, "server 'x'")
        assert not redirect.arrived.is_set()


@pytest.mark.parametrize("environ, platform, expected", [
    ({}, "linux", False), ({"DISPLAY": ":0"}, "linux", True), ({"WAYLAND_DISPLAY": "w"}, "linux", True),
    ({}, "darwin", True), ({}, "win32", True), ({"BROWSER": "none", "DISPLAY": ":0"}, "linux", False)])
def test_a_browser_is_opened_only_where_there_is_a_graphical_session(environ: Any, platform: str,
                                                                     expected: bool) -> None:
    assert browser_available(environ, platform) is expected


async def test_a_person_is_shown_the_address_and_the_wait_is_bounded() -> None:
    said: List[str] = []
    opened: List[str] = []
    async with redirect_listener() as redirect:
        redirect.state = "s"

        def browser(url: str) -> None:  # a person's browser: it opens the page, and the sign-in comes back
            opened.append(url)
            anyio.from_thread.run(get, redirect.uri + "?code=c&state=s")
        await InBrowser(said.append, timeout=30, opener=browser)("https://auth.example/authorize?x=1",
                                                                 redirect, "server 'docs'")
    assert said[0].startswith("server 'docs' asks you to sign in") and said[1] == "  https://auth.example/authorize?x=1"
    assert opened == ["https://auth.example/authorize?x=1"]
    async with redirect_listener() as redirect:
        with pytest.raises(AuthFailed, match="within 0.05 s"):
            await InBrowser(said.append, timeout=0.05, opener=lambda url: None)("https://a.example/", redirect, "s")
