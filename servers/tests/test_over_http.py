"""The fixtures over HTTP refuse what the spec says a server must refuse."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture
def url() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(ROOT / "servers" / "notes.py"), "--http", str(port)],
                               stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "ready" not in process.stderr.readline():
            assert process.poll() is None
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(30)


def post(url: str, body: Dict[str, Any], headers: Dict[str, str]) -> Tuple[int, Any]:
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        data = refused.read()
        return refused.code, json.loads(data) if data else None


def test_headers_that_match_the_body_are_answered_and_others_refused(url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    good = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    status, reply = post(url, body, good)
    assert status == 200 and reply["result"]["tools"]
    status, reply = post(url, body, {**good, "Mcp-Method": "tools/call"})
    assert status == 400 and reply["error"]["code"] == -32020
    status, reply = post(url, body, {"Mcp-Method": "tools/list"})
    assert status == 400 and "MCP-Protocol-Version" in reply["error"]["message"]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "x"}, "_meta": META}}
    status, _ = post(url, call, {**good, "Mcp-Method": "tools/call", "Mcp-Name": "=?base64?c2VhcmNo?="})
    assert status == 200  # the Base64 sentinel is decoded before comparing


def test_a_page_elsewhere_is_refused(url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    status, _ = post(url, body, {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list",
                                 "Origin": "http://evil.example.com"})
    assert status == 403
