"""A config's secrets never leave the client: not on the terminal, in --json, in
the audit log or in what the model is sent, however a server echoes them; a
header value that cannot be sent is refused with the config, by name only; a
key in a URL's path is not shown. Each test greps what came out for the secret."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from solution.agent import run_agent
from solution.host.aggregator import Aggregator
from solution.host.config import HostServerSpec
from solution.config import ServerSpec, config_of
from solution.remote.http_wire import Url
from solution.model import Message, ModelTurn, ToolCall
from solution.untrusted import HIDDEN
from solution.tests.conftest import ROOT
from solution.tests.conftest import free_port

TOKEN = "s3cret-0123456789abcdef"
SECRET = f"Bearer {TOKEN}"


class Echo(BaseHTTPRequestHandler):
    """A handshake-era server that repeats the Authorization header it was sent in every
    text it can: instructions, a tool's description, a result, an error. Under
    /refused/ it answers 401 with the header in the reason phrase."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.answer(405, None)

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        heard = self.headers.get("Authorization", "")
        if self.path.startswith("/refused/"):
            return self.answer(401, None, f"Unauthorized: {heard} is not valid")
        if "id" not in message:
            return self.answer(202, None)
        method, params = message.get("method"), message.get("params") or {}
        result: Dict[str, Any]
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "serverInfo": {"name": "echo"}, "capabilities": {"tools": {}},
                      "instructions": f"Welcome, holder of {heard}"}
        elif method == "tools/list":
            result = {"tools": [{"name": name, "description": f"Repeats {heard}", "inputSchema": {"type": "object"}}
                                for name in ("echo", "fail")]}
        elif params.get("name") == "fail":
            return self.answer(200, {"jsonrpc": "2.0", "id": message["id"],
                                     "error": {"code": -32000, "message": f"{heard} has expired"}})
        else:
            result = {"content": [{"type": "text", "text": f"you sent {heard}"}], "structuredContent": {"seen": heard}}
        self.answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    def answer(self, status: int, body: "Dict[str, Any] | None", reason: str = "") -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status, reason or None)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def echo() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def entries(base: str) -> Dict[str, Any]:
    return {alias: {"type": "http", "url": f"{base}{path}", "headers": {"Authorization": SECRET},
                    "protocolVersion": "2025-11-25", "timeout": 30}
            for alias, path in (("echo", "/mcp"), ("refused", "/refused/mcp"))}


class Recorder:
    """A model that calls both tools, then answers; it keeps everything it was sent."""

    name, api = "recorder", "anthropic"

    def __init__(self) -> None:
        self.seen: List[Any] = []

    async def next_turn(self, system: str, tools: List[Dict[str, Any]], messages: List[Message]) -> ModelTurn:
        self.seen.append([system, tools, [vars(m) for m in messages]])
        if len(messages) == 1:
            return ModelTurn(tool_calls=[ToolCall("1", "mcp__echo__echo", {}), ToolCall("2", "mcp__echo__fail", {})])
        return ModelTurn(text="done")


@pytest.mark.anyio
async def test_the_model_is_never_sent_a_header_value_however_the_server_echoes_it(echo: str) -> None:
    specs = [HostServerSpec(alias, "", url=e["url"], headers=e["headers"], protocol_version="2025-11-25", timeout=30)
             for alias, e in entries(echo).items()]
    model = Recorder()
    async with Aggregator(config_of(specs)) as tools:
        await tools.refresh()
        assert "refused" in tools.offline and "echo" in tools.connections  # one reachable, one not
        await run_agent("what do I have?", tools, model)
    sent = json.dumps(model.seen, default=str)
    assert TOKEN not in sent
    assert sent.count(HIDDEN) >= 5  # the prompt (instructions, offline reason), descriptions, result, error


def client(*args: str, cwd: Path) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "solution", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, "MOCK": "1", "PYTHONPATH": str(ROOT)})


def test_nothing_printed_or_logged_carries_a_header_value(echo: str, tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": entries(echo)}))
    audit = tmp_path / "audit.jsonl"
    runs = [client(*args, "--config", str(config), cwd=tmp_path) for args in (
        ["tools"], ["tools", "--json"],
        ["call", "mcp__echo__echo", "{}", "--yes", "--audit", str(audit)],
        ["call", "mcp__echo__echo", json.dumps({"note": SECRET}), "--yes", "--audit", str(audit), "--json"],
        ["call", "mcp__echo__fail", "{}", "--yes", "--audit", str(audit), "--json"])]
    assert [run.returncode for run in runs] == [0, 0, 0, 0, 1], [run.stderr for run in runs]
    out = "".join(run.stdout + run.stderr for run in runs) + audit.read_text()
    assert TOKEN not in out
    assert HIDDEN in runs[1].stdout and HIDDEN in runs[3].stdout  # the server did echo it
    assert HIDDEN in audit.read_text()  # the arguments the call was given


@pytest.mark.parametrize("value", [f"{SECRET} ", f"\t{SECRET}", f"{SECRET}\x7f", f"{SECRET}é", f"{SECRET}\x00"])
def test_a_header_value_that_cannot_be_sent_is_refused_with_the_config_by_name(tmp_path: Path, value: str) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"r": {"url": "http://127.0.0.1:9/mcp",
                                                       "headers": {"Authorization": value}}}}))
    for json_flag in ([], ["--json"]):
        run = client("tools", "--config", str(config), *json_flag, cwd=tmp_path)
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.count("\n") == 1 and "'Authorization'" in run.stderr and "not shown" in run.stderr
        assert TOKEN not in run.stderr


@pytest.mark.anyio
async def test_a_spec_made_in_code_with_a_value_that_cannot_be_sent_names_the_header_only(echo: str) -> None:
    spec = HostServerSpec("coded", "", url=f"{echo}/mcp", headers={"Authorization": f"{SECRET} "}, timeout=30)
    async with Aggregator(config_of([spec])) as tools:
        await tools.refresh()
        why = tools.offline["coded"]  # as the library holds it, before anything is shown
    assert "header Authorization starts or ends with a space" in why and TOKEN not in why


@pytest.mark.parametrize("url, shown", [
    ("https://mcp.example.com/v1/sk4f9c2a7e1b3d5f6a8c/mcp", "https://mcp.example.com/v1/[hidden]/mcp"),
    ("https://mcp.example.com/123e4567-e89b-12d3-a456-426614174000/sse", "https://mcp.example.com/[hidden]/sse"),
    ("https://mcp.example.com/token/abc/mcp", "https://mcp.example.com/token/[hidden]/mcp"),
    ("https://mcp.example.com/api_key/abc", "https://mcp.example.com/api_key/[hidden]"),
    ("https://mcp.example.com/servers/github-2024/mcp?key=x", "https://mcp.example.com/servers/github-2024/mcp"),
    ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"),
])
def test_a_key_in_a_urls_path_is_not_shown(url: str, shown: str) -> None:
    assert Url.parse(url).shown == shown


@pytest.mark.anyio
async def test_a_key_in_the_path_of_a_server_that_is_down_is_not_in_its_reason(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1/k9x8c7v6b5n4m3q2w1e0/mcp"
    async with Aggregator(config_of([HostServerSpec("gone", "", url=url)])) as tools:
        await tools.refresh()
        assert "cannot connect" in tools.offline["gone"] and "k9x8c7v6b5n4m3q2w1e0" not in tools.offline["gone"]
