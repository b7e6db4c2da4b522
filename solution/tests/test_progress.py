"""E3: progress notifications reach the caller, in order, until the reply."""

from __future__ import annotations

import json
from typing import Any, List, Optional, Tuple

import anyio
import pytest

from solution.host.aggregator import Aggregator
from solution.config import ServerSpec, config_of
from solution.errors import RequestTimeout
from solution.host.config import HostServerSpec
from solution.host.server_client import ServerClient
from solution.stdio_client import StdioClient

Seen = List[Tuple[float, Optional[float], str]]


@pytest.mark.anyio
async def test_progress_arrives_in_order_and_stops_at_the_reply(fixture: Any) -> None:
    tickets = fixture("tickets")
    seen: Seen = []
    async with Aggregator(config_of([tickets.spec])) as tools:
        await tools.refresh()
        result = await tools.call("mcp__tickets__rebuild_index", {},
                                  on_progress=lambda p, t, m: seen.append((p, t, m)))
        after = len(seen)
        await tools.call("mcp__tickets__queue_stats_af6d318b", {})
    assert [p for p, _, _ in seen] == [1, 2, 3, 4, 5] and seen[0][1] == 5 and "20%" in seen[0][2]
    assert result["structuredContent"] == {"tickets": 3} and len(seen) == after
    sent = [c for c in tickets.calls() if c["name"] == "rebuild_index"][0]
    assert "progressToken" in sent["_meta"]
    plain = [c for c in tickets.calls() if c["name"] == "queue.stats"][0]
    assert "progressToken" not in plain["_meta"]  # only calls that want progress ask for it


@pytest.mark.anyio
@pytest.mark.parametrize("resets", [False, True])
async def test_progress_extends_the_timeout_only_when_configured(fixture: Any, resets: bool) -> None:
    # 3 s of work with a report every 30 ms and a 2 s timeout: the work always
    # outlasts the timeout, and no gap between reports comes near it.
    spec = fixture("tickets", "", "--progress-steps", "100", "--progress-gap", "0.03").spec
    async with anyio.create_task_group() as group:
        client = ServerClient(HostServerSpec(spec.alias, spec.command, spec.args, {}, spec.cwd,
                                             progress_resets_timeout=resets), request_timeout=2.0)
        await client.start(group)
        try:
            call = client.request("tools/call", {"name": "rebuild_index", "arguments": {}},
                                  on_progress=lambda p, t, m: None)
            if resets:
                assert (await call)["structuredContent"] == {"tickets": 3}
            else:
                with pytest.raises(RequestTimeout):
                    await call
        finally:
            await client.aclose()


@pytest.mark.anyio
async def test_a_progress_too_long_for_a_float_is_no_report_and_the_reader_reads_on() -> None:
    # float(10 ** 400) raises OverflowError: in the reader it would end the connection.
    client = StdioClient(ServerSpec("t", "python"))
    heard: Seen = []
    client._progress[1] = lambda p, t, m: heard.append((p, t, m))
    for params in ({"progressToken": 1, "progress": 10 ** 400}, {"progressToken": 1, "progress": 1, "total": 10 ** 400}):
        client.on_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}).encode())
    assert heard == [(1.0, None, "")]
