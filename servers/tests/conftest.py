from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from servers import notes, tickets
from servers.core import Server

ROOT = Path(__file__).resolve().parents[2]
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def request(request_id: Any, method: str, **params: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"_meta": META, **params}}


def line(message: Dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def run_server(name: str, lines: List[bytes], *args: str, timeout: float = 10.0,
               as_file: bool = False) -> "subprocess.CompletedProcess[bytes]":
    """Feed lines to a fixture server process, close stdin, collect everything."""
    command = [sys.executable, str(ROOT / "servers" / f"{name}.py")] if as_file \
        else [sys.executable, "-m", f"servers.{name}"]
    return subprocess.run([*command, *args], input=b"\n".join(lines) + b"\n", capture_output=True,
                          timeout=timeout, cwd=ROOT)


def replies(output: bytes) -> List[Dict[str, Any]]:
    return [json.loads(x) for x in output.splitlines() if x.startswith(b"{")]


def journal(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture
def notes_server() -> Server:
    return notes.build()


@pytest.fixture
def tickets_server() -> Server:
    return tickets.build()


def result(server: Server, message: Dict[str, Any]) -> Dict[str, Any]:
    reply: Optional[Dict[str, Any]] = server.handle_line(line(message))
    assert reply is not None and "result" in reply, reply
    return dict(reply["result"])


def error(server: Server, raw: bytes) -> Dict[str, Any]:
    reply = server.handle_line(raw)
    assert reply is not None and "error" in reply, reply
    return dict(reply)
