"""Tasks end to end, in both eras, against the tickets fixture's `export_tickets`.

Each test proves its point from the server's journal: which `tasks/*`
requests arrived, what the server answered, and when its work stopped.
"""

from __future__ import annotations

import dataclasses
import os
import signal
from typing import Any, Dict, List, Optional

import anyio
import pytest

from solution.host.aggregator import Aggregator
from solution.config import config_of
from solution.elicitation import Elicitor, Question
from solution.tasks import TaskState

from .conftest import Fixture

pytestmark = pytest.mark.anyio
ERAS = ["current", "legacy"]
EXPORT = "mcp__tickets__export_tickets"


def received(server: Fixture, method: str) -> List[Dict[str, Any]]:
    return [e["msg"] for e in server.entries() if e["kind"] == "in" and e.get("msg", {}).get("method") == method]


def sent_results(server: Fixture) -> List[Dict[str, Any]]:
    return [e["msg"] for e in server.entries() if e["kind"] == "out" and "result" in e.get("msg", {})]


def events(server: Fixture, kind: str) -> List[Dict[str, Any]]:
    return [e for e in server.entries() if e["kind"] == kind]


def text(result: Dict[str, Any]) -> str:
    return " ".join(str(b.get("text", "")) for b in result.get("content", []))


def tickets(fixture: Any, era: str, *extra: str) -> Fixture:
    server: Fixture = fixture("tickets", "tickets", "--era", era, *extra)
    return server


class Person:
    """A scripted user: answers each question with the next reply, and remembers it."""

    def __init__(self, *replies: Dict[str, Any]) -> None:
        self.replies = list(replies)
        self.asked: List[Question] = []

    async def __call__(self, question: Question) -> Dict[str, Any]:
        self.asked.append(question)
        return self.replies.pop(0)


async def call(server: Fixture, arguments: Dict[str, Any], person: Optional[Person] = None,
               **spec: Any) -> Dict[str, Any]:
    async with Aggregator(config_of([dataclasses.replace(server.spec, **spec)])) as tools:
        tools.elicitor = person
        await tools.refresh()
        assert EXPORT in tools.entries, tools.dropped
        with anyio.fail_after(60):
            result: Dict[str, Any] = await tools.call(EXPORT, arguments)
        return result


@pytest.mark.parametrize("era", ERAS)
async def test_a_task_that_completes_ends_with_the_result_the_server_stored(fixture: Any, era: str) -> None:
    server = tickets(fixture, era)
    result = await call(server, {"format": "json"})
    assert not result.get("isError") and result["structuredContent"]["format"] == "json"
    assert "Exported 3 tickets as JSON" in text(result)
    call_params = received(server, "tools/call")[0]["params"]
    if era == "legacy":  # the client asked for the task (the tool's taskSupport is required)
        assert call_params["task"] == {} and received(server, "tasks/result")
    else:  # the extension was declared on the call and on every poll
        declared = "io.modelcontextprotocol/tasks"
        assert declared in call_params["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
        polls = received(server, "tasks/get")
        assert polls and all(declared in p["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
                             ["extensions"] for p in polls)
        assert polls[-1]["id"] == sent_results(server)[-1]["id"]  # the last poll brought the result
        assert sent_results(server)[-1]["result"]["result"]["structuredContent"] == result["structuredContent"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_question_is_shown_as_a_form_and_the_answer_reaches_the_server(fixture: Any, era: str) -> None:
    server = tickets(fixture, era)
    person = Person({"action": "accept", "content": {"format": "csv", "include_closed": False}})
    result = await call(server, {}, person)
    assert "Exported 2 tickets as CSV" in text(result), result
    question = person.asked[0]
    assert question.alias == "tickets" and "format" in question.message
    fields = {f.name: f for f in question.fields}
    assert fields["format"].kind == "choice" and [v for v, _ in fields["format"].options] == ["csv", "json"]
    assert fields["include_closed"].kind == "boolean" and fields["format"].required
    if era == "legacy":  # asked by a request from the server while tasks/result was open
        asks = [e["msg"] for e in server.entries() if e["kind"] == "out" and e["msg"].get("method") ==
                "elicitation/create"]
        answers = [e["msg"] for e in server.entries() if e["kind"] == "in" and "result" in e.get("msg", {})]
        assert asks and answers[0]["id"] == asks[0]["id"] and answers[0]["result"]["action"] == "accept"
        assert question.task_id is not None
    else:
        updates = received(server, "tasks/update")
        assert len(updates) == 1  # answered once, though later polls may still show the key
        (answer,) = updates[0]["params"]["inputResponses"].values()
        assert answer == {"action": "accept", "content": {"format": "csv", "include_closed": False}}


@pytest.mark.parametrize("era", ERAS)
async def test_a_declined_question_is_the_tools_error_for_the_model(fixture: Any, era: str) -> None:
    server = tickets(fixture, era)
    result = await call(server, {}, Person({"action": "decline"}))
    assert result["isError"] and "'decline'" in text(result) and "nothing was exported" in text(result)


@pytest.mark.parametrize("era", ERAS)
async def test_without_anyone_to_ask_elicitation_is_not_declared_and_the_server_does_without(
        fixture: Any, era: str) -> None:
    server = tickets(fixture, era)
    result = await call(server, {})
    assert "CSV by default" in text(result)
    first = received(server, "initialize" if era == "legacy" else "tools/call")[0]["params"]
    declared = first["capabilities"] if era == "legacy" else \
        first["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert "elicitation" not in declared


@pytest.mark.parametrize("era", ERAS)
async def test_a_task_that_fails_is_an_error_naming_the_servers_reason(fixture: Any, era: str) -> None:
    server = tickets(fixture, era)
    result = await call(server, {"format": "csv", "queue": "archive"})
    assert result["isError"] and "archive queue's store is offline" in text(result)
    assert "-32603" in text(result)


@pytest.mark.parametrize("era", ERAS)
async def test_a_task_past_its_limit_is_cancelled_and_its_work_stops(fixture: Any, era: str) -> None:
    server = tickets(fixture, era, "--task-steps", "400", "--task-gap", "0.05")
    result = await call(server, {"format": "csv"}, task_timeout=1.0)
    assert result["isError"] and "did not finish within 1 s" in text(result)
    cancels = received(server, "tasks/cancel")
    assert len(cancels) == 1
    with anyio.fail_after(10):  # the journal is written by the server's own threads
        while not events(server, "work-stopped"):
            await anyio.sleep(0.05)
    stopped = events(server, "work-stopped")[0]
    assert stopped["reason"] == "cancelled"
    assert not [e for e in events(server, "step") if e["t"] > stopped["t"]]  # nothing ran after the stop


@pytest.mark.parametrize("era", ERAS)
async def test_being_cancelled_by_the_caller_cancels_the_task_on_the_server(fixture: Any, era: str) -> None:
    server = tickets(fixture, era, "--task-steps", "400")
    async with Aggregator(config_of([server.spec])) as tools:
        await tools.refresh()
        seen = anyio.Event()
        tools.on_task_status = lambda alias, state: seen.set() if "batch" in state.message else None
        async with anyio.create_task_group() as group:
            group.start_soon(tools.call, EXPORT, {"format": "csv"})
            with anyio.fail_after(30):
                await seen.wait()  # the work is under way
            group.cancel_scope.cancel()  # as Ctrl-C does
        assert len(received(server, "tasks/cancel")) == 1
        assert tools.task_book.open == {}


@pytest.mark.parametrize("era", ERAS)
async def test_a_task_the_restarted_server_forgot_is_reported_plainly(fixture: Any, era: str) -> None:
    server = tickets(fixture, era, "--task-steps", "400")
    statuses: List[TaskState] = []

    def on_status(alias: str, state: TaskState) -> None:
        statuses.append(state)
        if len(statuses) == 2:  # the task is running: the server dies under it
            os.kill(server.pid, signal.SIGKILL)
    async with Aggregator(config_of([server.spec])) as tools:
        await tools.refresh()
        tools.on_task_status = on_status
        with anyio.fail_after(60):
            result = await tools.call(EXPORT, {"format": "csv"})
        task_id = statuses[0].task_id
    assert result["isError"] and "no longer knows task" in text(result) and task_id in text(result)
    starts = events(server, "start")
    assert len(starts) == 2  # a second process, asked about the same id
    asked_again = [m for m in received(server, "tasks/get") + received(server, "tasks/result")
                   if m["params"]["taskId"] == task_id]
    late = [m for m in server.entries() if m["kind"] == "in" and m["t"] > starts[1]["t"]
            and m.get("msg", {}).get("params", {}).get("taskId") == task_id]
    assert asked_again and late


async def test_a_server_lost_under_a_task_whose_reconnect_failed_is_tried_again_after_the_cool_down(
        fixture: Any) -> None:
    """As a server the breaker paused: offline with the time it will be tried again,
    calls refused at once meanwhile, and the first call after the cool-down reconnects it."""
    from solution.host.breaker import Breaker
    server = tickets(fixture, "current", "--task-steps", "400")
    statuses: List[TaskState] = []
    now = [0.0]
    async with Aggregator(config_of([server.spec])) as tools:
        await tools.refresh()
        good = tools.config
        broken = dataclasses.replace(server.spec, args=(*server.spec.args, "--fail", "exit-at-start"))

        def on_status(alias: str, state: TaskState) -> None:
            statuses.append(state)
            if len(statuses) == 2:  # the task is running: the server dies, and will not start again
                tools.config = config_of([broken])
                os.kill(server.pid, signal.SIGKILL)
        tools.on_task_status = on_status
        tools.breaker = Breaker(clock=lambda: now[0])
        with anyio.fail_after(60):
            lost = await tools.call(EXPORT, {"format": "csv"})
        assert lost["isError"] and "Its id is kept" in text(lost)
        assert "will be tried again from" in tools.offline["tickets"]
        meanwhile = await tools.call("mcp__tickets__search", {"query": "login"})
        assert meanwhile["isError"] and "will be tried again in 30 s" in text(meanwhile)
        assert len(events(server, "start")) == 2  # refused at once: nothing was started for it
        now[0] += 30.0  # the cool-down is over: the next call tries, fails, and pauses it again
        await tools.call("mcp__tickets__search", {"query": "login"})
        again = await tools.call("mcp__tickets__search", {"query": "login"})
        assert "paused after its reconnect failed" in text(again) and len(events(server, "start")) == 3
        tools.config = good  # the server can start again
        now[0] += 30.0
        back = await tools.call("mcp__tickets__search", {"query": "login"})
        assert not back.get("isError"), back
        assert tools.offline == {}
    assert [s["fail"] for s in events(server, "start")] == [None, "exit-at-start", "exit-at-start", None]


async def test_polling_waits_the_interval_the_server_suggests(fixture: Any) -> None:
    server = tickets(fixture, "current", "--task-poll-ms", "300", "--task-steps", "6", "--task-gap", "0.1")
    result = await call(server, {"format": "csv"})
    assert not result.get("isError")
    times = [e["t"] for e in server.entries() if e["kind"] == "in" and e["msg"].get("method") == "tasks/get"]
    assert len(times) >= 2
    # A lower bound only: a busy machine makes the gaps longer, never shorter.
    assert min(b - a for a, b in zip(times, times[1:])) >= 0.25


async def test_a_required_tool_the_server_cannot_run_as_a_task_is_not_offered(fixture: Any) -> None:
    from solution.task_calls.support import unusable
    tool = {"name": "research", "execution": {"taskSupport": "required"}}
    assert unusable(tool, "legacy", {"tools": {}}) is not None
    assert unusable(tool, "legacy", {"tasks": {"requests": {"tools": {"call": {}}}}}) is None
    assert unusable(tool, "current", {}) is None


# -- the protocol half, without processes ---------------------------------------------

def test_handles_are_read_in_each_eras_own_spelling() -> None:
    from solution.task_calls.support import handle_of
    current = handle_of({"resultType": "task", "taskId": "a", "status": "working", "ttlMs": 5000,
                         "pollIntervalMs": 250}, "current")
    legacy = handle_of({"task": {"taskId": "b", "status": "working", "ttl": None, "pollInterval": 2000}}, "legacy")
    assert current is not None and (current.poll_seconds, current.ttl_seconds) == (0.25, 5.0)
    assert legacy is not None and (legacy.poll_seconds, legacy.ttl_seconds) == (2.0, None)
    # An ordinary result is not a handle, in either era; nor is a legacy-shaped one on the current wire.
    assert handle_of({"content": [], "resultType": "complete"}, "current") is None
    assert handle_of({"task": {"taskId": "b", "status": "working"}}, "current") is None


def test_a_servers_poll_interval_is_kept_within_bounds() -> None:
    from solution.tasks import DEFAULT_POLL, MAX_POLL, MIN_POLL, read_state
    assert read_state({"taskId": "a", "status": "working", "pollIntervalMs": 0}, "current").poll_seconds == MIN_POLL
    assert read_state({"taskId": "a", "status": "working", "pollIntervalMs": 10 ** 9},
                      "current").poll_seconds == MAX_POLL
    assert read_state({"taskId": "a", "status": "working", "pollIntervalMs": "soon"},
                      "current").poll_seconds == DEFAULT_POLL
    assert read_state({"taskId": "a", "status": "working", "pollIntervalMs": 10 ** 400},  # too long for a float
                      "current").poll_seconds == DEFAULT_POLL


@pytest.mark.parametrize("body", [{"taskId": "a", "status": "paused"}, {"status": "working"}, [1]])
def test_a_task_that_is_not_one_is_a_protocol_violation(body: Any) -> None:
    from solution.errors import ProtocolViolation
    from solution.tasks import read_state
    with pytest.raises(ProtocolViolation):
        read_state(body, "current")


def test_settled_ends_the_wait_only_at_a_terminal_status() -> None:
    from solution.tasks import settled
    done = {"content": [{"type": "text", "text": "x"}], "isError": True}
    assert settled(TaskState("a", "working")) is None and settled(TaskState("a", "input_required")) is None
    assert settled(TaskState("a", "completed", result=done)) == done  # the tool's error, for the model
    failed = settled(TaskState("a", "failed", error={"code": -32603, "message": "disk full"}))
    assert failed is not None and failed["isError"] and "error -32603: disk full" in text(failed)
    cancelled = settled(TaskState("a", "cancelled", "by admin"))
    assert cancelled is not None and "cancelled" in text(cancelled) and "by admin" in text(cancelled)


def test_the_handshake_era_asks_for_a_task_only_where_the_tool_and_server_allow_it() -> None:
    from solution.task_calls.support import ask_for_task
    runs: Dict[str, Any] = {"tasks": {"requests": {"tools": {"call": {}}}}}
    required, optional = {"execution": {"taskSupport": "required"}}, {"execution": {"taskSupport": "optional"}}
    assert ask_for_task(required, "legacy", runs, False)
    assert not ask_for_task(optional, "legacy", runs, False) and ask_for_task(optional, "legacy", runs, True)
    assert not ask_for_task({}, "legacy", runs, True)  # absent: forbidden
    assert not ask_for_task(required, "legacy", {}, True)  # the server runs no tool tasks
    assert not ask_for_task(required, "current", runs, True)  # 2026-07-28: the server decides


def test_the_task_book_keeps_open_tasks_in_its_file_and_removes_it_when_empty(tmp_path: Any) -> None:
    from solution.task_calls.task_runner import TaskBook, TaskRecord
    path = str(tmp_path / "tasks.json")
    book = TaskBook(path)
    book.add(TaskRecord("tickets", "export_tickets", "t1", "current"))
    assert list(TaskBook(path).open) == ["t1"]
    book.done("t1")
    assert not os.path.exists(path)
    (tmp_path / "tasks.json").write_text("{broken")
    assert TaskBook(path).open == {}  # a damaged file loses only the resume hints


class Scripted:
    """A server that answers from a script (the TaskServer shape, no process)."""

    alias, era = "s", "current"

    def __init__(self, *replies: Any) -> None:
        self.elicitor: Optional[Elicitor] = None
        self.replies = list(replies)
        self.sent: List[str] = []

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None, **options: Any) -> Any:
        self.sent.append(method)
        if method == "tasks/cancel":
            return {}
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


async def test_a_task_answer_the_client_cannot_read_stops_the_work_before_the_error() -> None:
    from solution.errors import ProtocolViolation
    from solution.task_calls.task_runner import TaskPlan, run_task
    server = Scripted({"taskId": "t", "status": "paused"})
    with pytest.raises(ProtocolViolation, match="unknown status"):
        await run_task(server, TaskState("t", "working", poll_seconds=0.05), "tool", TaskPlan())
    assert server.sent == ["tasks/get", "tasks/cancel"]


class Unconfirmed(Scripted):
    """A poll that never comes back, and a `tasks/cancel` that gets no answer (the server went)."""

    def __init__(self) -> None:
        super().__init__()
        self.polled = anyio.Event()

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None, **options: Any) -> Any:
        from solution.errors import ServerGone
        self.sent.append(method)
        if method == "tasks/cancel":
            raise ServerGone("server 's' closed its output")
        self.polled.set()
        await anyio.sleep_forever()


async def test_a_task_whose_cancel_was_not_confirmed_stays_in_the_tasks_file(tmp_path: Any) -> None:
    """The record goes only when the task ended or the server confirmed its cancel:
    otherwise the work may go on, and `tasks` must be able to ask about it."""
    from solution.task_calls.task_runner import TaskBook, TaskPlan, run_task
    path = str(tmp_path / "tasks.json")
    server = Unconfirmed()
    async with anyio.create_task_group() as group:
        group.start_soon(run_task, server, TaskState("t", "working", poll_seconds=0.0), "tool",
                         TaskPlan(book=TaskBook(path)))
        with anyio.fail_after(10):
            await server.polled.wait()
        group.cancel_scope.cancel()  # as a signal does
    assert server.sent == ["tasks/get", "tasks/cancel"]
    assert list(TaskBook(path).open) == ["t"]


async def test_failed_polls_back_off_and_a_slow_poll_is_not_a_failed_task() -> None:
    from solution.errors import RequestTimeout
    from solution.task_calls.task_runner import TaskPlan, run_task
    done = {"taskId": "t", "status": "completed", "result": {"content": [], "isError": False}}
    server = Scripted(RequestTimeout("tasks/get", 1.0), RequestTimeout("tasks/get", 1.0), done)
    result = await run_task(server, TaskState("t", "working", poll_seconds=0.05), "tool", TaskPlan())
    assert result == done["result"] and server.sent == ["tasks/get"] * 3


def test_an_answer_about_another_task_is_a_protocol_violation() -> None:
    from solution.errors import ProtocolViolation
    from solution.task_calls.support import same_task
    from solution.tasks import read_state
    mine = read_state({"taskId": "mine", "status": "working"}, "current")
    assert same_task(mine, "mine") is mine
    with pytest.raises(ProtocolViolation, match="answered about another task"):
        same_task(read_state({"taskId": "theirs", "status": "completed", "result": {"content": []}}, "current"),
                  "mine")
