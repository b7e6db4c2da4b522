"""The client over Streamable HTTP: the fixtures (`--http`) and the official SDK's
server in both eras, and a server that is down or answers something else.
The fixtures refuse a request whose headers do not match its body (400,
-32020), so a call that succeeds proves the headers were right."""

from __future__ import annotations

import json
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Optional

import anyio
import pytest

from solution.host.aggregator import Aggregator
from solution.host.config import HostServerSpec, host_options, parse_host_config
from solution.config import ServerSpec, config_of, parse_config
from solution.remote.http_client import header_value
from solution.errors import ConfigError
from solution.tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
SDK_SERVER = ROOT / "solution" / "tests" / "sdk_servers" / "http_server.py"
pytestmark = pytest.mark.anyio


def journal(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("era", ["current", "legacy"])
async def test_the_notes_fixture_over_http_lists_pages_and_calls(serve: Any, tmp_path: Path, era: str) -> None:
    path = tmp_path / "notes.jsonl"
    url = serve(str(ROOT / "servers" / "notes.py"), "--http", "PORT", "--era", era, "--journal", str(path))
    async with Aggregator(config_of([HostServerSpec("notes", "", url=url)])) as tools:
        await tools.refresh()
        assert tools.offline == {}
        assert {"search", "read_note", "add_note"} <= {e.original_name for e in tools.entries.values()}
        entry = tools.find("notes", "search")
        assert entry is not None
        result = await tools.call(entry.model_name, {"query": "paging"})
        assert not result.get("isError") and "n-1" in json.dumps(result)
    seen = journal(path)
    methods = {e["msg"].get("id"): e["msg"].get("method") for e in seen if e["kind"] == "in" and "msg" in e}
    refused = [methods.get(e["msg"].get("id")) for e in seen if e["kind"] == "out" and e.get("status", 200) >= 400]
    # Every header matched its body; a handshake-era server refuses only the probe (no session yet).
    assert refused == ([] if era == "current" else ["server/discover"])
    if era == "legacy":
        assert any(e["kind"] == "session-ended" for e in seen)  # DELETE at close


@pytest.mark.parametrize("mode", [[], ["--stateless", "--json"]])
@pytest.mark.parametrize("pin", [None, "2025-11-25"])
async def test_an_sdk_server_over_http_with_progress_and_iserror(serve: Any, mode: List[str],
                                                                 pin: Optional[str]) -> None:
    url = serve(str(SDK_SERVER), "PORT", *mode)
    async with Aggregator(config_of([HostServerSpec("sdk", "", url=url, protocol_version=pin)])) as tools:
        await tools.refresh()
        assert tools.offline == {}
        reports: List[float] = []
        counted = await tools.call(tools.find("sdk", "slow_count").model_name,  # type: ignore[union-attr]
                                   {"steps": 3}, on_progress=lambda p, total, text: reports.append(p))
        assert "counted to 3" in json.dumps(counted) and not counted.get("isError")
        if "--json" not in mode:
            assert reports == [1.0, 2.0, 3.0]  # progress travels on the request's SSE stream
        boom = await tools.call(tools.find("sdk", "boom").model_name, {})  # type: ignore[union-attr]
        assert boom.get("isError") is True


async def test_a_server_that_is_down_is_offline_with_a_reason() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    async with Aggregator(config_of([HostServerSpec("gone", "", url=url, headers={"Authorization": "Bearer s3cret"})])) as tools:
        await tools.refresh()
        assert "cannot connect" in tools.offline["gone"] and "127.0.0.1" in tools.offline["gone"]
        assert "s3cret" not in tools.offline["gone"]


class Html(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b"<html>login here</html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


async def test_a_server_that_answers_a_web_page_is_offline_saying_so() -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Html)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp?key=s3cret"
        async with Aggregator(config_of([HostServerSpec("web", "", url=url, timeout=10)])) as tools:
            await tools.refresh()
            assert "text/html" in tools.offline["web"] and "s3cret" not in tools.offline["web"]
    finally:
        httpd.shutdown()


def test_header_values_go_plain_or_in_the_base64_sentinel() -> None:
    assert header_value("get_weather") == "get_weather"
    assert header_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert header_value(" padded ") == "=?base64?IHBhZGRlZCA=?="
    assert header_value("=?base64?literal?=") == "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="


def test_a_remote_entry_in_the_config() -> None:
    text = json.dumps({"mcpServers": {"r": {"type": "http", "url": "https://example.com/mcp",
                                            "headers": {"Authorization": "Bearer ${TOKEN}"}}}})
    spec = host_options(parse_host_config(text, environ={"TOKEN": "t0ken"}).servers[0])
    assert spec.url == "https://example.com/mcp" and spec.headers == {"Authorization": "Bearer t0ken"}
    assert "t0ken" not in repr(spec)


@pytest.mark.parametrize("entry, said", [
    ({"url": "ftp://x/mcp"}, "http:// or https://"),
    ({"url": "https://user:pw@x/mcp"}, "credentials in 'headers'"),
    ({"url": "https://x/mcp", "command": "python"}, "not both"),
    ({"type": "sse", "url": "https://x/sse"}, "not supported"),
    ({"url": "https://x/mcp", "headers": {"Mcp-Session-Id": "1"}}, "set by the client itself"),
    ({"url": "https://x/mcp", "headers": {"X-Key": "line\nbreak-s3cret"}}, "the value is not shown"),
    ({"url": "https://x/mcp", "headers": {"X-Key": "Bearer s3cret "}}, "starts or ends with a space"),
    ({"command": "python", "headers": {"A": "b"}}, "for a remote server"),
    ({"url": "https://x/mcp", "headers": {"X-Key\n": "v"}}, "not a valid HTTP header name"),  # `$` allows it
])
def test_a_bad_remote_entry_is_one_clear_line(entry: Dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_host_config(json.dumps({"mcpServers": {"r": entry}}), environ={})
    assert said in str(raised.value) and "s3cret" not in str(raised.value)


MARKED = json.dumps({"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"}, "limit": {"type": "integer", "x-mcp-header": "Limit"},
    "exact": {"type": "boolean", "x-mcp-header": "Exact"}, "query": {"type": "string"}}})
BADLY_MARKED = json.dumps({"type": "object", "properties": {"score": {"type": "number", "x-mcp-header": "Score"}}})


async def test_marked_parameters_travel_as_headers_and_badly_marked_tools_are_left_out(serve: Any, tmp_path: Path) -> None:
    """The fixture refuses a call whose Mcp-Param-* headers do not match its arguments."""
    path = tmp_path / "notes.jsonl"
    url = serve(str(ROOT / "servers" / "notes.py"), "--http", "PORT", "--journal", str(path), "--page-size", "10",
                "--add-tool", f"by_region={MARKED}", "--add-tool", f"by_score={BADLY_MARKED}")
    async with Aggregator(config_of([HostServerSpec("notes", "", url=url)])) as tools:
        await tools.refresh()
        assert tools.find("notes", "by_score") is None
        assert any("by_score" in line and "not string, integer or boolean" in line for line in tools.dropped)
        entry = tools.find("notes", "by_region")
        assert entry is not None
        for arguments in ({"region": "Zürich", "limit": 3, "exact": False, "query": "q"}, {"query": "no marks"}):
            result = await tools.call(entry.model_name, arguments)
            assert not result.get("isError"), result
    refused = [e for e in journal(path) if e["kind"] == "out" and e.get("status", 200) >= 400]
    assert refused == []


@pytest.mark.parametrize("schema, problem", [
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
     "not reached by properties alone"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}, "not a valid header name"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A\n"}}}, "not a valid header name"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Id"},
                                       "b": {"type": "string", "x-mcp-header": "ID"}}}, "differ only in case"),
    ({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]},
     "not reached by properties alone"),
])
def test_marks_that_break_the_rules_are_named(schema: Dict[str, Any], problem: str) -> None:
    from solution.remote.param_headers import header_problem
    assert problem in (header_problem({"name": "t", "inputSchema": schema}) or "")


def test_nested_marks_and_values() -> None:
    from solution.remote.param_headers import mirrors, param_headers
    schema = {"type": "object", "properties": {"where": {"type": "object", "properties": {
        "zone": {"type": "string", "x-mcp-header": "Zone"}}}, "n": {"type": "integer", "x-mcp-header": "N"}}}
    marks = mirrors(schema)
    assert param_headers(marks, {"where": {"zone": "eu"}, "n": 7}) == {"Mcp-Param-Zone": "eu", "Mcp-Param-N": "7"}
    assert param_headers(marks, {"n": None}) == {}


@pytest.mark.parametrize("status", [404, 400], ids=["404 (the spec)", "400 (as server-everything answers)"])
async def test_a_session_the_server_ended_is_started_again_and_the_call_goes_through(serve: Any, tmp_path: Path,
                                                                                     status: int) -> None:
    path = tmp_path / "old.jsonl"
    url = serve(str(ROOT / "servers" / "notes.py"), "--http", "PORT", "--era", "legacy", "--journal", str(path),
                "--page-size", "10", "--unknown-session", str(status))
    async with Aggregator(config_of([HostServerSpec("old", "", url=url, protocol_version="2025-11-25")])) as tools:
        await tools.refresh()
        first = next(e["session"] for e in journal(path) if e["kind"] == "session-started")
        ended = urllib.request.Request(url, method="DELETE", headers={"Mcp-Session-Id": first})
        with urllib.request.urlopen(ended, timeout=30) as answer:  # the server forgets the session
            assert answer.status == 200
        result = await tools.call(tools.find("old", "search").model_name, {"query": "paging"})  # type: ignore[union-attr]
        assert not result.get("isError") and "n-1" in json.dumps(result)
    seen = journal(path)
    assert len([e for e in seen if e["kind"] == "session-started"]) == 2
    assert [e["status"] for e in seen if e["kind"] == "out" and e.get("status", 200) >= 400] == [status]


@pytest.mark.parametrize("status, body, rejected", [
    (404, b"", True),
    (400, b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}',
     True),
    (400, b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Invalid or expired session"},"id":1}', True),
    (400, b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: no MCP-Protocol-Version header"}}',
     False),
    (400, b"Bad Request: unknown session", True),  # said in plain text
    (400, b"", False),
    (500, b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Session not found"}}', False),
])
def test_a_session_is_taken_as_rejected_on_404_or_a_400_that_says_so(status: int, body: bytes,
                                                                     rejected: bool) -> None:
    from solution.remote.http_client import session_rejected
    assert session_rejected(status, body) is rejected


async def journalled(path: Path, kind: str, count: int = 1) -> List[Dict[str, Any]]:
    """The journal's entries of `kind` once there are `count` of them (bounded: 30 s)."""
    with anyio.fail_after(30):
        while len(found := [e for e in journal(path) if e["kind"] == kind]) < count:
            await anyio.sleep(0.02)  # the fixture writes its journal from its own process
    return found


async def test_a_renewed_session_takes_its_own_stream_and_closes_the_old_one(serve: Any, tmp_path: Path) -> None:
    """Handshake era: each session's GET stream belongs to it. After a 404 and a new
    session the old stream is not carried over, and after the client's DELETE no GET comes."""
    path = tmp_path / "old.jsonl"
    url = serve(str(ROOT / "servers" / "notes.py"), "--http", "PORT", "--era", "legacy", "--journal", str(path),
                "--page-size", "10")
    with anyio.fail_after(60):  # a stream nobody closes keeps the client from ever closing
        async with Aggregator(config_of([HostServerSpec("old", "", url=url)])) as tools:
            await tools.refresh()
            first = (await journalled(path, "listen-opened"))[0]["session"]
            ended = urllib.request.Request(url, method="DELETE", headers={"Mcp-Session-Id": first})
            with urllib.request.urlopen(ended, timeout=30) as answer:  # the server forgets the session
                assert answer.status == 200
            result = await tools.call(tools.find("old", "search").model_name, {"query": "paging"})  # type: ignore[union-attr]
            assert not result.get("isError"), result
            await journalled(path, "listen-opened", 2)
    seen = journal(path)
    sessions = [e["session"] for e in seen if e["kind"] == "session-started"]
    assert [e["session"] for e in seen if e["kind"] == "listen-opened"] == sessions  # one each, its own
    closed_by_client = max(i for i, e in enumerate(seen) if e["kind"] == "session-ended")
    assert seen[closed_by_client]["session"] == sessions[-1]
    after = [e for e in seen[closed_by_client:] if e["kind"] in ("listen-opened", "listen-refused")]
    assert after == [], f"GETs after the client ended its session: {after}"


@pytest.mark.parametrize("era", ["current", "legacy"])
async def test_a_tool_list_change_arrives_on_the_listen_stream_and_the_table_follows(serve: Any, era: str) -> None:
    url = serve(str(ROOT / "servers" / "tickets.py"), "--http", "PORT", "--era", era)
    async with Aggregator(config_of([HostServerSpec("tickets", "", url=url)])) as tools:
        await tools.refresh()
        assert tools.find("tickets", "plugin.weekly_report") is None
        version = tools.version
        await tools.call(tools.find("tickets", "install_plugin").model_name, {})  # type: ignore[union-attr]
        assert await tools.wait_for_change(version, 30.0)  # bounded: only a lost notification waits it out
        assert tools.find("tickets", "plugin.weekly_report") is not None


@pytest.mark.parametrize("era", ["current", "legacy"])
async def test_a_call_that_becomes_a_task_is_followed_to_its_result_over_http(serve: Any, tmp_path: Path,
                                                                              era: str) -> None:
    path = tmp_path / "tickets.jsonl"
    url = serve(str(ROOT / "servers" / "tickets.py"), "--http", "PORT", "--era", era, "--journal", str(path))
    async with Aggregator(config_of([HostServerSpec("tickets", "", url=url, prefer_tasks=True)])) as tools:
        await tools.refresh()
        result = await tools.call(tools.find("tickets", "export_tickets").model_name,  # type: ignore[union-attr]
                                  {"format": "csv"})
        assert not result.get("isError"), result
    methods = [e["msg"].get("method") for e in journal(path) if e["kind"] == "in" and "msg" in e]
    assert "tasks/get" in methods or "tasks/result" in methods  # followed as a task, not a plain call


async def test_one_fixture_url_answers_both_eras_side_by_side(serve: Any, tmp_path: Path) -> None:
    """As the SDK's servers do: an `initialize` without the version header starts a
    2025-11-25 session; requests with the current era's headers are answered as before."""
    path = tmp_path / "notes.jsonl"
    url = serve(str(ROOT / "servers" / "notes.py"), "--http", "PORT", "--journal", str(path))
    specs = [HostServerSpec("new", "", url=url), HostServerSpec("old", "", url=url, protocol_version="2025-11-25")]
    async with Aggregator(config_of(specs)) as tools:
        await tools.refresh()
        assert tools.offline == {}
        assert {a: c.info.era for a, c in tools.connections.items()} == {"new": "current", "old": "legacy"}
        for alias in ("new", "old"):
            entry = tools.find(alias, "search")
            assert entry is not None
            result = await tools.call(entry.model_name, {"query": "paging"})
            assert not result.get("isError") and "n-1" in json.dumps(result), result
    seen = journal(path)
    assert [e for e in seen if e["kind"] == "out" and e.get("status", 200) >= 400] == []
    assert len([e for e in seen if e["kind"] == "session-started"]) == 1  # the handshake's, and only it
    assert any(e["kind"] == "session-ended" for e in seen)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_in_either_mode_uses_the_default_fixture_over_http(serve: Any, mode: str) -> None:
    """MCP Inspector and the SDK in legacy mode speak only the handshake; the default
    (2026-07-28) fixture must take them too."""
    from mcp import Client
    url = serve(str(ROOT / "servers" / "notes.py"), "--http", "PORT")
    with anyio.fail_after(60):
        async with Client(url, mode=mode, read_timeout_seconds=10) as client:
            listed = await client.list_tools()
            result = await client.call_tool("search", {"query": "paging"})
    assert "search" in [tool.name for tool in listed.tools]
    assert not result.is_error and "n-1" in str(result.content)


def cut_short(framing: str) -> type:
    """A server killed mid-answer: the headers and part of the body, then the connection closes."""
    class Cut(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            part = b'{"jsonrpc": "2.0", "id": '
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if framing == "chunked":
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"%x\r\n" % 200 + part)  # a chunk of 200 bytes, cut
            else:
                self.send_header("Content-Length", "200")
                self.end_headers()
                self.wfile.write(part)
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass
    return Cut


@pytest.mark.parametrize("framing", ["chunked", "content-length"])
async def test_an_answer_cut_short_is_said_in_words(framing: str) -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), cut_short(framing))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
        async with Aggregator(config_of([HostServerSpec("cut", "", url=url, protocol_version="2025-11-25")])) as tools:
            await tools.refresh()
    finally:
        httpd.shutdown()
        httpd.server_close()
    why = tools.offline["cut"]
    assert "the server closed the connection before its answer was complete" in why, why
    assert "HTTP/1.1" not in why and "incomplete" not in why
