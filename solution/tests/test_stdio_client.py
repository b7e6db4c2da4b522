"""The stdio client: `on_line` on its own, then the real thing with a process."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from solution.config import ServerSpec
from solution.errors import McpError, ProtocolViolation, RequestTimeout, ServerGone
from solution.stdio_client import StdioClient
from solution.tests.conftest import alive


def unstarted() -> StdioClient:
    return StdioClient(ServerSpec("t", "unused"))


@pytest.mark.anyio
async def test_on_line_resolves_the_request_with_the_same_id() -> None:
    client = unstarted()
    first, a = client._pending.open("x")
    second, b = client._pending.open("y")
    client.on_line(f'{{"jsonrpc":"2.0","id":{second},"result":{{"n":2}}}}'.encode())
    assert b.result == {"n": 2} and not a.done.is_set()


@pytest.mark.anyio
async def test_on_line_rejects_an_error_reply_with_code_and_message() -> None:
    client = unstarted()
    request_id, slot = client._pending.open("x")
    client.on_line(f'{{"jsonrpc":"2.0","id":{request_id},"error":{{"code":-32601,'
                   f'"message":"Method not found","data":"x"}}}}'.encode())
    assert isinstance(slot.error, McpError)
    assert (slot.error.code, slot.error.message, slot.error.data) == (-32601, "Method not found", "x")


@pytest.mark.anyio
async def test_on_line_rejects_a_reply_with_neither_member() -> None:
    client = unstarted()
    request_id, slot = client._pending.open("x")
    client.on_line(f'{{"jsonrpc":"2.0","id":{request_id}}}'.encode())
    assert isinstance(slot.error, ProtocolViolation)


@pytest.mark.anyio
async def test_on_line_survives_noise_unknown_ids_and_malformed_errors() -> None:
    client = unstarted()
    request_id, slot = client._pending.open("x")
    for line in (b"banner text", b"[]", b'{"jsonrpc":"2.0","id":999,"result":{}}',
                 b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'):
        client.on_line(line)
    assert not slot.done.is_set() and list(client.noise) == [b"banner text", b"[]"]
    client.on_line(f'{{"jsonrpc":"2.0","id":{request_id},"error":"bad"}}'.encode())
    assert isinstance(slot.error, McpError) and slot.error.code == -32603


@pytest.mark.anyio
async def test_on_line_hands_notifications_to_their_handler() -> None:
    client, seen = unstarted(), []  # type: StdioClient, list[Any]
    client.notification_handlers["notifications/progress"] = seen.append
    client.on_line(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}')
    client.on_line(b'{"jsonrpc":"2.0","method":"notifications/other"}')
    assert seen == [{"progress": 1}]


async def started(spec: ServerSpec, group: Any, timeout: float = 30.0) -> StdioClient:
    client = StdioClient(spec, request_timeout=timeout)
    await client.start(group)
    return client


@pytest.mark.anyio
async def test_requests_carry_the_envelope_and_replies_match_by_id(fixture: Any) -> None:
    notes = fixture("notes", "", "--latency", "read_note=0.2")
    results: dict[str, Any] = {}
    async with anyio.create_task_group() as group:
        client = await started(notes.spec, group)

        async def call(key: str, name: str, arguments: dict[str, str]) -> None:
            results[key] = await client.request("tools/call", {"name": name, "arguments": arguments})
        async with anyio.create_task_group() as calls:
            calls.start_soon(call, "slow", "read_note", {"id": "n-1"})
            calls.start_soon(call, "fast", "search", {"query": "naming"})
        await client.aclose()
    assert results["slow"]["structuredContent"]["id"] == "n-1"
    assert results["fast"]["structuredContent"]["results"][0]["id"] == "n-3"
    first = next(e for e in notes.entries() if e["kind"] == "in")
    meta = first["msg"]["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    # The core declares nothing: it answers no question a server may ask, and follows no task.
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert not alive(notes.pid)


@pytest.mark.anyio
async def test_the_references_client_declares_tasks_and_only_what_something_stands_behind(fixture: Any) -> None:
    from solution.host.server_client import ServerClient

    notes = fixture("notes")
    async with anyio.create_task_group() as group:
        client = ServerClient(notes.spec)
        await client.start(group)
        await client.request("tools/list")
        await client.aclose()
    meta = next(e for e in notes.entries() if e["kind"] == "in")["msg"]["params"]["_meta"]
    # tasks always (the client can follow them); no elicitation: nothing here could answer
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {"extensions": {"io.modelcontextprotocol/tasks": {}}}


@pytest.mark.anyio
async def test_an_error_reply_raises_mcp_error_at_once(fixture: Any) -> None:
    notes = fixture("notes")
    async with anyio.create_task_group() as group:
        client = await started(notes.spec, group)
        with pytest.raises(McpError) as caught:  # a dropped reply would end in RequestTimeout, 30 s on
            await client.request("notes/reindex")
        await client.aclose()
    assert caught.value.code == -32601


@pytest.mark.anyio
async def test_a_request_with_no_reply_times_out_and_is_cancelled(fixture: Any) -> None:
    tickets = fixture("tickets", "", "--fail", "never-answer")
    async with anyio.create_task_group() as group:
        client = await started(tickets.spec, group, timeout=0.3)
        with pytest.raises(RequestTimeout, match="within 0.3 s"):
            await client.request("server/discover")
        await client.aclose()
    assert tickets.methods() == ["server/discover", "notifications/cancelled"]


@pytest.mark.anyio
async def test_a_late_reply_is_ignored(fixture: Any) -> None:
    notes = fixture("notes", "", "--latency", "read_note=2")  # far past the 0.1 s timeout
    async with anyio.create_task_group() as group:
        client = await started(notes.spec, group)
        with pytest.raises(RequestTimeout):
            await client.request("tools/call", {"name": "read_note", "arguments": {"id": "n-1"}},
                                 timeout=0.1)
        assert (await client.request("server/discover"))["resultType"] == "complete"
        await client.aclose()


@pytest.mark.anyio
async def test_a_server_that_exits_fails_requests_at_once_with_status_and_stderr(fixture: Any) -> None:
    tickets = fixture("tickets", "", "--fail", "exit-at-start")
    async with anyio.create_task_group() as group:
        client = await started(tickets.spec, group, timeout=10.0)
        began = time.monotonic()
        with pytest.raises(ServerGone) as caught:
            await client.request("server/discover")
        assert time.monotonic() - began < 3.0
        await client.aclose()
    assert "exit status 3" in str(caught.value) and "ticket database" in str(caught.value)


@pytest.mark.anyio
@pytest.mark.parametrize("command", ["no-such-command-for-the-lab", "/etc/hostname"])
async def test_a_command_that_cannot_start_is_a_clear_error(command: str) -> None:
    async with anyio.create_task_group() as group:
        client = StdioClient(ServerSpec("x", command))
        with pytest.raises(ServerGone, match="command|cannot start"):
            await client.start(group)
        await client.aclose()


@pytest.mark.anyio
async def test_close_is_bounded_and_idempotent(fixture: Any) -> None:
    notes = fixture("notes")
    async with anyio.create_task_group() as group:
        client = await started(notes.spec, group)
        await client.request("server/discover")
        await client.aclose()
        await client.aclose()
        with pytest.raises(ServerGone):
            await client.request("server/discover")
    assert not alive(notes.pid)


@pytest.mark.anyio
async def test_a_code_0_error_from_an_old_server_is_kept_as_it_came() -> None:
    client = unstarted()
    request_id, slot = client._pending.open("x")
    client.on_line(f'{{"jsonrpc":"2.0","id":{request_id},"error":{{"code":0,"message":"raw crash"}}}}'.encode())
    assert isinstance(slot.error, McpError) and (slot.error.code, slot.error.message) == (0, "raw crash")


@pytest.mark.anyio
async def test_a_last_word_sent_after_the_run_was_cancelled_is_not_waited_for(fixture: Any) -> None:
    """Ctrl-C cancels the reader with everything else; a shielded tasks/cancel still
    goes out, and its sender hears at once that no reply can be read (not at its timeout)."""
    notes = fixture("notes")
    outcome: list[BaseException] = []
    async with anyio.create_task_group() as outer:
        client = await started(notes.spec, outer)
        outer.cancel_scope.cancel()  # the run is cancelled: the reader stops
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0)  # let the reader see its cancellation first
            try:
                await client.request("tasks/cancel", {"taskId": "t"}, timeout=600)  # a timeout would hang here
            except ServerGone as exc:
                outcome.append(exc)
            await client.aclose()
    assert outcome and "stopped reading its replies" in str(outcome[0])
    assert "tasks/cancel" in notes.methods()  # the last word did go out
