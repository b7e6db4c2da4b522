"""The page as a reader sees it, in headless Chromium: on a 1400 px desktop and
on a 390 px phone the page itself never scrolls sideways (a wide diagram
scrolls in its own box) and its text stays at a readable size."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from checks.harness import Verdict
from checks.page import About, page
from checks.target import ROOT
from checks.tests.chromium import chromium, render

SHOTS = os.environ.get("MCP_LAB_SHOTS")  # a directory to keep the screenshots in, to look at them


def row(ms: float, kind: str, toward: str, label: str, server: str, id: str = "null") -> Dict[str, Any]:
    return {"ms": ms, "server": server, "kind": kind, "toward": toward, "label": label,
            "full": '{"jsonrpc": "2.0", "id": %s, "params": {"text": "%s"}}' % (id, "x" * 300), "id": id}


def wide_and_tall() -> List[Verdict]:
    """A run at its worst for a narrow window: seven servers side by side, a long
    conversation, a label of 200 characters and words too long to wrap."""
    servers = ["notes-exit-at-start", "tickets-exit-at-start", "notes-never-answer", "tickets-never-answer",
               "slow-tickets", "asking-tickets", "withdrawn-tickets"]
    wide = [row(float(i), "request", "server", f"tools/list #{i} " + "c" * 200, server, str(i))
            for i, server in enumerate(servers)]
    tall = [row(float(i), "request" if i % 2 == 0 else "reply", "server" if i % 2 == 0 else "client",
                f"tasks/get #{i // 2}" if i % 2 == 0 else f"#{i // 2} result working", "tickets", str(i // 2))
            for i in range(120)]
    unbroken = "got: " + "a" * 400
    return [Verdict(8, "offline", "a broken server goes offline", "fail", 2.0, unbroken, wire=wide),
            Verdict(16, "E6-tasks", "tasks are polled to the end", "pass", 9.0, "fine", wire=tall)]


@pytest.fixture(scope="module")
def solved_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page of a real run: the solution's items 5, 6 and 8 (item 8 the widest diagram)."""
    report = tmp_path_factory.mktemp("solved") / "report.html"
    done = subprocess.run([sys.executable, "-m", "checks", "--target", "solution", "5", "6", "8", "--html",
                           str(report)], capture_output=True, text=True, timeout=150, cwd=ROOT,
                          env={**os.environ, "MOCK": "1"})
    assert done.returncode == 0, done.stdout[-2000:]
    return report


def worst_page(directory: Path) -> Path:
    report = directory / "worst.html"
    about = About("2026-12-01 09:30 UTC", "mine (/home/a-learner/" + "deeply-nested-folder/" * 8 + "client)", "1a2b3c4",
                  "3.12.4 (CPython)", "0.1.0")
    report.write_text(page("MCP client lab · mine", "0/2 passed", wide_and_tall(), about=about), encoding="utf-8")
    return report


@pytest.mark.timeout(240)
@pytest.mark.parametrize("which", ["worst", "solved"])
@pytest.mark.parametrize("width, mobile", [(1400, False), (390, True)], ids=["desktop-1400", "phone-390"])
def test_the_page_never_scrolls_sideways_and_its_text_stays_readable(tmp_path: Path, width: int, mobile: bool,
                                                                    which: str, request: pytest.FixtureRequest) -> None:
    browser = chromium()  # skipped before a run is made for nothing
    report = worst_page(tmp_path) if which == "worst" else request.getfixturevalue("solved_page")
    layout = render(browser, report, width, mobile, tmp_path / "profile")
    if SHOTS:
        Path(SHOTS, f"{which}-{width}.png").write_bytes(layout.png)
    assert layout.png.startswith(b"\x89PNG")
    assert layout.scale == 1, "the browser zoomed out to fit the page: its text is drawn smaller than its size"
    assert layout.page_width <= width, f"the page is {layout.page_width} px wide in a {width} px window"
    assert layout.body_font >= 14 and layout.smallest_font >= 12
    assert layout.shrunk == 0  # a diagram keeps its size (and its text's); its box scrolls instead
    if which == "worst":  # seven lanes are wider than either window
        assert any(scrollable > visible for visible, scrollable in layout.boxes), "the wide diagram has no box"
