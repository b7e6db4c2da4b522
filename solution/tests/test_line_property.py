"""Whatever a server prints, the line handler neither raises nor loses a request."""

from __future__ import annotations

import json

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from solution.config import ServerSpec
from solution.errors import McpError
from solution.stdio_client import StdioClient

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8)
messages = st.dictionaries(st.sampled_from(["jsonrpc", "id", "result", "error", "method", "params"]),
                           json_values, max_size=5)
lines = st.one_of(st.binary(max_size=200), json_values.map(lambda v: json.dumps(v).encode()),
                  messages.map(lambda m: json.dumps(m).encode()))


@settings(max_examples=300, deadline=None)
@given(st.lists(lines, max_size=12))
def test_arbitrary_lines_never_break_the_reader_or_the_waiting_request(garbage: list[bytes]) -> None:
    async def scenario() -> None:
        client = StdioClient(ServerSpec("fuzz", "unused"))
        request_id, slot = client._pending.open("tools/call")
        for line in garbage:
            client.on_line(line)  # must never raise
        if slot.done.is_set():  # garbage may legitimately answer id 1 (it is a reply to it)
            assert slot.result is not None or slot.error is not None
            return
        client.on_line(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -1, "message": "m"}}).encode())
        assert isinstance(slot.error, McpError)
    anyio.run(scenario)
