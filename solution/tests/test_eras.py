"""Era detection in discovery, and the legacy era against the fixtures."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from solution.aggregator import Aggregator
from solution.config import config_of
from solution.discovery import discover
from solution.errors import McpError, ProtocolViolation, RequestTimeout

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
