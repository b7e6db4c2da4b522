"""Era detection in discovery, and the legacy era against the fixtures."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import anyio
import pytest

from solution.host.aggregator import Aggregator
from solution.config import ServerSpec, config_of
from solution.discovery import discover
from solution.errors import McpError, ProtocolViolation, RequestTimeout
from solution.stdio_client import StdioClient

MODERN = {"supportedVersions": ["2026-07-28"], "capabilities": {},
          "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "2"}}}
INIT_OK = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
           "serverInfo": {"name": "old", "version": "1"}, "instructions": "hello"}


class Scripted:
    """Answers each method from a script: a result, or an exception to raise."""

    def __init__(self, answers: Dict[str, Any]) -> None:
        self.answers = answers
        self.era = "current"
        self.log: List[str] = []

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                      timeout: Optional[float] = None) -> Dict[str, Any]:
        self.log.append(f"{method}@{self.era}")
        answer = self.answers[method]
        if isinstance(answer, Exception):
            raise answer
        return dict(answer)

    async def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        self.log.append(method)


@pytest.mark.anyio
async def test_a_discover_result_means_the_current_era() -> None:
    server = Scripted({"server/discover": MODERN})
    info = await discover(server)
    assert (info.era, info.name, info.protocol_version) == ("current", "m", "2026-07-28")
    assert server.log == ["server/discover@current"]


@pytest.mark.anyio
@pytest.mark.parametrize("refusal", [McpError(-32601, "Method not found"), McpError(-32600, "legacy only"),
                                     McpError(-32602, "not initialized"), McpError(0, "raw crash"),
                                     RequestTimeout("server/discover", 0.1)])
async def test_any_other_error_or_silence_means_legacy(refusal: Exception) -> None:
    server = Scripted({"server/discover": refusal, "initialize": INIT_OK})
    info = await discover(server)
    assert (info.era, info.name, info.instructions) == ("legacy", "old", "hello")
    assert server.log == ["server/discover@current", "initialize@legacy", "notifications/initialized"]
    assert server.era == "legacy"


@pytest.mark.anyio
async def test_32022_without_a_common_version_names_both_sides() -> None:
    server = Scripted({"server/discover": McpError(-32022, "Unsupported protocol version",
                                                   {"supported": ["2027-01-01"], "requested": "2026-07-28"})})
    with pytest.raises(ProtocolViolation, match=r"the server speaks \['2027-01-01'\]; this client speaks 2026-07-28"):
        await discover(server)
    assert server.log == ["server/discover@current"]  # no handshake attempted


@pytest.mark.anyio
async def test_32022_listing_a_handshake_version_falls_back() -> None:
    server = Scripted({"server/discover": McpError(-32022, "x", {"supported": ["2025-06-18"]}),
                       "initialize": dict(INIT_OK, protocolVersion="2025-06-18")})
    assert (await discover(server)).protocol_version == "2025-06-18"


@pytest.mark.anyio
async def test_a_silent_server_is_reported_as_silent_to_both_eras() -> None:
    server = Scripted({"server/discover": RequestTimeout("server/discover", 0.2),
                       "initialize": RequestTimeout("initialize", 0.2)})
    with pytest.raises(RequestTimeout, match="no reply to server/discover or initialize within 0.2 s"):
        await discover(server)


@pytest.mark.anyio
async def test_a_handshake_answer_in_an_unknown_version_is_refused() -> None:
    server = Scripted({"server/discover": McpError(-32601, "x"),
                       "initialize": dict(INIT_OK, protocolVersion="2099-01-01")})
    with pytest.raises(ProtocolViolation, match="'2099-01-01'"):
        await discover(server)


@pytest.mark.anyio
async def test_the_legacy_era_on_the_wire(fixture: Any) -> None:
    notes = fixture("notes", "", "--era", "legacy")
    async with Aggregator(config_of([notes.spec])) as tools:
        await tools.refresh()
        assert tools.connections["notes"].info.era == "legacy" and len(tools.entries) == 3
        result = await tools.call("mcp__notes__read_note", {"id": "n-1"})
        assert result["structuredContent"]["id"] == "n-1"
    assert notes.methods() == ["server/discover", "initialize", "notifications/initialized",
                               "tools/list", "tools/list", "tools/list", "tools/call"]
    sent = [e["msg"] for e in notes.entries() if e["kind"] == "in" and "msg" in e]
    assert all("_meta" not in (m.get("params") or {}) for m in sent[1:])


class Slow(Scripted):
    """A server that stays silent on server/discover until something else happens
    first (`until`), then answers as scripted: lateness by order, not by the clock."""

    def __init__(self, answers: Dict[str, Any], waits: str, until: str) -> None:
        super().__init__(answers)
        self.waits, self.until = waits, until
        self.seen = anyio.Event()

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                      timeout: Optional[float] = None) -> Dict[str, Any]:
        if method == self.until:
            self.seen.set()
        if method == self.waits:
            with anyio.fail_after(30):  # bounded: the other request comes after probe_timeout
                await self.seen.wait()
        return await super().request(method, params, timeout=timeout)


@pytest.mark.anyio
async def test_a_slow_current_server_is_never_mislabelled_by_the_handshake_beside_its_probe() -> None:
    # The probe is silent past probe_timeout; the handshake is tried and refused
    # (-32022: current only); the late discover result then wins.
    refusal = McpError(-32022, "only 2026-07-28", {"supported": ["2026-07-28"]})
    server = Slow({"server/discover": MODERN, "initialize": refusal}, "server/discover", "initialize")
    info = await discover(server, probe_timeout=0.01)
    assert (info.era, info.name) == ("current", "m") and server.era == "current"
    assert server.log[0] == "initialize@legacy"  # the probe had not answered when the handshake went out


@pytest.mark.anyio
async def test_a_legacy_server_deaf_to_unknown_methods_is_found_by_the_handshake() -> None:
    server = Slow({"server/discover": MODERN, "initialize": INIT_OK}, "server/discover", "never")
    info = await discover(server, probe_timeout=0.01)
    assert (info.era, info.name) == ("legacy", "old") and server.era == "legacy"
    assert server.log == ["initialize@legacy", "notifications/initialized"]


@pytest.mark.anyio
async def test_silence_on_both_questions_names_both_and_the_time() -> None:
    silent = RequestTimeout("server/discover", 0.5)
    server = Scripted({"server/discover": silent, "initialize": RequestTimeout("initialize", 0.5)})
    with pytest.raises(RequestTimeout, match=r"no reply to server/discover or initialize within 0.5 s"):
        await discover(server, probe_timeout=0.01)


@pytest.mark.anyio
async def test_an_sdk_server_behind_a_slow_start_is_discovered_as_current(tmp_path: Any) -> None:
    # The process starts reading only after the probe limit has passed: the
    # handshake is tried beside the probe, refused, and the probe's answer wins.
    server = Path(__file__).parent / "sdk_servers" / "ll_server.py"
    spec = ServerSpec("late", "sh", ("-c", 'sleep 1; exec "$0" "$1"', sys.executable, str(server)))
    async with anyio.create_task_group() as group:
        client = StdioClient(spec, request_timeout=30.0)
        await client.start(group)
        try:
            info = await discover(client, probe_timeout=0.2)
        finally:
            await client.aclose()
    assert info.era == "current" and client.era == "current"


@pytest.mark.anyio
@pytest.mark.parametrize("lenient", [{}, {"supportedVersions": ["2099-01-01"]}, {"supportedVersions": None}])
async def test_a_discover_result_without_our_version_leads_to_the_handshake(lenient: Dict[str, Any]) -> None:
    """A handshake-era server that answers any unknown method with {} (as some do)."""
    server = Scripted({"server/discover": lenient, "initialize": INIT_OK})
    info = await discover(server)
    assert (info.era, info.name) == ("legacy", "old")
    pinned = Scripted({"server/discover": lenient})
    with pytest.raises(ProtocolViolation, match="does not support 2026-07-28"):
        await discover(pinned, fallback=False)  # pinned to the current era: no handshake to fall to


@pytest.mark.anyio
async def test_when_the_handshake_fails_too_both_are_said() -> None:
    server = Scripted({"server/discover": {}, "initialize": McpError(-32601, "Method not found")})
    with pytest.raises(McpError):
        await discover(server)
