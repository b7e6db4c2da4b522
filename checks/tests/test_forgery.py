"""A submission that forges its verdicts: each forgery runs from inside a copy of
the shipped starter (a few lines added to its `__init__.py`, with checks/ and
servers/ untouched), and none of them is a pass or exit 0. The honest paths stay
as they were (test_isolation, test_integrity, test_false_greens)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from checks.tests.conftest import Variant
from checks.tests.test_isolation import checks

STARTER_RED = {2, 3, 5, 6, 8}  # the items the shipped starter fails


def forged(variant: Variant, code: str) -> Path:
    """The shipped starter with `code` run when the package is imported."""
    return variant("starter", edits={"__init__.py": ('"""\n', '"""\n' + code + "\n")})


def statuses(report: Dict[str, Any]) -> Dict[int, str]:
    return {int(i["number"]): str(i["status"]) for i in report["items"]}


# A process started by the submission that connects where the servers send
# their accounts, and sends one that says every request was answered.
IMPOSTOR = '''
import os, subprocess, sys
script = """
import json, os, socket, time
runner = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
runner.connect(os.environ["MCP_LAB_EVIDENCE"])
place = os.path.join(os.environ["MCP_LAB_RUN_DIR"], "mcp-lab-3-forged", "notes-0.jsonl")
runner.sendall((json.dumps({"journal": place}) + "\\\\n").encode())
runner.sendall((json.dumps({"t": time.time(), "kind": "start", "pid": os.getpid()}) + "\\\\n").encode())
"""
subprocess.run([sys.executable, "-c", script], timeout=30)
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runner names a peer from /proc")
def test_a_process_that_is_no_fixture_server_cannot_send_an_account(variant: Variant) -> None:
    status, report, _ = checks(forged(variant, IMPOSTOR), "1")
    assert status == 2
    assert any("not one of the run's fixture servers" in p and "-c" in p for p in report["problems"])


# The worker's verdict carries a wire of its own making.
PLANTED_WIRE = '''
from checks.harness import Verdict
_plain = Verdict.to_json
def _to_json(self, *args, **kwargs):
    data = _plain(self, *args, **kwargs)
    data["wire"] = [{"ms": 0.0, "server": "notes", "kind": "reply", "toward": "client", "label": "PLANTED",
                     "full": "PLANTED", "id": "1"}]
    data["trace"] = ["PLANTED"]
    return data
Verdict.to_json = _to_json
'''


def test_the_wire_shown_is_the_servers_own_account_not_the_workers(variant: Variant, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    _, report, _ = checks(forged(variant, PLANTED_WIRE), "1", "--trace", "--html", str(page))
    trace: List[str] = report["items"][0]["trace"]
    assert trace and not any("PLANTED" in line for line in trace)
    assert any("server/discover" in line for line in trace)
    assert "PLANTED" not in page.read_text(encoding="utf-8")
