"""The OAuth tests' fixtures: the notes fixture over HTTP behind its authorization server
(`--auth auto`, and the switches a test adds), a config naming it, what its journal says,
and stand-in servers whose answers a test scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from solution.tests.conftest import ROOT
from solution.remote.tokens import record_key

FOLLOW = {"MCP_LAB_SIGN_IN": "follow"}


class Guarded:
    """A notes fixture over HTTP behind `--auth auto`, and a config naming it."""

    def __init__(self, tmp: Path, *extra: str) -> None:
        self.tmp = tmp
        self.journal = tmp / "journal.jsonl"
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "servers" / "notes.py"), "--http", "0", "--auth", "auto",
             "--journal", str(self.journal), *extra], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        line = ""
        for line in self.process.stderr:  # bounded: the fixture prints "ready" or exits
            if "ready" in line:
                break
        self.url = line.split(" at ")[-1].strip()
        assert self.url.startswith("http://127.0.0.1:"), line
        self.tokens = tmp / "tokens.json"
        self.audit = tmp / "audit.jsonl"
        self.config = tmp / "servers.json"
        self.write_config({})

    def write_config(self, entry: Dict[str, Any]) -> None:
        self.config.write_text(json.dumps({"mcpServers": {"notes": {"url": self.url, **entry}}}))

    def run(self, *args: str, env: Dict[str, str] = FOLLOW) -> Tuple[int, str, str]:
        done = subprocess.run([sys.executable, "-m", "solution", *args, "--config", str(self.config),
                               "--tokens-file", str(self.tokens), "--audit", str(self.audit), "--timeout", "20"],
                              cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
        return done.returncode, done.stdout, done.stderr

    def record(self, alias: str = "notes", client_id: Optional[str] = None) -> Dict[str, Any]:
        return dict(json.loads(self.tokens.read_text())["servers"][record_key(alias, self.url, client_id)])

    def held(self, alias: str = "notes", client_id: Optional[str] = None) -> Dict[str, Any]:
        return dict(self.record(alias, client_id)["tokens"])

    def steps(self) -> List[str]:
        return [e["step"] for e in self.oauth()]

    def oauth(self) -> List[Dict[str, Any]]:
        """The authorization server's journal entries, in order, with its own clock (`t`)."""
        return [e for e in map(json.loads, self.journal.read_text().splitlines()) if e["kind"] == "oauth"]

    def grants(self, grant: str) -> List[Dict[str, Any]]:
        return [e for e in self.oauth() if e["step"] == "token" and e["grant"] == grant]

    def expire(self, alias: str = "notes") -> None:
        """The kept access token made long expired, as the client's clock sees it (the server's
        still takes it): the next run renews it before its first request."""
        document = json.loads(self.tokens.read_text())
        document["servers"][record_key(alias, self.url)]["tokens"]["expires_at"] = 1.0
        self.tokens.write_text(json.dumps(document))

    def secrets(self) -> List[str]:
        """Every token the file holds, whichever entry it is kept for."""
        records = json.loads(self.tokens.read_text())["servers"].values()
        return [record["tokens"][kind] for record in records if record.get("tokens")
                for kind in ("access_token", "refresh_token") if record["tokens"].get(kind)]

    def assert_never_shown(self, *texts: str) -> None:
        audit = self.audit.read_text() if self.audit.exists() else ""
        for secret in self.secrets():
            for text in (*texts, audit):
                assert secret not in text


@contextmanager
def started(tmp: Path, *extra: str) -> Iterator[Guarded]:
    server = Guarded(tmp, *extra)
    try:
        yield server
    finally:
        server.process.kill()
        server.process.wait(30)


def renewed_early(server: Guarded, ttl: float, forced: int = 0) -> List[float]:
    """How long after the grant before it each refresh came, by the authorization server's
    clock, where that was less than 70 % of the token's life: a busy machine can only make
    a refresh later, never earlier, so any is a renewal the client did not need. The first
    `forced` refreshes are left out: a test asked for them (Guarded.expire)."""
    grants = [e for e in server.oauth() if e["step"] == "token"]
    refreshes = [(a, b) for a, b in zip(grants, grants[1:]) if b["grant"] == "refresh_token"][forced:]
    return [round(b["t"] - a["t"], 3) for a, b in refreshes if b["t"] - a["t"] < 0.7 * ttl]


@pytest.fixture(params=["current", "legacy"])
def guarded(request: Any, tmp_path: Path) -> Iterator[Guarded]:
    server = Guarded(tmp_path, *(["--era", "legacy"] if request.param == "legacy" else []))
    try:
        yield server
    finally:
        server.process.kill()
        server.process.wait(30)


class Answering(BaseHTTPRequestHandler):
    """A stand-in server's answers: JSON, nothing logged."""

    def log_message(self, *args: Any) -> None:
        pass

    def reply(self, status: int, body: Dict[str, Any], *headers: Tuple[str, str]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in [("Content-Type", "application/json"), ("Content-Length", str(len(data))), *headers]:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class Hostile(Answering):
    """A remote server and its authorization server in one, whose metadata says what a test
    puts in `metadata` (with `{origin}` for its own address)."""

    metadata: Dict[str, Any] = {}

    def do_GET(self) -> None:
        origin = f"http://127.0.0.1:{self.server.server_address[1]}"  # type: ignore[index]
        if self.path == "/.well-known/oauth-protected-resource/mcp":
            return self.reply(200, {"resource": origin + "/mcp", "authorization_servers": [origin]})
        if self.path == "/.well-known/oauth-authorization-server":
            return self.reply(200, {k: v.replace("{origin}", origin) if isinstance(v, str) else v
                                    for k, v in self.metadata.items()})
        self.reply(404, {})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.reply(401, {}, ("WWW-Authenticate", "Bearer"))


@contextmanager
def hostile(metadata: Dict[str, Any]) -> Iterator[str]:
    """The URL of a Hostile server answering with `metadata`."""
    handler = type("Scripted", (Hostile,), {"metadata": metadata})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
    finally:
        httpd.shutdown()
        httpd.server_close()
