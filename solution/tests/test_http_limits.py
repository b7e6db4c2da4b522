"""What a server over HTTP can make the client start is bounded: its own requests
(3,000 pings on one answer), the client's re-lists (2,000 list changes) and the
connections both need. Judged by counts at a server written for it: connections
open at once, tools/list requests in flight at once."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Optional

import anyio
import pytest

from solution.host.aggregator import Aggregator
from solution.host.config import HostServerSpec
from solution.config import ServerSpec, config_of
from solution.remote.http_client import MAX_MESSAGE_CONNECTIONS
from solution.lifecycle.server_requests import ANSWERING, BUSY

pytestmark = pytest.mark.anyio
HOLD = 30.0  # the most the server holds a reply back; only a client that never lets go waits it out
TOOL = {"name": "flood", "inputSchema": {"type": "object"}}
LATE_TOOL = {"name": "late", "inputSchema": {"type": "object"}}


class Flood:
    """A handshake-era server (no session) whose answer to `flood` is an event stream
    of what `events` makes, then the reply; it counts what the client opens."""

    def __init__(self, events: Callable[[], List[Dict[str, Any]]]) -> None:
        self.events = events
        self.lock = threading.Lock()
        self.open = self.peak = 0  # connections
        self.listing = self.listing_peak = self.lists = 0  # tools/list requests
        self.answers: List[Dict[str, Any]] = []  # the client's replies to the server's requests
        self.flooded = threading.Event()  # the whole stream, reply included, has been written
        self.tools = [TOOL]
        self.on_list: Optional[Callable[[Any, Dict[str, Any]], bool]] = None  # (handler, request): True if it answered

    def count(self, name: str, step: int) -> None:
        with self.lock:
            setattr(self, name, getattr(self, name) + step)
            peak = f"{name}_peak" if name == "listing" else "peak"
            setattr(self, peak, max(getattr(self, peak), getattr(self, name)))

    def serve(self) -> Iterator[str]:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler(self))
        httpd.daemon_threads = True
        httpd.request_queue_size = 4096  # a refused connection would hide how many were tried
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
        finally:
            self.flooded.set()
            httpd.shutdown()
            httpd.server_close()


def handler(server: Flood) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            server.count("open", 1)  # counted from here to its answer: inside the client's own span
            super().setup()

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.reply(405, b"")
            server.count("open", -1)

        def do_POST(self) -> None:
            try:
                self.answer()
            finally:
                server.count("open", -1)

        def answer(self) -> None:
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            method = message.get("method")
            if "id" not in message or method is None:  # a notification, or an answer to our ping
                if method is None:
                    with server.lock:
                        server.answers.append(message)
                return self.reply(202, b"")
            if method == "initialize":
                return self.json(message, {"protocolVersion": "2025-11-25", "serverInfo": {"name": "flood"},
                                           "capabilities": {"tools": {"listChanged": True}}})
            if method == "tools/list":
                server.count("listing", 1)
                server.count("lists", 1)
                try:
                    if server.on_list is None or not server.on_list(self, message):
                        self.json(message, {"tools": list(server.tools)})
                finally:
                    server.count("listing", -1)
                return
            self.stream([*server.events(), {"jsonrpc": "2.0", "id": message["id"],
                                            "result": {"content": [{"type": "text", "text": "done"}]}}])
            server.flooded.set()

        def json(self, request: Dict[str, Any], result: Dict[str, Any]) -> None:
            self.reply(200, json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode(),
                       "application/json")

        def stream(self, messages: List[Dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b"".join(b"event: message\ndata: " + json.dumps(m).encode() + b"\n\n" for m in messages))
            self.wfile.flush()
            self.close_connection = True

        def reply(self, status: int, body: bytes, kind: str = "") -> None:
            self.close_connection = True  # one exchange a connection, as the client has them
            self.send_response(status)
            if kind:
                self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def connected(url: str) -> Aggregator:
    return Aggregator(config_of([HostServerSpec("flood", "", url=url, protocol_version="2025-11-25")]),
                      request_timeout=HOLD)


async def test_3000_pings_on_one_answer_open_a_few_connections_and_each_answer_is_a_result_or_busy() -> None:
    server = Flood(lambda: [{"jsonrpc": "2.0", "id": f"ping-{n}", "method": "ping"} for n in range(3000)])
    for url in server.serve():
        async with connected(url) as tools:
            await tools.refresh()
            result = await tools.call("mcp__flood__flood", {})
            assert not result.get("isError"), result
        # The call's stream and the answers' connections (the handshake's came before).
        assert server.peak <= 1 + MAX_MESSAGE_CONNECTIONS, f"{server.peak} connections open at once"
        results = [a for a in server.answers if a.get("result") == {}]
        refused = [a for a in server.answers if a.get("error", {}).get("code") == BUSY]
        assert len(results) >= ANSWERING and len(results) + len(refused) == len(server.answers)


async def test_2000_list_changes_run_one_relist_at_a_time_and_one_more_after() -> None:
    server = Flood(lambda: [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}] * 2000)
    for url in server.serve():
        async with connected(url) as tools:
            await tools.refresh()
            server.on_list = lambda handler, request: not server.flooded.wait(HOLD)  # held until the flood is out
            start = tools.version
            await tools.call("mcp__flood__flood", {})
            # The re-list held back while the changes came, then the one they were all owed.
            assert await tools.wait_for_change(start + 1, HOLD)
        assert server.listing_peak == 1, f"{server.listing_peak} re-lists at once"


async def test_a_change_announced_while_a_relist_runs_leads_to_another_relist() -> None:
    server = Flood(lambda: [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}])

    def changed_while_listing(handler: Any, request: Dict[str, Any]) -> bool:
        """The first re-list gets the old list, and on its stream, before it, a change
        (the list has grown since): only a re-list after this one can see it."""
        if server.tools != [TOOL]:
            return False
        old, server.tools = [TOOL], [TOOL, LATE_TOOL]
        handler.stream([{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
                        {"jsonrpc": "2.0", "id": request["id"], "result": {"tools": old}}])
        return True

    for url in server.serve():
        async with connected(url) as tools:
            await tools.refresh()
            server.on_list = changed_while_listing
            await tools.call("mcp__flood__flood", {})
            with anyio.fail_after(HOLD):
                while tools.find("flood", "late") is None:
                    await tools.wait_for_change(tools.version, HOLD)
