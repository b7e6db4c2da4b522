"""The I/O shell of the fixture servers: stdin/stdout framing and the switches
that act on the wire.

One line in, one line out, each request answered on its own thread so a slow
call never holds up a fast one (replies can arrive out of order, as they may
from any real server). Logging goes to stderr only; stdout carries nothing but
MCP messages. The process exits when stdin reaches end of file.

Every line in and out is journalled (journal.py). The switches are parsed in
switches.py and the server is started by launch.py, which picks this shell or
the HTTP one (over_http.py, built on this).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from argparse import Namespace
from typing import Any, Dict, List, Optional, Protocol, Set

from servers.announce import for_listener, for_session, honoured
from servers.core import Report, no_report
from servers.envelope import check_envelope
from servers.journal import Journal, forked_by
from servers.rpc import Json, RpcError, error_reply, parse_request


class Front(Protocol):
    """What the shell needs from a server: a name and answers to lines."""

    name: str

    def handle_line(self, line: bytes) -> Optional[Json]: ...

    def handle_message(self, message: Json, report: Report = no_report) -> Optional[Json]: ...


EOF_GRACE = 1.0  # seconds to finish requests already read when stdin closes
# A held reply goes out after this even if no other reply does: generous, so
# only a client that never sends a second request ever waits for it.
HOLD_LIMIT = 30.0


class StdioShell:
    def __init__(self, server: Front, options: Namespace) -> None:
        self.server = server
        self.options = options
        self.journal = Journal(options.journal, options.evidence)
        self._write_lock = threading.Lock()
        self._cancelled: Set[Any] = set()
        self._out = sys.stdout.buffer
        self._workers: List[threading.Thread] = []
        self._replies = threading.Condition()
        self._replies_written = 0  # replies (messages with an id) written so far
        self._listeners: Dict[Any, Json] = {}  # listen request id -> what its acknowledgement honoured
        self.core: Any = getattr(server, "server", server)  # the Server, behind a handshake-era front
        self._asked: Dict[int, List[Any]] = {}  # id of a request to the client -> [event, its reply]
        self._next_ask = 0
        self._closing = threading.Event()

    def front(self) -> Front:
        """Who answers the request in hand (over HTTP, a handshake session has its own)."""
        return self.server

    def log(self, text: str) -> None:
        sys.stderr.write(f"[{self.server.name}] {text}\n")
        sys.stderr.flush()

    def write(self, message: Json) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        with self._write_lock:
            if self.options.fail == "garbage" and "id" in message:
                self._out.write(b"this line is not JSON-RPC\n")
            self.journal.record("out", msg=message)
            if "id" in message:
                # Counted before the bytes leave: whatever the client sends
                # in answer to them is read after the count has moved, so a
                # hold that starts then never mistakes this reply for a new one.
                with self._replies:
                    self._replies_written += 1
            self._out.write(data)
            self._out.flush()
            if "id" in message:
                with self._replies:
                    self._replies.notify_all()

    def reporter(self, message: Optional[Json]) -> Report:
        """Progress for this request, if it asked for it with a progressToken."""
        params = message.get("params") if message else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is None:
            return no_report
        malformed = [{"progressToken": token, "progress": "half", "message": "not a number"},
                     {"progressToken": token, "message": "no progress at all"}] if self.options.bad_progress else []

        def report(progress: float, total: Optional[float], text: str) -> None:
            while malformed:  # first, the reports a client must shrug off
                self.write({"jsonrpc": "2.0", "method": "notifications/progress", "params": malformed.pop(0)})
            note: Json = {"progressToken": token, "progress": progress, "message": text}
            if total is not None:
                note["total"] = total
            self.write({"jsonrpc": "2.0", "method": "notifications/progress", "params": note})
        return report

    def listen(self, message: Json) -> None:
        """Open a `subscriptions/listen` stream: acknowledged now, answered never
        (until the client cancels it); list changes are announced on it."""
        request_id = message["id"]
        try:
            if self.options.era == "legacy":
                raise RpcError(-32601, "Method not found", "subscriptions/listen")
            check_envelope(message.get("params"))
        except RpcError as exc:
            self.write(error_reply(request_id, exc))
            return
        kept = self.honoured(message)
        if kept:
            self._listeners[request_id] = kept
        self.write({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                    "params": {"notifications": kept,
                               "_meta": {"io.modelcontextprotocol/subscriptionId": request_id}}})

    def honoured(self, message: Json) -> Json:
        params = message.get("params")
        return honoured(params.get("notifications") if isinstance(params, dict) else None,
                        getattr(self.core, "content", None))

    def tools_changed(self) -> None:
        """The server's tool list changed: tell whoever is listening."""
        self.announce("tools", None)

    def resources_changed(self, uri: Optional[str]) -> None:
        """A resource changed (or, None, the list did): tell its listeners and subscribers."""
        self.announce("resources", uri)

    def announce(self, change: str, uri: Optional[str]) -> None:
        for listener, wants in list(self._listeners.items()):
            told = for_listener(change, uri, wants, listener)
            if told is not None:
                self.write(told)
        if getattr(self.server, "initialized", False):  # the handshake era: unsolicited
            told = for_session(change, uri, getattr(self.server, "subscriptions", set()))
            if told is not None:
                self.write(told)

    def answer(self, line: bytes, message: Optional[Json], replies_before: int = 0) -> None:
        """Work out and send the reply to one line (runs on its own thread)."""
        delay = self.options.delay
        if message is not None and message.get("method") == "tools/call":
            params = message.get("params")
            if isinstance(params, dict):
                delay += self.options.latency.get(str(params.get("name")), 0.0)
        if delay > 0:
            time.sleep(delay)  # simulated work: this *is* the latency under test
        if message is not None and message.get("method") in self.options.bare_reply and "id" in message:
            self.write({"jsonrpc": "2.0", "id": message["id"]})  # neither result nor error
            return
        if message is not None and message.get("method") in self.options.empty_reply and "id" in message:
            self.write({"jsonrpc": "2.0", "id": message["id"], "result": {}})  # empty, and still a result
            return
        if message is not None and message.get("method") == "tools/call" and \
                (message.get("params") or {}).get("name") in self.options.hold:
            # Until a reply written after this request arrived (counted, not
            # signalled, so a reply that beats this thread here still counts).
            with self._replies:
                self._replies.wait_for(lambda: self._replies_written > replies_before, HOLD_LIMIT)
        front = self.front()
        reply = front.handle_line(line) if message is None else front.handle_message(message, self.reporter(message))
        if reply is None:
            return
        if message is not None and message.get("id") in self._cancelled:
            self.journal.record("dropped", id=message.get("id"), reason="cancelled by the client")
            return
        self.write(reply)

    def ask_client(self, method: str, params: Json) -> Optional[Json]:
        """Send a request to the client and wait for its result (None for an
        error reply, or when stdin closes first). Ids start at 0, as the
        TypeScript SDK's do: a client must match them like any other."""
        with self._write_lock:
            request_id = self._next_ask
            self._next_ask += 1
            self._asked[request_id] = [threading.Event(), None]
        self.write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        arrived, _ = self._asked[request_id]
        while not arrived.wait(0.2):
            if self._closing.is_set():
                return None
        reply = self._asked.pop(request_id)[1]
        result = reply.get("result") if isinstance(reply, dict) else None
        return result if isinstance(result, dict) else None

    def answered(self, message: Json) -> bool:
        """A reply from the client to one of our requests: hand it over."""
        waiting = self._asked.get(message.get("id"))  # type: ignore[arg-type]
        if "method" in message or waiting is None:
            return False
        waiting[1] = message
        waiting[0].set()
        return True

    def receive(self, line: bytes) -> None:
        parsed = parse_request(line)  # an unusable line is answered by handle_line, which parses it again
        message = parsed if isinstance(parsed, dict) else None
        if message is not None:
            self.journal.record("in", msg=message)
        else:
            self.journal.record("in", raw=line.decode("utf-8", "replace"))
        if message is not None and self.answered(message):
            return
        if message is not None and message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict):
                self._cancelled.add(params.get("requestId"))
                self._listeners.pop(params.get("requestId"), None)  # a listen stream ends quietly
            return
        if message is not None and message.get("method") == "subscriptions/listen" and "id" in message:
            if self.options.fail != "never-answer":
                self.listen(message)
            return
        if self.options.fail == "never-answer" or (message is not None and
                                                    message.get("method") in self.options.silent):
            return
        if self.options.fail == "exit-on-discover" and message is not None and \
                message.get("method") == "server/discover":
            # As Python SDK servers up to mcp 1.8.1 do: the request model rejects the method, and the process ends.
            self.log("1 validation error for ClientRequest: Input should be 'ping', 'initialize', ... "
                     "[type=literal_error, input_value='server/discover']")
            self.journal.record("exit", status=1)
            sys.stdout.flush()
            os._exit(1)
        if self.options.inline or (message is not None and message.get("method") == "initialize"):
            self.answer(line, message)  # in order: nothing may overtake the handshake
            return
        worker = threading.Thread(target=self.answer, args=(line, message, self._replies_written), daemon=True)
        self._workers.append(worker)
        worker.start()

    def record_start(self) -> None:
        self.journal.record("start", pid=os.getpid(), server=self.server.name, era=self.options.era,
                            fail=self.options.fail, argv=sys.argv[1:], forked=forked_by())

    def serve(self) -> int:
        self.record_start()
        if self.options.fail == "exit-at-start":
            self.log("failing on purpose (--fail exit-at-start): cannot open the ticket database")
            self.journal.record("exit", status=3)
            return 3
        era = "2025-11-25 (legacy handshake)" if self.options.era == "legacy" else "2026-07-28"
        self.log(f"ready, speaking MCP {era} over stdio (pid {os.getpid()})")
        stdin = sys.stdin.buffer
        while True:
            line = stdin.readline()
            if not line:
                break
            if line.strip():
                self.receive(line.rstrip(b"\r\n"))
            self._workers = [w for w in self._workers if w.is_alive()]
        self._closing.set()
        # Requests already read still get their answer (`server < file`
        # works), but a client that closed stdin never waits long for us.
        deadline = time.monotonic() + EOF_GRACE
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        self.journal.record("exit", status=0, reason="stdin closed")
        return 0
