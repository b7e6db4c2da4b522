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


def test_an_origin_is_compared_by_its_host_not_its_prefix(url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    for origin in ("http://localhost.evil.example", "http://127.0.0.1.evil.example:80", "http://localhost@evil.example"):
        assert post(url, body, {**headers, "Origin": origin})[0] == 403, origin
    for origin in ("http://localhost:5173", "https://127.0.0.1", "http://[::1]:8080"):
        assert post(url, body, {**headers, "Origin": origin})[0] == 200, origin


def raw_post(url: str, head: bytes, body: bytes) -> Tuple[int, Any]:
    """One POST written by hand (urllib would mend a bad Content-Length); the status
    and the JSON body. A server that never answers fails this at the socket's timeout."""
    port = int(url.split(":")[2].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           + head + b"\r\n" + body)
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < length_of(answer):
            chunk = connection.recv(65536)
            assert chunk, f"the connection closed without an answer (so far: {answer[:200]!r})"
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    payload = rest.split(b"\r\n\r\n", 1)[1]
    return int(status_line.split()[1]), json.loads(payload) if payload else None


def length_of(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


@pytest.mark.parametrize("length", [b"-1", b"abc", b"+5", b" 5 5"])
def test_a_content_length_that_is_not_a_number_of_bytes_is_refused(url: str, length: bytes) -> None:
    status, _ = raw_post(url, b"Content-Length: " + length + b"\r\n", b"{}")
    assert status == 400


@pytest.mark.parametrize("body, code", [
    (b"[" * 100_000 + b"]" * 100_000, -32700),  # json.loads raises RecursionError, not ValueError
    (b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", -32700),
    (json.dumps({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "tools/list",
                 "params": {"_meta": META}}).encode(), -32600),
    (json.dumps({"jsonrpc": "2.0", "id": [1], "result": {}}).encode(), -32600),
], ids=["nested arrays", "nested in an object", "an object as the id", "a list as a reply's id"])
def test_a_body_the_fixture_cannot_use_gets_a_json_rpc_error(url: str, body: bytes, code: int) -> None:
    head = b"Content-Length: %d\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n" % len(body)
    status, reply = raw_post(url, head, body)
    assert status == 400 and reply["error"]["code"] == code and reply["id"] is None
    status, _ = post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
                     {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
    assert status == 200  # and the fixture still answers
