"""Headless Chromium driven over its DevTools pipe, for the page's layout tests.

Why the DevTools protocol and not `--screenshot` or `--dump-dom`: those flags
render as a desktop window, which ignores the viewport meta, so the phone's
view the issue saw (a 980 px layout shrunk to fit, text about 4 px) never shows;
and measuring the layout with `--dump-dom` would need a script in the page,
which its Content-Security-Policy forbids. Over the pipe the page is emulated
as a phone (`mobile: true`) or a desktop, measured with Runtime.evaluate (which
the page's CSP does not govern: the page is tested exactly as it ships), and
photographed, all in one browser session.

Every read waits at most until a deadline; the browser is this helper's own
child, in a process group of its own, and is ended by id when it is done.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

def chromium() -> str:
    """Debian's chromium: required in CI (MCP_LAB_SHIPPED), else the test is skipped saying what it needs."""
    import pytest
    found = shutil.which("chromium")
    if found is None:
        if os.environ.get("MCP_LAB_SHIPPED"):
            pytest.fail("headless Chromium is needed here (apt-get install chromium); CI installs it")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium); CI runs this test")
    return found


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]

# What the page looks like to a reader, measured in the browser: how wide the
# page is against the window, the zoom a phone applied, the text's sizes, and
# any diagram drawn smaller than its own width (a shrunk SVG shrinks its text).
# Every <details> is opened first: what a reader may open counts too.
# Measured two animation frames after the load event: a phone's viewport (and the
# layout that follows it) may settle a frame after load, and a busy machine makes
# that frame late; a frame is an event, so nothing here waits on a clock.
MEASURE = """new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done))).then(() =>
JSON.stringify((() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const texts = [...document.querySelectorAll('body, body *')].filter(
    e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()));
  return {
    pageWidth: document.documentElement.scrollWidth,
    scale: window.visualViewport.scale,
    bodyFont: parseFloat(getComputedStyle(document.body).fontSize),
    smallestFont: Math.min(...texts.map(e => parseFloat(getComputedStyle(e).fontSize))),
    shrunk: [...document.querySelectorAll('svg')].filter(
      s => Math.abs(s.getBoundingClientRect().width - s.width.baseVal.value) > 1).length,
    boxes: [...document.querySelectorAll('.diagram')].map(b => [b.clientWidth, b.scrollWidth]),
  };
})()))"""


@dataclass(frozen=True)
class Layout:
    """The page as one window width showed it."""

    page_width: float  # the document's scrollable width, CSS px: more than the window means sideways scroll
    scale: float  # the zoom the browser applied to fit the page (1: none)
    body_font: float  # CSS px
    smallest_font: float  # CSS px, of any element holding text
    shrunk: int  # diagrams drawn narrower than their width (their text with them)
    boxes: List[List[float]]  # each diagram box's [visible width, scrollable width]
    png: bytes  # the window, as a screenshot


class Browser:
    """One headless Chromium and one tab of it, spoken to over --remote-debugging-pipe
    (commands on its fd 3, replies on its fd 4, each JSON ending in a NUL)."""

    def __init__(self, binary: str, profile: Path) -> None:
        # sh puts our pipes on the browser's fds 3 and 4, then becomes the browser.
        self.process = subprocess.Popen(
            ["sh", "-c", 'exec "$0" "$@" 3<&0 4>&1 </dev/null >/dev/null', binary, *FLAGS,
             f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self.buffer = b""
        self.sent = 0
        self.session: Optional[str] = None

    def send(self, method: str, params: Optional[Dict[str, Any]] = None) -> int:
        assert self.process.stdin is not None
        self.sent += 1
        message: Dict[str, Any] = {"id": self.sent, "method": method, "params": params or {}}
        if self.session is not None and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        self.process.stdin.write(json.dumps(message).encode() + b"\0")
        self.process.stdin.flush()
        return self.sent

    def messages(self, deadline: float) -> Iterator[Dict[str, Any]]:
        """What the browser says, one message at a time, until `deadline` (then TimeoutError)."""
        assert self.process.stdout is not None
        while True:
            while b"\0" in self.buffer:
                one, self.buffer = self.buffer.split(b"\0", 1)
                yield json.loads(one)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise EOFError("Chromium closed its pipe")
                self.buffer += chunk

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: float = 30.0) -> Dict[str, Any]:
        asked = self.send(method, params)
        for message in self.messages(time.monotonic() + timeout):
            if message.get("id") == asked:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: Dict[str, Any] = message.get("result", {})
                return result
        raise AssertionError("unreachable: messages() ends only by raising")

    def open_tab(self) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable")

    def load(self, url: str, timeout: float = 30.0) -> None:
        self.send("Page.navigate", {"url": url})
        for message in self.messages(time.monotonic() + timeout):
            if message.get("method") == "Page.loadEventFired":
                return

    def close(self) -> None:
        """Ask the browser to quit; if it does not within a few seconds, end its group."""
        try:
            self.send("Browser.close")
            self.process.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # the group this helper started, by its id
            except ProcessLookupError:
                pass
            self.process.wait(10)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


@contextmanager
def showing(binary: str, page: Path, width: int, mobile: bool, profile: Path) -> Iterator[Browser]:
    """A browser with `page` loaded in a window `width` CSS px wide (as a phone when
    `mobile`); ended when the block ends, however it ends."""
    browser = Browser(binary, profile)
    try:
        browser.open_tab()
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": mobile})
        browser.load(page.resolve().as_uri())
        yield browser
    finally:
        browser.close()


def evaluated(browser: Browser, expression: str) -> Any:
    """What `expression` (a promise of a JSON string) comes to in the page, parsed."""
    return json.loads(browser.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                        "returnByValue": True})["result"]["value"])


def render(binary: str, page: Path, width: int, mobile: bool, profile: Path) -> Layout:
    """`page` in a window `width` CSS px wide (as a phone when `mobile`), measured and photographed."""
    with showing(binary, page, width, mobile, profile) as browser:
        measured = evaluated(browser, MEASURE)
        shot = base64.b64decode(browser.call("Page.captureScreenshot", {"format": "png"})["data"])
    return Layout(measured["pageWidth"], measured["scale"], measured["bodyFont"], measured["smallestFont"],
                  measured["shrunk"], measured["boxes"], shot)


# The box of the first element `selector` names, in page coordinates, once laid out.
BOX = """new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done))).then(() => {
  const box = document.querySelector(%s).getBoundingClientRect();
  return JSON.stringify([box.left + scrollX, box.top + scrollY, box.width, box.height]);
})"""


def photograph(binary: str, page: Path, width: int, selector: str, profile: Path) -> bytes:
    """A PNG of one element of `page` (wherever it lies on the page) in a desktop
    window `width` CSS px wide."""
    with showing(binary, page, width, False, profile) as browser:
        x, y, w, h = evaluated(browser, BOX % json.dumps(selector))
        clip = {"x": x, "y": y, "width": max(w, 1), "height": max(h, 1), "scale": 1}
        return base64.b64decode(browser.call("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                                         "captureBeyondViewport": True})["data"])
