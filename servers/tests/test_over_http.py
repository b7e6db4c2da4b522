"""The fixtures over HTTP refuse what the spec says a server must refuse."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


@contextmanager
def serving(*extra: str) -> Iterator[str]:
    """The notes fixture over HTTP with these switches, killed at the end; its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(ROOT / "servers" / "notes.py"), "--http", str(port), *extra],
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


@pytest.fixture
def url() -> Iterator[str]:
    with serving() as served:
        yield served


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


def port_of(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def request_bytes(message: Dict[str, Any], headers: Dict[str, str]) -> bytes:
    body = json.dumps(message).encode()
    head = "".join(f"{name}: {value}\r\n" for name, value in
                   {"Host": "127.0.0.1", "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream", "Content-Length": str(len(body)),
                    **headers}.items())
    return f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + body


def head_of(answer: bytes) -> Tuple[int, Dict[str, str]]:
    lines = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    fields = dict(line.split(":", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.strip().lower(): v.strip() for k, v in fields.items()}


def until_closed(connection: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (bounded by the socket's timeout)."""
    answer = b""
    while chunk := connection.recv(65536):
        answer += chunk
    return answer


CURRENT = {"MCP-Protocol-Version": "2026-07-28"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}


@pytest.mark.parametrize("switches, headers, status, kind", [
    ((), {**CURRENT, "Mcp-Method": "tools/list"}, 200, "application/json"),
    (("--sse",), {**CURRENT, "Mcp-Method": "tools/list"}, 200, "text/event-stream"),
    ((), {**CURRENT, "Mcp-Method": "tools/call"}, 400, "application/json"),
], ids=["a JSON answer", "an event stream", "a refusal"])
def test_a_connection_the_fixture_closes_after_its_answer_says_so(switches: Tuple[str, ...], headers: Dict[str, str],
                                                                  status: int, kind: str) -> None:
    """A client that keeps connections alive (the SDK's) must not send its next
    request on one the fixture is about to close: `Connection: close` tells it."""
    with serving(*switches) as served, socket.create_connection(("127.0.0.1", port_of(served)), timeout=30) as wire:
        wire.sendall(request_bytes(TOOLS_LIST, headers))
        answer = until_closed(wire)  # returns only because the fixture closed it
    got, fields = head_of(answer)
    assert (got, fields["content-type"]) == (status, kind)
    assert fields.get("connection") == "close", fields


def test_an_accepted_notification_keeps_the_connection_open_for_the_next_request(url: str) -> None:
    with socket.create_connection(("127.0.0.1", port_of(url)), timeout=30) as wire:
        wire.sendall(request_bytes({"jsonrpc": "2.0", "method": "notifications/ping"}, CURRENT))
        accepted = b""
        while b"\r\n\r\n" not in accepted:
            accepted += wire.recv(65536)
        assert head_of(accepted)[0] == 202 and "connection" not in head_of(accepted)[1]
        wire.sendall(request_bytes(TOOLS_LIST, {**CURRENT, "Mcp-Method": "tools/list"}))  # the same connection
        status, fields = head_of(until_closed(wire))
    assert status == 200 and fields.get("connection") == "close"


def test_a_read_names_its_uri_in_mcp_name_and_its_logs_come_before_the_reply_on_a_stream(url: str) -> None:
    meta = {**META, "io.modelcontextprotocol/logLevel": "debug"}
    read = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"_meta": meta, "uri": "note://n-2"}}
    headers = {**CURRENT, "Mcp-Method": "resources/read"}
    status, reply = post(url, read, headers)
    assert status == 400 and "Mcp-Name" in reply["error"]["message"]
    with socket.create_connection(("127.0.0.1", port_of(url)), timeout=30) as wire:
        wire.sendall(request_bytes(read, {**headers, "Mcp-Name": "note://n-2"}))
        answer = until_closed(wire)
    status, fields = head_of(answer)
    assert status == 200 and fields["content-type"] == "text/event-stream"
    events = [json.loads(x[6:]) for x in answer.split(b"\r\n\r\n", 1)[1].decode().splitlines() if x.startswith("data: ")]
    assert [e.get("method") or e["id"] for e in events] == ["notifications/message", 3]
    assert events[1]["result"]["contents"][0]["text"].startswith("# Timeouts")


def handshake(url: str) -> str:
    """Initialize a 2025-11-25 session on `url`; its Mcp-Session-Id."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Accept": "application/json, text/event-stream"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert json.loads(answer.read())["result"]["protocolVersion"] == "2025-11-25"
        return str(answer.headers["Mcp-Session-Id"])


def test_a_handshake_session_hears_of_its_subscribed_note_on_its_get_stream() -> None:
    with serving("--lifecycle-tools") as served:
        session = handshake(served)
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        assert post(served, {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                             "params": {"uri": "note://n-3"}}, headers) == (200, {"jsonrpc": "2.0", "id": 2, "result": {}})
        with socket.create_connection(("127.0.0.1", port_of(served)), timeout=30) as stream:
            stream.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                           f"Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n".encode())
            heard = b""
            while b"\r\n\r\n" not in heard:  # the stream's headers: it is open, so the change cannot come first
                chunk = stream.recv(65536)
                assert chunk, heard
                heard += chunk
            edit = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "edit_note", "arguments": {"id": "n-3", "body": "Changed."}}}
            status, _ = post(served, edit, headers)
            while b"notifications/resources/updated" not in heard:
                chunk = stream.recv(65536)  # bounded by the socket's timeout
                assert chunk, heard
                heard += chunk
    assert b'"uri":"note://n-3"' in heard and status == 200


def test_a_listen_stream_hears_only_what_it_asked_for() -> None:
    listen = {"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
              "params": {"_meta": META, "notifications": {"resourceSubscriptions": ["note://n-4"]}}}
    with serving("--lifecycle-tools") as served, \
            socket.create_connection(("127.0.0.1", port_of(served)), timeout=30) as stream:
        stream.sendall(request_bytes(listen, {**CURRENT, "Mcp-Method": "subscriptions/listen"}))
        heard = b""
        while b"acknowledged" not in heard:
            chunk = stream.recv(65536)
            assert chunk, heard
            heard += chunk
        for request_id, note in ((2, "n-1"), (3, "n-4")):  # only the second is watched
            edit = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                    "params": {"_meta": META, "name": "edit_note", "arguments": {"id": note, "body": "Changed."}}}
            assert post(served, edit, {**CURRENT, "Mcp-Method": "tools/call", "Mcp-Name": "edit_note"})[0] == 200
        while b"notifications/resources/updated" not in heard:
            chunk = stream.recv(65536)  # bounded by the socket's timeout
            assert chunk, heard
            heard += chunk
    assert b'"resourceSubscriptions":["note://n-4"]' in heard
    assert b"note://n-1" not in heard and b'"uri":"note://n-4"' in heard
    assert b'/subscriptionId":"L"' in heard.split(b"notifications/resources/updated")[1]
