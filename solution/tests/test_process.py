"""Starting a server: it dies with the client however the client dies, it is the
process the client holds (nothing stands between them), and a command that
cannot run fails the start with the reason, whichever way the death signal is
asked for (setpriv, or the fallback hook)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator, Optional

import anyio
import pytest

from solution.host import process
from solution.config import ServerSpec
from solution.errors import ServerGone
from solution.host.server_client import ServerClient
from solution.stdio_client import StdioClient
from solution.tests.conftest import ROOT

LINUX = sys.platform.startswith("linux")


@pytest.fixture(params=["setpriv", "hook"])
def way(request: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test twice: with setpriv in front, and with the fallback hook."""
    if request.param == "setpriv":
        if process._setpriv() is None:
            pytest.skip("no setpriv that knows --pdeathsig on this machine: only the hook can be tried")
    else:
        monkeypatch.setitem(process._SETPRIV, "path", None)
    yield str(request.param)


def running(pid: int) -> bool:
    """Alive and not a zombie (one left unreaped by a container's init is as good as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def ended_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not running(pid)


CLIENT = """
import sys, anyio
from solution.config import ServerSpec
from solution.host.server_client import ServerClient
async def main():
    async with anyio.create_task_group() as group:
        # A server deaf to its stdin closing: only the death signal can end it.
        client = ServerClient(ServerSpec("deaf", sys.executable, ("-c", "import time; time.sleep(120)")))
        await client.start(group)
        print(client.pid, flush=True)
        await anyio.sleep(120)
anyio.run(main)
"""


@pytest.mark.skipif(not LINUX, reason="the death signal is Linux's")
def test_a_server_dies_with_a_client_killed_without_warning(way: str) -> None:
    program = CLIENT if way == "setpriv" else (
        "from solution.host import process\nprocess._SETPRIV['path'] = None\n" + CLIENT)
    client = subprocess.Popen([sys.executable, "-c", program], cwd=ROOT, stdout=subprocess.PIPE)
    server: Optional[int] = None
    try:
        assert client.stdout is not None
        line = client.stdout.readline()  # the client prints as soon as the server runs; ends if it cannot
        server = int(line)
        assert running(server)
        # setpriv runs the server in its own place, a moment after the client has its pid.
        deadline, cmdline = time.monotonic() + 30, b""
        while (b"time.sleep" not in cmdline or b"setpriv" in cmdline) and time.monotonic() < deadline:
            cmdline = Path(f"/proc/{server}/cmdline").read_bytes()
            time.sleep(0.01)
        assert b"time.sleep" in cmdline and b"setpriv" not in cmdline
    finally:
        client.kill()  # SIGKILL: none of the client's code runs, no watchdog was started
        client.wait(30)
        assert client.stdout is not None
        client.stdout.close()
    try:
        assert server is not None and ended_within(server, 30), f"server {server} outlived its client ({way})"
    finally:
        if server is not None and running(server):
            os.kill(server, signal.SIGKILL)  # a failing run leaves nothing behind either


@pytest.mark.anyio
async def test_a_missing_command_fails_the_start_with_its_reason(way: str, tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\nexit 0\n")  # not executable: no x bit
    plain = tmp_path / "notes.txt"
    plain.write_text("echo a shell would run this\n")  # executable, but neither a script's #! nor a binary
    plain.chmod(0o755)
    cases = [(ServerSpec("ghost", "no-such-mcp-server-for-the-lab"), "command not found"),
             (ServerSpec("ghost", str(tmp_path / "missing.sh")), "command not found"),
             (ServerSpec("ghost", "./server.sh", (), {}, str(tmp_path)), "command is not executable"),
             (ServerSpec("ghost", str(tmp_path)), "command is not executable"),  # a directory
             (ServerSpec("ghost", str(plain)), "cannot start")]  # exec refuses it (setpriv would hand it to sh)
    for spec, said in cases:
        told = ""
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                try:
                    await ServerClient(spec).start(group)
                except ServerGone as exc:
                    told = str(exc)
        assert said in told, (spec.command, told)


@pytest.mark.anyio
async def test_a_command_is_found_on_the_servers_path_and_relative_to_its_cwd(way: str, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for place in (bin_dir / "lab-echo-server", tmp_path / "here.sh"):
        place.write_text("#!/bin/sh\nexit 0\n")
        place.chmod(0o755)
    specs = [ServerSpec("onpath", "lab-echo-server", (), {"PATH": str(bin_dir)}, str(tmp_path)),
             ServerSpec("relative", "./here.sh", (), {}, str(tmp_path))]
    for spec in specs:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                client = StdioClient(spec)
                await client.start(group)
                assert client._process is not None
                assert await client._process.wait() == 0  # the script itself ran, and ended as it does
                group.cancel_scope.cancel()
