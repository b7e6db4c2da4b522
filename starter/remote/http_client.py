"""One MCP server over Streamable HTTP, in either era, behind the stdio client's API.

Everything above the transport (the request table, timeouts, progress,
notifications, the server's own requests, exercise 1's reply handling) is
the stdio client's; this class replaces only how a message leaves and how
one arrives. Each message is its own POST (`http_wire.Exchange`), and every
JSON-RPC message in the answer, a JSON body or the events of an SSE stream,
is handed to `on_line`, exactly as a stdout line would be.

The eras differ in the transport (the spec's transports pages):

- 2026-07-28: no sessions. Each POST carries `MCP-Protocol-Version`,
  `Mcp-Method` and, for a call, `Mcp-Name` (Base64 in the sentinel form when
  it is not plain ASCII). Closing a request's response stream is its
  cancellation; no `notifications/cancelled` is sent.
- 2025-11-25: `initialize` may return `Mcp-Session-Id`, sent on every later
  request with the negotiated `MCP-Protocol-Version`. A request's SSE stream
  may carry the server's own requests (elicitation), answered by a POST. A
  stream that ends before the reply is resumed with a GET carrying
  `Last-Event-ID`, after the server's `retry` delay. A GET stream carries
  messages outside any request (list changes); it is its session's, closed
  with it and never reopened for the next. A 404 to a request in a session,
  or a 400 that says the session is unknown (`session_rejected`), means the
  server ended it or restarted: the handshake again, then the request again
  (once). Close sends DELETE.
- Both: parameters marked `x-mcp-header` go out again as `Mcp-Param-*`
  (`param_headers.py`). Every exchange goes through `oauth_flow.authorized`,
  which sends the access token when one is held and mends a 401 (or a 403 for
  scope) by renewing or signing in, then sends again.

Header values from the config are sent and never shown: messages name the
server's URL without its query or a key in its path, a value that cannot be
sent is refused naming only its header (`http_wire.value_problem`), nothing
here logs a header, and an echo of one anywhere is hidden (`redact.py`).
"""

from __future__ import annotations

import base64
import json
from typing import Dict, List, Optional, Tuple

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from ..config import ServerSpec
from ..discovery import PROTOCOL_VERSION
from ..errors import ClientError, McpError, ProtocolViolation, ServerGone
from ..host.server_client import ServerClient
from ..jsonrpc import Json, Pending, RequestId, encode
from ..sse import Event, EventStream, EventTooLarge
from ..stdio_client import CLOSE_GRACE, DEFAULT_TIMEOUT, MAX_LINE_BYTES
from ..untrusted import shown
from .http_wire import Exchange, HttpFailure, Response, Url
from .oauth import OAuthSettings
from .oauth_flow import authorized, authorizer_for
from .param_headers import Mirror, mirrors, param_headers

ACCEPT = "application/json, text/event-stream"
ERROR_BODY_BYTES = 64 * 1024  # of a non-2xx answer, read for a JSON-RPC error
DEFAULT_RETRY_MS = 1000  # before resuming a stream whose server named no `retry`
MAX_RESUMES = 5  # a stream that keeps ending without the reply is given up on
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
FEED_BYTES = 4096  # of an event stream's chunk, parsed at a time: the loop is let in between
# Connections open at once to one server (each exchange has its own); more wait for one to end.
# Apart, so that answers to a server's questions never wait behind the requests that await them.
MAX_REQUEST_CONNECTIONS = 16  # the client's requests with their streams (a listen stream holds one)
MAX_MESSAGE_CONNECTIONS = 4  # notifications, and answers to the server's requests


def session_rejected(status: int, body: bytes) -> bool:
    """Whether an answer says the server does not know our session (it ended, or the
    server restarted): 404, as the spec says, or a 400 whose error says so in words,
    as some servers answer (server-everything: "Bad Request: No valid session ID provided")."""
    if status == 404:
        return True
    if status != 400:
        return False
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    text = error.get("message") if isinstance(error, dict) else body.decode("utf-8", "replace")
    words = str(text).lower()
    return "session" in words and any(w in words for w in ("no valid", "invalid", "unknown", "not found",
                                                           "expired", "terminated"))


def header_value(text: str) -> str:
    """`text` as a header value: as it is when plain visible ASCII, else in the
    spec's Base64 sentinel form (also for text that looks like the sentinel)."""
    plain = text.isascii() and text.isprintable() and text == text.strip()
    if plain and not (text.startswith("=?base64?") and text.endswith("?=")):
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


async def parsed(events: EventStream, chunk: bytes) -> List[Event]:
    """The events `chunk` completes, parsed FEED_BYTES at a time with a checkpoint
    between: 64 KB of blank lines is 65,536 lines, and the stream that sends them must
    not hold up the client's other requests while they are read."""
    found: List[Event] = []
    for at in range(0, len(chunk), FEED_BYTES):
        found += events.feed(chunk[at:at + FEED_BYTES])
        await anyio.lowlevel.checkpoint()
    return found


class HttpClient(ServerClient):
    def __init__(self, spec: ServerSpec, *, request_timeout: float = DEFAULT_TIMEOUT,
                 close_grace: float = CLOSE_GRACE, oauth: Optional[OAuthSettings] = None) -> None:
        super().__init__(spec, request_timeout=request_timeout, close_grace=close_grace)
        assert self.options.url is not None
        self.url = Url.parse(self.options.url)
        # OAuth (oauth_flow.py): every exchange below goes through `authorized`, which sends
        # the token and, on a 401 or a 403 for scope, signs in again and resends. None: no OAuth.
        self.auth = authorizer_for(self.options, oauth)
        self.session_id: Optional[str] = None  # handshake era, when the server gave one
        self._initialize: Optional[Pending] = None  # handshake era: the initialize request, once sent
        self._streams: Dict[RequestId, anyio.CancelScope] = {}
        self._get_streams: Dict[Optional[str], anyio.CancelScope] = {}  # session -> its GET stream
        self._marks: Dict[str, List[Mirror]] = {}  # tool name -> its x-mcp-header marks, from tools/list
        self._renewing = anyio.Lock()
        self._listening: Dict[str, anyio.Event] = {}  # listen stream id -> set at its first message
        self._request_slots = anyio.Semaphore(MAX_REQUEST_CONNECTIONS)
        self._message_slots = anyio.Semaphore(MAX_MESSAGE_CONNECTIONS)

    @property
    def negotiated(self) -> Optional[str]:
        """The version initialize agreed on, read from its reply as soon as that has come:
        `notifications/initialized` goes out before the reply's exchange has ended."""
        result = self._initialize.result if self._initialize is not None else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        return version if isinstance(version, str) else None

    @property
    def pid(self) -> Optional[int]:
        return None

    def stderr_tail(self) -> str:
        return ""

    def where(self) -> str:
        return f"server '{self.alias}' at {self.url.shown}"

    async def start(self, task_group: TaskGroup) -> None:
        self._task_group = task_group
        self._reading = True  # replies are read by each request's own exchange

    # -- sending -----------------------------------------------------------------

    def _headers(self, message: Json, *, body: bool = True) -> List[Tuple[str, str]]:
        """What each request carries (`body=False`: a GET or DELETE, which send none)."""
        headers = [("Content-Type", "application/json")] if body else []
        headers.append(("Accept", ACCEPT))
        method = message.get("method")
        if self.era == "current":
            headers.append(("MCP-Protocol-Version", PROTOCOL_VERSION))
            if isinstance(method, str) and "id" in message:
                headers.append(("Mcp-Method", method))
                named = (message.get("params") or {}).get(NAMED.get(method, ""))
                if isinstance(named, str):
                    headers.append(("Mcp-Name", header_value(named)))
                arguments = (message.get("params") or {}).get("arguments")
                if method == "tools/call" and isinstance(named, str) and isinstance(arguments, dict):
                    mirrored = param_headers(self._marks.get(named, []), arguments)
                    headers += [(name, header_value(value)) for name, value in mirrored.items()]
        elif method != "initialize":
            if self.negotiated:
                headers.append(("MCP-Protocol-Version", self.negotiated))
            if self.session_id:
                headers.append(("Mcp-Session-Id", self.session_id))
        return headers + list(self.options.headers.items())

    async def _send(self, message: Json) -> None:
        if self._closed or self._task_group is None:
            raise ServerGone(f"{self.where()} is not connected")
        if "method" in message and "id" in message:  # a request: its answer is read in its own task
            self._task_group.start_soon(self._request_exchange, message)
            return
        # A notification, or our answer to the server's request: 202 and no body.
        with anyio.move_on_after(self.request_timeout):
            try:
                async with self._message_slots, \
                        authorized(self.auth, self.url, "POST", self._headers(message), encode(message)) as sent:
                    if sent.response.status >= 300:
                        raise ServerGone(f"{self.where()} refused a message with HTTP "
                                         f"{sent.response.status} {shown(sent.response.reason, 60)}")
            except HttpFailure as exc:
                raise ServerGone(f"{self.where()}: {exc}") from None
        if message.get("method") == "notifications/initialized":
            self._task_group.start_soon(self._listen_get, self.session_id)

    async def listen(self, notifications: Json) -> str:
        """Open a listen stream and wait (bounded) for its first message, the server's
        acknowledgement: over HTTP the stream is its own connection, and a change
        announced before the server has it would be lost. Over stdio one pipe orders it."""
        opened = anyio.Event()
        self._listening[self._next_listen_id()] = opened
        stream_id = await super().listen(notifications)
        with anyio.move_on_after(self.request_timeout):
            await opened.wait()
        return stream_id

    async def _cancel(self, request_id: "int | str", reason: str) -> None:
        scope = self._streams.get(request_id)
        if scope is not None:
            scope.cancel()  # closing the stream: the current era's cancellation
        if self.era == "legacy":
            await super()._cancel(request_id, reason)

    # -- receiving ---------------------------------------------------------------

    async def _request_exchange(self, message: Json) -> None:
        request_id = message["id"]
        slot = self._pending.get(request_id)
        if message.get("method") == "initialize":
            self._initialize = slot
        try:
            with anyio.CancelScope() as scope:
                self._streams[request_id] = scope
                for attempt in (1, 2):
                    async with self._request_slots:  # let go before a renewal: its initialize needs one
                        session = self.session_id
                        async with authorized(self.auth, self.url, "POST", self._headers(message),
                                              encode(message)) as ex:
                            if message.get("method") == "initialize" and ex.response.headers.get("mcp-session-id"):
                                self.session_id = ex.response.headers["mcp-session-id"]
                            # Our session refused (the server ended it, or restarted): once, a new one and again.
                            renewable = bool(session) and attempt == 1 and message.get("method") != "initialize"
                            if not (renewable and ex.response.status in (400, 404)):
                                await self._answer(ex, request_id)
                                break
                            body = await ex.read(ERROR_BODY_BYTES)
                            if not session_rejected(ex.response.status, body):
                                raise self._refusal(ex.response, body)
                    await self._renew_session(session)
                if slot is not None and not slot.done.is_set():
                    slot.reject(ProtocolViolation(f"{self.where()} ended its answer without a reply"))
        except HttpFailure as exc:
            if slot is not None:
                slot.reject(ServerGone(f"{self.where()}: {exc}"))
        except ClientError as exc:  # ServerGone, McpError, ProtocolViolation, a renewal's timeout
            if slot is not None:
                slot.reject(exc)
        except Exception as exc:  # whatever the server sent, it ends this request, never the client
            if slot is not None:
                slot.reject(ServerGone(f"{self.where()} sent an answer this client cannot handle "
                                       f"({type(exc).__name__}: {shown(str(exc), 200)})"))
        finally:
            self._streams.pop(request_id, None)

    async def _renew_session(self, stale: Optional[str]) -> None:
        """The handshake again, once for all the requests the ended session failed."""
        from ..discovery import handshake  # discovery is above the transport; only this needs it here

        async with self._renewing:
            if self.session_id != stale:
                return  # another request has already renewed it
            self._end_get_stream(stale)  # it belongs to the ended session: never carried over
            self.session_id, self._initialize = None, None
            await handshake(self)

    def _remember_marks(self, listed: Json) -> None:
        """Each listed tool's x-mcp-header marks, for its calls (a tool whose marks
        are unusable is left out of the table, so never called)."""
        for tool in listed.get("tools") or []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                try:
                    self._marks[tool["name"]] = mirrors(tool.get("inputSchema"))
                except ValueError:
                    self._marks.pop(tool["name"], None)

    async def _answer(self, ex: Exchange, request_id: RequestId) -> None:
        """Hand every message of one answer to `on_line`; resume a broken SSE stream."""
        response = ex.response
        if response.status >= 300:
            raise self._refusal(response, await ex.read(ERROR_BODY_BYTES))
        if response.content_type == "application/json":
            self._deliver(await ex.read(MAX_LINE_BYTES), request_id)
            return
        if response.content_type != "text/event-stream":
            raise ServerGone(f"{self.where()} answered with {shown(response.content_type or 'no type', 60)}, "
                             "not JSON or an event stream")
        events = EventStream()
        await self._read_events(ex, events, request_id)
        resumes = 0
        while self.era == "legacy" and self._waiting(request_id) and events.last_id is not None:
            resumes += 1
            if resumes > MAX_RESUMES:
                raise ServerGone(f"{self.where()} ended the stream {MAX_RESUMES} times without the reply")
            await anyio.sleep((events.retry_ms if events.retry_ms is not None else DEFAULT_RETRY_MS) / 1000)
            headers = self._headers({}, body=False) + [("Last-Event-ID", events.last_id)]
            async with authorized(self.auth, self.url, "GET", headers) as again:
                if again.response.status >= 300 or again.response.content_type != "text/event-stream":
                    raise self._refusal(again.response, b"")
                await self._read_events(again, events, request_id)

    async def _read_events(self, ex: Exchange, events: EventStream, request_id: Optional[RequestId]) -> None:
        try:
            async for chunk in ex.body():
                for event in await parsed(events, chunk):
                    if event.event == "message" and event.data.strip():
                        self._deliver(event.data.encode("utf-8"), request_id)
                        if isinstance(request_id, str) and request_id in self._listening:
                            self._listening[request_id].set()
                if request_id is not None and not self._waiting(request_id):
                    return  # the reply came: the stream has nothing more for us
        except EventTooLarge as exc:
            raise ServerGone(f"{self.where()} sent {exc}") from None

    def _deliver(self, data: bytes, request_id: Optional[RequestId]) -> None:
        """One message to `on_line`; a tools/list reply's header marks are kept at
        once, before the caller (woken by the reply) can send a call that needs them."""
        slot = self._pending.get(request_id)
        self.on_line(data)
        if slot is not None and slot.method == "tools/list" and slot.done.is_set() and slot.result is not None:
            self._remember_marks(slot.result)

    def _waiting(self, request_id: RequestId) -> bool:
        slot = self._pending.get(request_id)
        if slot is None:  # a listen stream: no slot, open until closed
            return isinstance(request_id, str) and request_id.startswith("listen-")
        return not slot.done.is_set()

    def _refusal(self, response: Response, body: bytes) -> Exception:
        """A non-2xx answer: the JSON-RPC error it carries, or the status itself."""
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            return McpError.from_reply(parsed["error"])
        return ServerGone(f"{self.where()} answered HTTP {response.status} {shown(response.reason, 60)}")

    async def _listen_get(self, session: Optional[str]) -> None:
        """Handshake era: the stream for messages outside any request, when offered. It is
        `session`'s: ended with it (a renewal, close), and never reopened for another."""
        with anyio.CancelScope() as scope:
            self._end_get_stream(session)  # one per session
            self._get_streams[session] = scope
            try:
                await self._follow_get_stream(session)
            finally:
                if self._get_streams.get(session) is scope:
                    del self._get_streams[session]

    async def _follow_get_stream(self, session: Optional[str]) -> None:
        """Read the GET stream, and open it again when the server ends it, while its session lasts."""
        events = EventStream()
        for _ in range(MAX_RESUMES):
            if self._closed or self.session_id != session:
                return  # its session has ended: nothing to reopen
            headers = self._headers({}, body=False)
            if events.last_id is not None:
                headers.append(("Last-Event-ID", events.last_id))
            try:
                async with authorized(self.auth, self.url, "GET", headers) as ex:
                    if ex.response.status >= 300 or ex.response.content_type != "text/event-stream":
                        return  # 405: the server offers none, which is allowed
                    await self._read_events(ex, events, None)
            except Exception:  # (HttpFailure, ServerGone, or bytes it cannot handle): no stream, as with 405
                return
            await anyio.sleep((events.retry_ms if events.retry_ms is not None else DEFAULT_RETRY_MS) / 1000)

    def _end_get_stream(self, session: Optional[str]) -> None:
        scope = self._get_streams.pop(session, None)
        if scope is not None:
            scope.cancel()

    # -- close -------------------------------------------------------------------

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            for scope in [*self._streams.values(), *self._get_streams.values()]:
                scope.cancel()
            if self.era == "legacy" and self.session_id:
                with anyio.move_on_after(self.close_grace):
                    try:
                        async with authorized(self.auth, self.url, "DELETE", self._headers({}, body=False),
                                              renew=False):
                            pass
                    except (HttpFailure, ClientError):
                        pass
            self._reading = False
            self._pending.fail_all(ServerGone(f"{self.where()} was closed"))
