"""A model API played on 127.0.0.1: answers from a script, records each request."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Callable, Dict, List, Optional, Tuple, Type, Union

Json = Dict[str, Any]
Reply = Tuple[int, Json, Dict[str, str]]
Script = Union[List[Reply], Callable[[Json], Reply]]


def ok(body: Json) -> Reply:
    return 200, body, {}


class FakeApi:
    def __init__(self, script: Script, *, stall: bool = False) -> None:
        self.script = script
        self.stall = stall
        self.requests: List[Tuple[str, Dict[str, str], Json]] = []
        self._release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                fake.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if fake.stall:
                    fake._release.wait(10)  # bounded: the test's client gives up long before
                    return
                status, answer, headers = fake.next_reply(body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def next_reply(self, body: Json) -> Reply:
        if callable(self.script):
            return self.script(body)
        if not self.script:
            return 500, {"error": {"message": "the fake ran out of replies"}}, {}
        return self.script.pop(0)

    def bodies(self) -> List[Json]:
        return [body for _, _, body in self.requests]

    def __enter__(self) -> "FakeApi":
        self._thread.start()
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)
