"""The fixtures over Streamable HTTP: `--http PORT` serves the same tools on
http://127.0.0.1:PORT/mcp (standard library only, loopback only).

The stdio shell does the work (delays, holds, progress, the server's own
questions, the journal); this shell only changes where a message goes. Each
POST is answered on its own thread: a reply alone goes back as JSON, a reply
with anything before it (progress, in the handshake era a question to the
client) as an SSE stream. What each era requires of a request is checked
and refused as the spec says, so a client's slips show in the journal:

- 2026-07-28: `MCP-Protocol-Version`, `Mcp-Method` and, for a call,
  `Mcp-Name` must match the body (400 and -32020 otherwise); no sessions;
  GET and DELETE are 405. `subscriptions/listen` holds its stream open.
- 2025-11-25: `initialize` mints `Mcp-Session-Id`; later requests must carry
  it (400 without, 404 for an unknown one); DELETE ends it; GET is 405.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from servers.core import error_reply
from servers.rpc import RpcError
from servers.stdio import StdioShell

TYPE_CHECKING = False  # typing for the type checker only (see servers/rpc.py)
if TYPE_CHECKING:
    from typing import Any, List, Optional, Set

    from servers.rpc import Json

HEADER_MISMATCH = -32020
MAX_BODY = 4 * 1024 * 1024
LOCAL_ORIGINS = ("http://127.0.0.1", "http://localhost", "https://127.0.0.1", "https://localhost",
                 "http://[::1]", "https://[::1]")
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def decoded(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2]).decode("utf-8")
        except ValueError:
            return "\0"  # never equal to a body value
    return value


class Sink:
    """Where one POST's messages go: JSON for a lone reply, else an SSE stream."""

    def __init__(self, handler: BaseHTTPRequestHandler, request_id: Any, headers: "List[tuple[str, str]]") -> None:
        self.handler = handler
        self.request_id = request_id
        self.headers = headers
        self.streaming = False

    def send(self, message: Json) -> None:
        data = json.dumps(message, separators=(",", ":")).encode()
        final = message.get("id") == self.request_id and "method" not in message
        if final and not self.streaming:
            self.handler.send_response(200)
            for name, value in [("Content-Type", "application/json"), *self.headers]:
                self.handler.send_header(name, value)
            self.handler.send_header("Content-Length", str(len(data)))
            self.handler.end_headers()
            self.handler.wfile.write(data)
            return
        if not self.streaming:
            self.streaming = True
            self.handler.send_response(200)
            for name, value in [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                                ("X-Accel-Buffering", "no"), *self.headers]:
                self.handler.send_header(name, value)
            self.handler.end_headers()
        self.handler.wfile.write(b"event: message\ndata: " + data + b"\n\n")
        self.handler.wfile.flush()


class HttpShell(StdioShell):
    """The stdio shell with `write` pointed at the current request's response."""

    def __init__(self, server: Any, options: Any) -> None:
        super().__init__(server, options)
        self._local = threading.local()
        self.sessions: Set[str] = set()
        self._streams: Set[Sink] = set()  # listen streams (2026-07-28)
        self._changed = threading.Condition()

    def serve(self) -> int:
        return run_server(self, self.options.http)

    def write(self, message: Json) -> None:
        sink: Optional[Sink] = getattr(self._local, "sink", None)
        self.journal.record("out", msg=message)
        if sink is not None:
            sink.send(message)
            return
        for stream in list(self._streams):  # a list change, from another thread
            try:
                stream.send(message)
            except OSError:
                self._streams.discard(stream)

    def tools_changed(self) -> None:
        for stream in list(self._streams):
            try:
                stream.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
            except OSError:
                self._streams.discard(stream)

    def refusal(self, status: int, message: str, code: int = HEADER_MISMATCH, request_id: Any = None) -> "tuple[int, Json]":
        return status, error_reply(request_id, RpcError(code, message))

    def check(self, handler: BaseHTTPRequestHandler, message: Json) -> "Optional[tuple[int, Json]]":
        """Why this POST must be refused, as (HTTP status, JSON-RPC error), or None."""
        request_id = message.get("id")
        if self.options.era == "legacy":
            session = handler.headers.get("Mcp-Session-Id")
            if message.get("method") == "initialize":
                return None
            if session is None:
                return self.refusal(400, "Bad Request: no Mcp-Session-Id header", -32000, request_id)
            if session not in self.sessions:
                return self.refusal(404, "Session not found", -32001, request_id)
            return None
        if "id" not in message:
            return None
        given = message.get("params")
        params: Json = given if isinstance(given, dict) else {}
        meta: Json = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
        expected = {"MCP-Protocol-Version": meta.get("io.modelcontextprotocol/protocolVersion"),
                    "Mcp-Method": message.get("method")}
        if message.get("method") == "tools/call":
            expected["Mcp-Name"] = params.get("name")
        for name, value in expected.items():
            got = handler.headers.get(name)
            if got is None or decoded(got) != value:
                return self.refusal(400, f"Header mismatch: {name} is {got!r}, the body says {value!r}",
                                    request_id=request_id)
        return None


def handler_for(shell: HttpShell) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the journal is the record; stderr stays quiet

        def refuse(self, status: int, body: "Optional[Json]" = None) -> None:
            if status >= 400:
                self.close_connection = True  # whatever the client sent after this is not read
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def local_origin(self) -> bool:
            """DNS rebinding: a page elsewhere that reaches 127.0.0.1 still names its own host."""
            origin = self.headers.get("Origin")
            host = self.headers.get("Host") or ""
            name = host.split("]")[0] + "]" if host.startswith("[") else host.rsplit(":", 1)[0]  # without the port
            return (origin is None or origin.startswith(LOCAL_ORIGINS)) and name in LOCAL_HOSTS

        def do_GET(self) -> None:
            self.refuse(405 if self.local_origin() else 403)

        def do_DELETE(self) -> None:
            session = self.headers.get("Mcp-Session-Id")
            if shell.options.era == "legacy" and session in shell.sessions:
                shell.sessions.discard(session)
                shell.journal.record("session-ended", session=session)
                self.refuse(200)
            else:
                self.refuse(405 if shell.options.era == "current" else 404)

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            if size > MAX_BODY:
                return self.refuse(413)
            body = self.rfile.read(size)
            if not self.local_origin():
                return self.refuse(403)
            try:
                message = json.loads(body)
            except ValueError:
                message = None
            if not isinstance(message, dict):
                shell.journal.record("in", raw=body.decode("utf-8", "replace")[:2000])
                return self.refuse(400, error_reply(None, RpcError(-32700, "Parse error")))
            shell.journal.record("in", msg=message)
            refused = shell.check(self, message)
            if refused is not None:
                shell.journal.record("out", msg=refused[1], status=refused[0])
                return self.refuse(*refused)
            if shell.answered(message) or "id" not in message:  # a reply to our question, or a notification
                return self.refuse(202)
            extra: List[tuple[str, str]] = []
            if shell.options.era == "legacy" and message.get("method") == "initialize":
                session = secrets.token_hex(16)
                shell.sessions.add(session)
                extra.append(("Mcp-Session-Id", session))
            sink = Sink(self, message["id"], extra)
            shell._local.sink = sink
            try:
                if message.get("method") == "subscriptions/listen" and shell.options.era == "current":
                    shell.listen(message)
                    shell._streams.add(sink)
                    while sink in shell._streams:  # open until the client goes (a write then fails)
                        with shell._changed:
                            shell._changed.wait(1.0)
                        try:
                            self.wfile.write(b": keep-alive\n\n")
                            self.wfile.flush()
                        except OSError:
                            shell._streams.discard(sink)
                    return
                shell.answer(body, message)
            except OSError:
                shell.journal.record("dropped", id=message.get("id"), reason="the client closed the stream")
            finally:
                shell._local.sink = None
            self.close_connection = True

    return Handler


def run_server(shell: HttpShell, port: int) -> int:
    """Serve until killed (a fixture over HTTP has no stdin to end it)."""
    shell.record_start()
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler_for(shell))
    httpd.daemon_threads = True
    shell.log(f"ready, speaking MCP over HTTP at http://127.0.0.1:{httpd.server_address[1]}/mcp")
    try:
        httpd.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    return 0
