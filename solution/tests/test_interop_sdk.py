"""Interop with an implementation this project did not write: the official
MCP Python SDK (`mcp` 2.x, installed by the test extra), offline over stdio.

Both directions: the reference client against SDK servers (low-level with
paging, high-level `MCPServer`, and one held to the legacy era), and the
SDK's own `Client` against both fixture servers in both eras.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, EmptyResult, Request, RequestParams, Result

from solution.host.aggregator import Aggregator
from solution.config import ServerSpec, config_of
from solution.tests.conftest import ROOT, Fixture

SDK_SERVERS = Path(__file__).resolve().parent / "sdk_servers"


def sdk_spec(alias: str, script: str, *args: str) -> ServerSpec:
    return ServerSpec(alias, sys.executable, (str(SDK_SERVERS / script), *args), {}, str(ROOT))


def text(result: Dict[str, Any]) -> str:
    return " ".join(b.get("text", "") for b in result["content"])


# -- the reference client against SDK servers ------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("legacy", [False, True], ids=["current era", "legacy era"])
async def test_client_against_sdk_low_level_server_with_pages(legacy: bool) -> None:
    spec = sdk_spec("ll", "ll_server.py", *(["--legacy"] if legacy else []))
    async with Aggregator(config_of([spec]), request_timeout=10.0) as tools:
        await tools.refresh()
        info = tools.connections["ll"].info
        assert (info.era, info.name) == (("legacy", "ll-demo") if legacy else ("current", "ll-demo"))
        assert [e.original_name for e in tools.entries.values()] == ["add", "echo", "boom", "wrong_shape"]
        added = await tools.call("mcp__ll__add", {"a": 2, "b": 3})
        assert added["structuredContent"] == {"sum": 5} and not added.get("isError")
        echoed = await tools.call("mcp__ll__echo", {"text": "hi there"})
        assert text(echoed) == "hi there"
        boom = await tools.call("mcp__ll__boom", {})
        assert boom["isError"] is True and text(boom) == "boom: something went wrong"  # verbatim
        wrong = await tools.call("mcp__ll__wrong_shape", {})
        assert wrong["isError"] and "'seven' is not of type 'integer' (at n)" in text(wrong)
        local = await tools.call("mcp__ll__add", {"a": "x", "b": 1})
        assert local["isError"] and "Nothing was sent" in text(local)
        tools.entries["mcp__ll__echo"].original_name = "vanished"
        unknown = await tools.call("mcp__ll__echo", {"text": "x"})
        assert unknown["isError"] and "-32602" in text(unknown) and "Unknown tool: vanished" in text(unknown)


@pytest.mark.anyio
async def test_client_against_sdk_mcpserver_and_its_iserror_habits() -> None:
    async with Aggregator(config_of([sdk_spec("hl", "hl_server.py")]), request_timeout=10.0) as tools:
        await tools.refresh()
        assert sorted(e.original_name for e in tools.entries.values()) == ["add", "boom", "echo"]
        added = await tools.call("mcp__hl__add", {"a": 2, "b": 3})
        assert added["structuredContent"] == {"result": 5}  # fits the generated outputSchema
        boom = await tools.call("mcp__hl__boom", {})
        assert boom["isError"] and "boom: something went wrong" in text(boom)
        # MCPServer answers an unknown tool with an isError result, not -32602:
        tools.entries["mcp__hl__echo"].original_name = "nope"
        unknown = await tools.call("mcp__hl__echo", {"text": "x"})
        assert unknown["isError"] and "Unknown tool" in text(unknown)


@pytest.mark.anyio
async def test_an_sdk_server_that_fails_sits_in_the_offline_table_beside_working_ones(fixture: Any) -> None:
    broken = ServerSpec("gone", sys.executable, ("-c", "import sys; sys.exit('no database')"), {}, str(ROOT))
    async with Aggregator(config_of([sdk_spec("ll", "ll_server.py"), broken]), request_timeout=10.0) as tools:
        await tools.refresh()
        assert "no database" in tools.offline["gone"] and "exit status 1" in tools.offline["gone"]
        assert not (await tools.call("mcp__ll__echo", {"text": "still here"}))["isError"]


# -- the SDK's Client against the fixture servers ------------------------------------

def fixture_params(fixture: Fixture) -> StdioServerParameters:
    return StdioServerParameters(command=fixture.spec.command, args=list(fixture.spec.args), cwd=str(ROOT))


async def all_tool_names(client: Client) -> List[str]:
    page = await client.list_tools()
    names = [t.name for t in page.tools]
    while page.next_cursor is not None:
        page = await client.list_tools(cursor=page.next_cursor)
        names += [t.name for t in page.tools]
    return names


@pytest.mark.anyio
@pytest.mark.parametrize("era, mode", [("current", "auto"), ("legacy", "legacy"), ("legacy", "auto")])
async def test_sdk_client_against_the_note_library(fixture: Any, era: str, mode: str) -> None:
    notes = fixture("notes", "", "--era", era)
    async with Client(fixture_params(notes), mode=mode, read_timeout_seconds=10) as client:
        assert await all_tool_names(client) == ["search", "read_note", "add_note"]
        found = await client.call_tool("read_note", {"id": "n-2"})
        assert not found.is_error and found.structured_content == {
            "id": "n-2", "title": "Timeouts", "body": json.loads(json.dumps(found.structured_content))["body"]}
        missing = await client.call_tool("read_note", {"id": "n-9"})
        assert missing.is_error and "No note with id 'n-9'" in missing.content[0].text  # type: ignore[union-attr]
        with pytest.raises(MCPError) as caught:
            await client.call_tool("nope", {})
        assert caught.value.code == -32602
    methods = notes.methods()
    if era == "legacy":
        assert "initialize" in methods and "notifications/initialized" in methods
        requests = [e["msg"] for e in notes.entries() if e["kind"] == "in" and "msg" in e
                    and e["msg"].get("method") == "tools/list"]
        assert all("io.modelcontextprotocol/protocolVersion" not in (r.get("params") or {}).get("_meta", {})
                   for r in requests)
    else:
        assert methods[0] == "server/discover" and "initialize" not in methods


@pytest.mark.anyio
@pytest.mark.parametrize("era, mode", [("current", "auto"), ("legacy", "legacy")])
async def test_sdk_client_against_the_ticketing_system(fixture: Any, era: str, mode: str) -> None:
    tickets = fixture("tickets", "", "--era", era)
    async with Client(fixture_params(tickets), mode=mode, read_timeout_seconds=10) as client:
        names = await all_tool_names(client)
        assert len(names) == 12 and "queue.stats" in names
        stats = await client.call_tool("queue.stats", {})
        assert not stats.is_error and stats.structured_content == {"web": 1, "search": 1, "reports": 1}
        late = await client.call_tool("schedule_followup", {"ticket_id": "T-101", "date": "friday"})
        assert late.is_error and "YYYY-MM-DD" in late.content[0].text  # type: ignore[union-attr]


# -- tasks, both ways (2026-07-28 with the extension io.modelcontextprotocol/tasks) --------

@pytest.mark.anyio
async def test_client_follows_tasks_of_an_sdk_built_task_server() -> None:
    async with Aggregator(config_of([sdk_spec("st", "task_server.py")]), request_timeout=10.0) as tools:
        await tools.refresh()
        assert tools.connections["st"].info.capabilities["extensions"] == {"io.modelcontextprotocol/tasks": {}}
        seen: List[str] = []
        tools.on_task_status = lambda alias, state: seen.append(state.status)
        done = await tools.call("mcp__st__slow_sum", {"a": 2, "b": 3})
        assert not done.get("isError") and done["structuredContent"] == {"result": 5}, done
        assert seen[0] == "working" and seen[-1] == "completed"
        broken = await tools.call("mcp__st__broken_sum", {"a": 1, "b": 1})
        assert broken["isError"] and "error -32603: the adder broke" in text(broken)
        quick = await tools.call("mcp__st__quick", {"a": 4})
        assert quick["structuredContent"] == {"result": 8}


class TaskHandle(Result):
    """The 2026 task handle, as the SDK's claim API wants it: a Result subclass."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: Optional[int] = None
    poll_interval_ms: Optional[int] = None


class TaskIdParams(RequestParams):
    task_id: str


class GetTask(Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class UpdateTaskParams(RequestParams):
    task_id: str
    input_responses: Dict[str, Any]


class UpdateTask(Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams
    name_param = "taskId"


class TaskSnapshot(Result):
    task_id: str
    status: str
    status_message: Optional[str] = None
    poll_interval_ms: Optional[int] = None
    input_requests: Optional[Dict[str, Any]] = None
    result: Optional[Dict[str, Any]] = None
    error: Optional[Dict[str, Any]] = None


class SdkTasks(ClientExtension):
    """A tasks client written on the SDK's claim API: poll, answer once, return the result."""

    identifier = "io.modelcontextprotocol/tasks"

    def claims(self) -> Any:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.resolve)]

    async def resolve(self, handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        answered: set = set()  # type: ignore[type-arg]
        delay = (handle.poll_interval_ms or 1000) / 1000
        with anyio.fail_after(30):
            while True:
                await anyio.sleep(delay)
                snap = await ctx.session.send_request(GetTask(params=TaskIdParams(task_id=handle.task_id)),
                                                      TaskSnapshot)
                if snap.status == "completed":
                    return CallToolResult.model_validate(snap.result)
                if snap.status in ("failed", "cancelled"):
                    raise MCPError(code=(snap.error or {}).get("code", -32603), message=str(snap.error))
                fresh = {k: v for k, v in (snap.input_requests or {}).items() if k not in answered}
                if fresh:
                    replies = {k: {"action": "accept", "content": {"format": "json"}} for k in fresh}
                    await ctx.session.send_request(UpdateTask(params=UpdateTaskParams(
                        task_id=handle.task_id, input_responses=replies)), EmptyResult)
                    answered.update(fresh)


@pytest.mark.anyio
async def test_sdk_client_with_a_tasks_extension_drives_the_fixtures_task(fixture: Any) -> None:
    tickets = fixture("tickets")
    async with Client(fixture_params(tickets), mode="auto", read_timeout_seconds=10,
                      extensions=[SdkTasks()]) as client:
        done = await client.call_tool("export_tickets", {"format": "csv"})
        assert not done.is_error and "Exported 3 tickets as CSV" in done.content[0].text  # type: ignore[union-attr]
    methods = tickets.methods()
    assert methods.count("tools/call") == 1 and "tasks/get" in methods
    declared = [e["msg"]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] for e in tickets.entries()
                if e["kind"] == "in" and e["msg"].get("method") == "tasks/get"]
    assert all("io.modelcontextprotocol/tasks" in d["extensions"] for d in declared)
