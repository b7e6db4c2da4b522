"""`--html FILE` against hostile input: text a server or the code under test
planted in a verdict, a wire row or a journal is text on the page, never markup;
rows and verdicts of the wrong shape are dropped at the boundary; a link or a
FIFO planted where the page goes is not followed and does not hold up the run."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Dict, List

import pytest

from checks.harness import Verdict
from checks.page import page
from checks.tests.test_page import HOSTILE, about, event, journal, run_with_page, started


PLANTED = ('<style>body{display:none}</style><meta http-equiv=refresh content="0;url=http://x">'
           '<img src=x onerror=alert(1)>')


def forged_verdict(rows: List[Any]) -> Dict[str, Any]:
    """A verdict as it crosses from the worker to the runner, carrying `rows`."""
    return {"number": 1, "id": "connect", "title": "connects", "status": "fail", "duration": 0.1,
            "message": "got: nothing", "where": None, "trace": [], "wire": rows}


def test_a_planted_fold_row_never_becomes_markup_in_the_page() -> None:
    from checks.harness import verdict_from_json
    rows = [{"fold": PLANTED, "server": PLANTED}, {**event(0.0, "request", "server", "x"), "fold": PLANTED},
            event(0.1, "reply", "client", "#1 result")]
    verdict = verdict_from_json(forged_verdict(rows))
    assert verdict is not None
    text = page("MCP client lab · starter", "0/1 passed", [verdict])
    assert text.count("<style>") == 1 and "<meta http-equiv=refresh" not in text and "<img" not in text
    assert [r["label"] for r in verdict.wire] == ["x", "#1 result"]  # the fold row had no place in a wire


def test_rows_of_the_wrong_shape_are_dropped_at_the_boundary_and_the_page_still_renders() -> None:
    from checks.harness import verdict_from_json
    rows: List[Any] = [{**event(0.0, "request", "server", "kept"), "ms": "soon"}, "not a row",
                       {**event(0.1, "request", "server", "kept"), "label": ["a", "list"]},
                       {**event(0.2, "request", "server", "kept"), "kind": PLANTED},
                       {**event(0.3, "request", "server", "kept"), "ms": True},
                       event(0.4, "reply", "client", "kept")]
    verdict = verdict_from_json(forged_verdict(rows))
    assert verdict is not None and [r["ms"] for r in verdict.wire] == [0.4]
    assert "+0.4 ms" in page("MCP client lab · starter", "0/1 passed", [verdict])


def test_a_verdict_of_the_wrong_shape_is_refused_not_a_crash() -> None:
    from checks.harness import verdict_from_json
    assert verdict_from_json({**forged_verdict([]), "number": "1"}) is None
    assert verdict_from_json({**forged_verdict([]), "status": "PASS"}) is None
    assert verdict_from_json({**forged_verdict([]), "duration": "fast"}) is None
    assert verdict_from_json(["not", "a", "verdict"]) is None
    kept = verdict_from_json({**forged_verdict([]), "where": {"file": 3}, "trace": ["ok", 4]})
    assert kept is not None and kept.where is None and kept.trace == ["ok"]


def test_a_link_planted_where_the_page_is_written_first_is_not_followed(tmp_path: Path) -> None:
    victim, report = tmp_path / "victim.txt", tmp_path / "report.html"
    victim.write_text("keep me")
    (tmp_path / ".report.html.part").symlink_to(victim)
    done = run_with_page(report)
    assert done.returncode == 0 and victim.read_text() == "keep me"
    assert report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_planted_where_the_page_is_written_first_does_not_hold_up_the_run(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    os.mkfifo(tmp_path / ".report.html.part")
    done = run_with_page(report)  # bounded: without a reader a FIFO's open would block until the timeout
    assert done.returncode == 0 and report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_server_text_in_the_new_places_is_text_too(tmp_path: Path) -> None:
    from checks.trace import wire_events
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": HOSTILE, "arguments": {}}}
    task = {"jsonrpc": "2.0", "id": 3, "result": {"taskId": HOSTILE, "status": HOSTILE, "statusMessage": HOSTILE}}
    wire = wire_events([*journal(tmp_path, "tickets", [started(0.0, HOSTILE, "--fail", HOSTILE, fail=HOSTILE),
                                                       {"t": 0.1, "kind": "in", "msg": call},
                                                       {"t": 0.2, "kind": "out", "msg": task}])])
    said = f"with {HOSTILE} broken\ngot: refresh() raised {HOSTILE}"
    text = page(HOSTILE, HOSTILE, [Verdict(8, "offline", HOSTILE, "fail", 0.1, said, wire=wire)],
                [HOSTILE], dataclasses.replace(about(), target=HOSTILE, commit=HOSTILE))
    assert "<script" not in text and "<img" not in text and "\x1b" not in text
    assert "&lt;script&gt;" in text and 'font-weight="bold">&lt;script&gt;' in text
