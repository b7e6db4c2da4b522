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
- Both on one URL, as the SDK's servers do: a current-era fixture (the default)
  takes an `initialize` without a current `MCP-Protocol-Version` as the start of
  a 2025-11-25 session, with a `LegacyFront` of its own (no tasks: the board
  speaks the fixture's era); `--era legacy` speaks only the handshake.
- 2025-11-25: `initialize` mints `Mcp-Session-Id`; later requests must carry
  it (400 without, 404 for an unknown one); DELETE ends it. A GET opens the
  session's stream for messages outside any request (list changes), journalled
  as `listen-opened` and `listen-closed`; it ends with its session (or when the
  client goes), and a GET for a session that has ended is 404 (`listen-refused`).
  A GET with `Last-Event-ID` resumes a stream (below).

Each answer to a POST, and each GET stream, ends its connection and says so
(`Connection: close`), so a client that keeps connections alive never sends
its next request on one that is closing; a 202 and a DELETE's 200 leave the
connection open for the next request.

Two switches make the answers harder to read, as real servers' are (E9):
`--sse` answers everything as an event stream written the way the format
allows and few servers bother to: CRLF line ends, a comment inside an event,
a message's JSON cut over two `data:` lines and two writes, unknown fields
(one sorting before every known name, one after), an id on every event, a
priming event with an unusable `retry` first, and before a call's reply an
event of another type (`decoy`) whose data looks like that reply.

Before any of that, a request must be what a local HTTP client sends: from
this machine (Origin and Host name a local host exactly, against DNS
rebinding), with a Content-Length as HTTP writes it; header values that may
be base64-wrapped (`=?base64?...?=`) are compared decoded. The JSON-or-stream
writer is in sse.py; this module holds the request checks, both eras' rules
and the handler, which share the sessions and held replies.
`--sse-break TOOL` (handshake era) answers a call of TOOL with only a
priming event (an id, `retry: 1500`) and ends the stream; the reply waits for
a GET whose `Last-Event-ID` names that event.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Set
from urllib.parse import urlsplit

from servers.announce import for_listener, for_session
from servers.legacy import HANDSHAKE_VERSIONS, LegacyFront
from servers.oauth_guard import guarded
from servers.rpc import Json, RpcError, error_reply, parse_request
from servers.sse import Held, Sink
from servers.stdio import Front, StdioShell

HEADER_MISMATCH = -32020
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # what Mcp-Name carries
RESUME_RETRY_MS = 1500  # longer than a client's usual default, so one that ignores `retry` shows
MAX_BODY = 4 * 1024 * 1024  # the largest body a POST may have (413 beyond)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


# -- what a request must be before its body is read as MCP ------------------------------

def host_is_local(authority: str) -> bool:
    """`authority` (host[:port], as in Host) names this machine: the host is compared
    whole, so `localhost.evil.example` or `localhost@evil.example` is not local."""
    try:
        return urlsplit("//" + authority).hostname in LOCAL_HOSTS
    except ValueError:  # a bracket left open, say
        return False


def origin_is_local(origin: str) -> bool:
    """An Origin of a page on this machine: http(s), a local host, nothing else."""
    scheme, _, authority = origin.partition("://")
    return scheme in ("http", "https") and "/" not in authority and host_is_local(authority)


def body_length(value: Optional[str]) -> Optional[int]:
    """A Content-Length as HTTP writes it (digits only); None for anything else,
    which int() would take (-1, +5, ' 5') or refuse with a traceback."""
    if value is None:
        return 0
    return int(value) if value.isascii() and value.isdigit() else None


def decoded(value: str) -> str:
    """A header value as the body says it: one wrapped as `=?base64?...?=` unwrapped."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2]).decode("utf-8")
        except ValueError:
            return "\0"  # never equal to a body value
    return value


# -- the shell and its request handler ----------------------------------------------------

class HttpShell(StdioShell):
    """The stdio shell with `write` pointed at the current request's response."""

    def __init__(self, server: Any, options: Any) -> None:
        super().__init__(server, options)
        self._core = server  # a current-era fixture's Server, which its handshake sessions' fronts wrap
        self._local = threading.local()
        self.sessions: Set[str] = set()
        self._streams: Set[Sink] = set()  # listen streams (2026-07-28)
        self._changed = threading.Condition()
        self.held: Dict[str, Held] = {}  # the id of a broken stream's last event -> what it still owes
        self._events = 0
        # A current-era fixture's handshake sessions, each with a front of its own (its
        # `initialize` and what it declared); with --era legacy the one front serves all.
        self.fronts: Dict[str, LegacyFront] = {}

    def era_of(self, headers: Any, message: Optional[Json]) -> str:
        """The era a request speaks. A current-era fixture answers both on one URL, as
        the SDK's servers do: an `initialize` without a current version header, and
        everything in the session it starts, is the handshake's."""
        if self.options.era == "legacy" or headers.get("Mcp-Session-Id") is not None:
            return "legacy"
        handshake = message is not None and message.get("method") == "initialize"
        version = headers.get("MCP-Protocol-Version")
        return "legacy" if handshake and (version is None or version in HANDSHAKE_VERSIONS) else "current"

    def start_session(self) -> str:
        session = secrets.token_hex(16)
        self.sessions.add(session)
        if self.options.era == "current":
            self.fronts[session] = LegacyFront(self._core)
            self.fronts[session].session = session  # named in what its journal entries record
        self.journal.record("session-started", session=session)
        return session

    def front(self) -> Front:
        session: Optional[str] = getattr(self._local, "session", None)
        return self.fronts.get(session or "", self.server)

    def event_id(self) -> str:
        with self._write_lock:
            self._events += 1
            return f"ev-{self._events}"

    def serve(self) -> int:
        return run_server(self, self.options.http)

    def write(self, message: Json) -> None:
        sink: Optional[Sink | Held] = getattr(self._local, "sink", None)
        self.journal.record("out", msg=message)
        if sink is not None:
            sink.send(message)
            return
        for stream in list(self._streams):  # a list change, from another thread
            try:
                stream.send(message)
            except OSError:
                self._streams.discard(stream)

    def announce(self, change: str, uri: Optional[str]) -> None:
        """Straight to the streams, not through `write`: the change may happen inside
        some other request, whose own response must not carry it."""
        for stream in list(self._streams):
            if stream.session is None:  # a listen stream: what it asked for, naming its subscription
                told = for_listener(change, uri, stream.wants, stream.request_id)
            else:  # a GET stream: the session's, unsolicited
                front = self.fronts.get(stream.session, self.server)
                told = for_session(change, uri, getattr(front, "subscriptions", set()))
            if told is None:
                continue
            self.journal.record("out", msg=told)
            try:
                stream.send(told)
            except OSError:
                self._streams.discard(stream)

    def hold(self, sink: Sink) -> None:
        """Keep a stream open until the client goes (a write then fails) or the
        server ends it (it leaves `_streams`)."""
        self._streams.add(sink)
        while sink in self._streams:
            with self._changed:
                self._changed.wait(1.0)
            try:
                sink.keep_alive()
            except OSError:
                self._streams.discard(sink)

    def end_session(self, session: str) -> None:
        """DELETE: the session and its streams end."""
        self.sessions.discard(session)
        self.fronts.pop(session, None)
        self.journal.record("session-ended", session=session)
        for stream in [s for s in self._streams if s.session == session]:
            self._streams.discard(stream)
        with self._changed:
            self._changed.notify_all()

    def refusal(self, status: int, message: str, code: int = HEADER_MISMATCH, request_id: Any = None) -> tuple[int, Json]:
        return status, error_reply(request_id, RpcError(code, message))

    def mirrored(self, params: Json) -> Dict[str, Optional[str]]:
        """`Mcp-Param-*` a call must carry, from the tool's top-level properties marked
        `x-mcp-header` (None: the header must be absent, the argument being absent or null)."""
        tool = next((t for t in getattr(self.server, "tools", []) if t.name == params.get("name")), None)
        properties = tool.input_schema.get("properties") if tool is not None else None
        given = params.get("arguments")
        arguments: Json = given if isinstance(given, dict) else {}
        wanted: Dict[str, Optional[str]] = {}
        for prop, sub in (properties or {}).items():
            mark = sub.get("x-mcp-header") if isinstance(sub, dict) else None
            if isinstance(mark, str):
                value = arguments.get(prop)
                wanted[f"Mcp-Param-{mark}"] = None if value is None else \
                    ("true" if value else "false") if isinstance(value, bool) else str(value)
        return wanted

    def check(self, handler: BaseHTTPRequestHandler, message: Json) -> Optional[tuple[int, Json]]:
        """Why this POST must be refused, as (HTTP status, JSON-RPC error), or None."""
        request_id = message.get("id")
        if self.era_of(handler.headers, message) == "legacy":
            session = handler.headers.get("Mcp-Session-Id")
            if message.get("method") == "initialize":
                return None
            if session is None:
                return self.refusal(400, "Bad Request: no Mcp-Session-Id header", -32000, request_id)
            if session not in self.sessions:  # ended, or from before a restart
                if self.options.unknown_session == 400:
                    return self.refusal(400, "Bad Request: No valid session ID provided", -32000, request_id)
                return self.refusal(404, "Session not found", -32001, request_id)
            if handler.headers.get("MCP-Protocol-Version") is None:  # required after initialize since 2025-06-18
                return self.refusal(400, "Bad Request: no MCP-Protocol-Version header", -32000, request_id)
            return None
        if "id" not in message:
            return None
        given = message.get("params")
        params: Json = given if isinstance(given, dict) else {}
        meta: Json = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
        expected = {"MCP-Protocol-Version": meta.get("io.modelcontextprotocol/protocolVersion"),
                    "Mcp-Method": message.get("method")}
        named = NAMED.get(str(message.get("method")))
        if named is not None:
            expected["Mcp-Name"] = params.get(named)
        if message.get("method") == "tools/call":
            expected.update(self.mirrored(params))
        for name, value in expected.items():
            got = handler.headers.get(name)
            if value is None and got is None and name.startswith("Mcp-Param-"):
                continue  # a mirrored parameter with no value: no header, rightly
            if got is None or decoded(got) != value:
                return self.refusal(400, f"Header mismatch: {name} is {got!r}, the body says {value!r}",
                                    request_id=request_id)
        return None


def handler_for(shell: HttpShell) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the journal is the record; stderr stays quiet

        def refuse(self, status: int, body: Optional[Json] = None) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            if status >= 400:  # whatever the client sent after this is not read: the connection ends
                self.send_header("Connection", "close")  # (and close_connection is set by it)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def local_origin(self) -> bool:
            """DNS rebinding: a page elsewhere that reaches 127.0.0.1 still names its own host."""
            origin = self.headers.get("Origin")
            return (origin is None or origin_is_local(origin)) and host_is_local(self.headers.get("Host") or "")

        def do_GET(self) -> None:
            if not self.local_origin():
                return self.refuse(403)
            last = self.headers.get("Last-Event-ID")
            legacy = shell.era_of(self.headers, None) == "legacy"
            if legacy and last is None:
                return self.session_stream(self.headers.get("Mcp-Session-Id"))
            if not legacy or not shell.options.sse_break or last is None:
                return self.refuse(405)  # the current era has no GET; resuming is for --sse-break
            shell.journal.record("resume", last_event_id=last, session=self.headers.get("Mcp-Session-Id"))
            held = shell.held.pop(last, None)
            if held is None or self.headers.get("Mcp-Session-Id") not in shell.sessions:
                return self.refuse(400, error_reply(None, RpcError(-32000, f"no stream to resume after {last!r}")))
            sink = Sink(self, held.request_id, [], shell)
            for message in held.messages:
                shell.journal.record("out", msg=message, resumed=True)
                sink.send(message)
            self.close_connection = True

        def do_DELETE(self) -> None:
            session = self.headers.get("Mcp-Session-Id")
            if session in shell.sessions:
                shell.end_session(session)
                self.refuse(200)
            else:
                self.refuse(404 if shell.era_of(self.headers, None) == "legacy" else 405)

        def do_POST(self) -> None:
            size = body_length(self.headers.get("Content-Length"))
            if size is None:
                return self.refuse(400)
            if size > MAX_BODY:
                return self.refuse(413)
            body = self.rfile.read(size)
            if not self.local_origin():
                return self.refuse(403)
            message = parse_request(body)
            if not isinstance(message, dict):
                shell.journal.record("in", raw=body.decode("utf-8", "replace")[:2000])
                return self.refuse(400, message.reply)
            shell.journal.record("in", msg=message)
            refused = shell.check(self, message)
            if refused is not None:
                shell.journal.record("out", msg=refused[1], status=refused[0])
                return self.refuse(*refused)
            if shell.answered(message):  # a reply to our question
                return self.refuse(202)
            if "id" not in message:  # a notification: the session's front may keep something of it (roots)
                shell._local.session = self.headers.get("Mcp-Session-Id")
                shell.front().handle_message(message)
                return self.refuse(202)
            extra: List[tuple[str, str]] = []
            era = shell.era_of(self.headers, message)
            session = self.headers.get("Mcp-Session-Id")
            if era == "legacy" and message.get("method") == "initialize":
                session = shell.start_session()
                extra.append(("Mcp-Session-Id", session))
            sink = Sink(self, message["id"], extra, shell)
            given = message.get("params")
            params: Json = given if isinstance(given, dict) else {}
            shell._local.session = session  # whose front answers (a handshake session's own)
            if era == "legacy" and message.get("method") == "tools/call" and \
                    params.get("name") in shell.options.sse_break:
                return self.break_stream(body, message, sink)
            shell._local.sink = sink
            try:
                if message.get("method") == "subscriptions/listen" and era == "current":
                    sink.wants = shell.honoured(message)
                    shell._streams.add(sink)  # before the acknowledgement: a change after it reaches this stream
                    shell.listen(message)
                    shell.hold(sink)
                    return
                shell.answer(body, message)
            except OSError:
                shell.journal.record("dropped", id=message.get("id"), reason="the client closed the stream")
            finally:
                shell._local.sink = None
            self.close_connection = True

        def session_stream(self, session: Optional[str]) -> None:
            """Handshake era: the session's stream for messages outside any request."""
            if session not in shell.sessions:
                shell.journal.record("listen-refused", session=session)
                return self.refuse(404 if session else 400)
            sink = Sink(self, None, [], shell)
            sink.session = session
            with sink.lock:  # registered before its headers go: once a client sees them, no change is missed
                shell._streams.add(sink)
                sink.open_stream()
            shell.journal.record("listen-opened", session=session)
            shell.hold(sink)
            ended = session not in shell.sessions
            shell.journal.record("listen-closed", session=session, by="the server" if ended else "the client")
            self.close_connection = True

        def break_stream(self, body: bytes, message: Json, sink: Sink) -> None:
            """Work out the reply, but end the stream after a priming event: the
            reply goes out only on the GET that resumes from that event."""
            held = Held(message["id"])
            shell._local.sink = held
            try:
                shell.answer(body, message)
            finally:
                shell._local.sink = None
            last = shell.event_id()
            shell.held[last] = held
            sink.noisy = False
            sink.open_stream()
            self.wfile.write(f"id: {last}\nretry: {RESUME_RETRY_MS}\naside: 7\nx-later: 3\ndata:\n\n".encode())
            self.wfile.flush()
            shell.journal.record("stream-closed", id=message["id"], last_event_id=last, retry_ms=RESUME_RETRY_MS)
            self.close_connection = True

    return Handler


def run_server(shell: HttpShell, port: int) -> int:
    """Serve until killed (a fixture over HTTP has no stdin to end it)."""
    shell.record_start()
    httpd = ThreadingHTTPServer(("127.0.0.1", port), guarded(handler_for(shell), shell))  # --auth: OAuth first
    httpd.daemon_threads = True
    url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
    shell.journal.record("listening", url=url)  # how a judge that asked for port 0 learns the port
    shell.log(f"ready, speaking MCP over HTTP at {url}")
    try:
        httpd.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    return 0
