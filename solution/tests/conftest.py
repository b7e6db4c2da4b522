from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from solution.host.config import HostServerSpec

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Fixture:
    """A fixture server spec with its own journal file."""

    def __init__(self, directory: Path, server: str, alias: str, *extra: str) -> None:
        self.journal_path = directory / f"{alias}.jsonl"
        self.spec = HostServerSpec(alias, sys.executable,
                                   (str(ROOT / "servers" / f"{server}.py"), "--journal",
                                    str(self.journal_path), *extra), {}, str(ROOT))

    def entries(self) -> List[Dict[str, Any]]:
        if not self.journal_path.exists():
            return []
        return [json.loads(x) for x in self.journal_path.read_text().splitlines()]

    def calls(self) -> List[Dict[str, Any]]:
        return [e["msg"]["params"] for e in self.entries()
                if e["kind"] == "in" and e.get("msg", {}).get("method") == "tools/call"]

    def methods(self) -> List[str]:
        return [e["msg"].get("method") for e in self.entries() if e["kind"] == "in" and "msg" in e]

    @property
    def pid(self) -> int:
        return int(next(e for e in self.entries() if e["kind"] == "start")["pid"])


@pytest.fixture
def fixture(tmp_path: Path) -> Any:
    def make(server: str, alias: str = "", *extra: str) -> Fixture:
        return Fixture(tmp_path, server, alias or server, *extra)
    return make


def alive(pid: int) -> bool:
    import os
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: "subprocess.Popen[bytes]", within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited at start"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)  # polling a port: nothing to wait on but the connection itself
    raise AssertionError(f"nothing listened on {port} within {within} s")


@pytest.fixture
def serve() -> Iterator[Any]:
    """Start fixtures over HTTP (`PORT` in the argv is the port); each is killed at the end."""
    started: List["subprocess.Popen[bytes]"] = []

    def start(*argv: str) -> str:
        port = free_port()
        process = subprocess.Popen([sys.executable, *[a.replace("PORT", str(port)) for a in argv]],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        wait_for_port(port, process)
        return f"http://127.0.0.1:{port}/mcp"
    yield start
    for process in started:
        process.kill()
        process.wait(30)
