"""Tasks in the fixture servers: long work that answers with a handle, in both eras.

A tool with a `job` runs as a task: the call returns at once with a task id,
the job runs on its own thread, and the client reads its state with
`tasks/get`. The board below keeps the tasks of one server process (so a
restarted server has forgotten them all, as real stdio servers do) and is
shared by both eras; only the wire shapes differ:

- 2026-07-28 with the extension `io.modelcontextprotocol/tasks`: a flat handle
  (`resultType: "task"`), `ttlMs`/`pollIntervalMs`, questions shown in
  `tasks/get` as `inputRequests` and answered with `tasks/update`, the final
  result inlined in `tasks/get`, `tasks/cancel` acknowledged with an empty result.
- 2025-11-25: a nested `{"task": {...}}`, `ttl`/`pollInterval`, questions sent
  to the client as `elicitation/create` requests, but only while it waits in
  `tasks/result` (as server-everything does), the final result from
  `tasks/result`, `tasks/cancel` answered with the task, already cancelled.

Every change of state goes to `on_event` (the shell journals it), including
the moment a cancelled job actually stops working, so a check can prove that
nothing kept running after a cancel.

Both eras in one module because the board serves them from one state machine;
splitting the wire shapes from it would split each rule in two.
"""

from __future__ import annotations

import datetime
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from servers.asking import Asker
from servers.rpc import INTERNAL_ERROR, INVALID_PARAMS, Json, RpcError, ToolFailed, ToolOutput

Event = Callable[..., None]
Job = Callable[[Json, "TaskWork"], ToolOutput]

RELATED_TASK = "io.modelcontextprotocol/related-task"
TERMINAL = ("completed", "failed", "cancelled")
STOP_WAIT = 5.0  # seconds a cancel waits for the job to notice
ANSWER_WAIT = 120.0  # seconds a question waits for its answer before the task fails


class Cancelled(Exception):
    """Raised inside a job when the client cancelled its task."""


class Lapsed(Exception):
    """Raised by a job the server drops without a JSON-RPC error (as a server may
    when a task outlives its ttl): the task ends `failed` with only a message."""


class Withdrawn(Exception):
    """Raised by a job that the server itself calls off: the task ends
    `cancelled` although the client never asked, with this as its message."""


def now_iso(moment: float) -> str:
    return datetime.datetime.fromtimestamp(moment, datetime.timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Task:
    """One task's state: read and changed by its job's thread and by the client's
    requests, under the board's lock."""

    task_id: str
    tool: str
    message: str = ""
    status: str = "working"
    created: float = field(default_factory=time.time)
    updated: float = field(init=False)  # when its status last changed (at first: when it was created)
    result: Optional[Json] = None  # the CallToolResult, once completed (or failed with isError, legacy)
    error: Optional[Json] = None  # the JSON-RPC error object, once failed
    questions: Dict[str, Json] = field(default_factory=dict)  # outstanding inputRequests
    answers: Dict[str, Json] = field(default_factory=dict)
    cancel: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)  # its job has returned
    result_waiters: int = 0  # legacy: how many tasks/result calls are open for it

    def __post_init__(self) -> None:
        self.updated = self.created


class TaskWork:
    """What a job sees of its task: report, ask, and stop when cancelled."""

    def __init__(self, board: TaskBoard, task: Task, can_ask: bool) -> None:
        self.board = board
        self.task = task
        self.can_ask = can_ask
        self._asked = 0

    def status(self, message: str) -> None:
        self.check()
        self.board.change(self.task, "working", message)
        self.board.event("step", task=self.task.task_id, message=message)

    def check(self) -> None:
        if self.task.cancel.is_set():
            raise Cancelled()

    def sleep(self, seconds: float) -> None:
        """Simulated work; a cancel ends it at once."""
        if self.task.cancel.wait(seconds):
            raise Cancelled()

    def ask(self, params: Json) -> Optional[Json]:
        """Put an `elicitation/create` to the user; None when the client cannot
        answer (it did not declare form elicitation on the call)."""
        if not self.can_ask:
            return None
        self._asked += 1
        return self.board.ask(self.task, f"{self.task.tool}-question-{self._asked}", params)


class TaskBoard:
    def __init__(self, *, legacy: bool, ttl_ms: Optional[int] = 60_000, poll_ms: int = 100) -> None:
        self.legacy = legacy
        self.ttl_ms = ttl_ms
        self.poll_ms = poll_ms
        self.tasks: Dict[str, Task] = {}
        self.changed = threading.Condition()
        self.on_event: Event = lambda kind, **fields: None  # set by the shell (journal)
        self.notify: Callable[[Json], None] = lambda params: None  # legacy status notifications
        self.asker: Asker = lambda method, params: None  # legacy: a request to the client

    def event(self, kind: str, **fields: Any) -> None:
        self.on_event(kind, **fields)

    # -- life of a task --------------------------------------------------------

    def start(self, tool: str, job: Job, arguments: Json, can_ask: bool) -> Json:
        """Create a task, start its job, and return its handle (the state it was
        created in: a task starts `working`, whatever its job does next)."""
        task = Task(os.urandom(12).hex(), tool, message="Queued")
        with self.changed:
            self.tasks[task.task_id] = task
        handle = {"task": self.legacy_view(task)} if self.legacy else \
            {"resultType": "task", **self.current_view(task, detailed=False)}
        self.event("task", task=task.task_id, tool=tool, status="working")
        work = TaskWork(self, task, can_ask)
        threading.Thread(target=self._run, args=(task, job, arguments, work), daemon=True).start()
        return handle

    def _run(self, task: Task, job: Job, arguments: Json, work: TaskWork) -> None:
        try:
            self._work(task, job, arguments, work)
        finally:
            task.stopped.set()

    def _work(self, task: Task, job: Job, arguments: Json, work: TaskWork) -> None:
        try:
            output = job(arguments, work)
        except Cancelled:
            self.event("work-stopped", task=task.task_id, reason="cancelled")
            return  # the status was set to cancelled by the cancel itself
        except Withdrawn as exc:
            self.finish(task, "cancelled", str(exc))
        except Lapsed as exc:
            self.finish(task, "failed", str(exc))
        except ToolFailed as exc:
            result = {"content": [{"type": "text", "text": str(exc)}], "isError": True}
            self.finish(task, "failed" if self.legacy else "completed", str(exc), result=result)
        except RpcError as exc:
            self.finish(task, "failed", exc.message, error=exc.to_json())
        else:
            done: Json = {"content": [{"type": "text", "text": output.text}], "isError": False}
            if output.structured is not None:
                done["structuredContent"] = output.structured
            self.finish(task, "completed", "Done", result=done)
        self.event("work-stopped", task=task.task_id, reason=task.status)

    def change(self, task: Task, status: str, message: str) -> None:
        with self.changed:
            if task.status in TERMINAL:
                return  # terminal states never change (a cancel may have won the race)
            task.status, task.message, task.updated = status, message, time.time()
            self.changed.notify_all()
        if self.legacy:
            self.notify(self.legacy_view(task))

    def finish(self, task: Task, status: str, message: str, *, result: Optional[Json] = None,
               error: Optional[Json] = None) -> None:
        with self.changed:
            if task.status in TERMINAL:
                return
            task.result, task.error = result, error
        self.change(task, status, message)
        self.event("task", task=task.task_id, status=status)

    def ask(self, task: Task, key: str, params: Json) -> Optional[Json]:
        """Wait for the answer to one question; raises Cancelled on a cancel."""
        if self.legacy:
            self.change(task, "input_required", "Waiting for the user's answer")
            answer = self._ask_legacy(task, params)
        else:
            with self.changed:  # the question is there before any tasks/get can see the status
                task.questions[key] = {"method": "elicitation/create", "params": params}
                self.change(task, "input_required", "Waiting for the user's answer")
                self.changed.wait_for(lambda: key in task.answers or task.cancel.is_set(), ANSWER_WAIT)
                task.questions.pop(key, None)
                answer = task.answers.get(key)
        if task.cancel.is_set():
            raise Cancelled()
        if answer is None:
            raise RpcError(INTERNAL_ERROR, f"no answer to the question within {ANSWER_WAIT:g} s")
        self.change(task, "working", "Got the answer")
        return answer

    def _ask_legacy(self, task: Task, params: Json) -> Optional[Json]:
        # As server-everything does: the question goes out only while the
        # client sits in tasks/result, which is what delivers it.
        with self.changed:
            if not self.changed.wait_for(lambda: task.result_waiters > 0 or task.cancel.is_set(), ANSWER_WAIT):
                return None
            if task.cancel.is_set():
                return None
        meta = {RELATED_TASK: {"taskId": task.task_id}}
        return self.asker("elicitation/create", {**params, "_meta": meta})

    # -- the client's requests -----------------------------------------------------

    def find(self, task_id: Any) -> Task:
        task = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise RpcError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        if self.ttl_ms is not None and time.time() > task.created + self.ttl_ms / 1000:
            with self.changed:
                self.tasks.pop(task.task_id, None)
            raise RpcError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        return task

    def update(self, task_id: Any, responses: Any) -> None:
        """Answers to outstanding questions; others are ignored, as the spec says."""
        task = self.find(task_id)
        if not isinstance(responses, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        with self.changed:
            for key, answer in responses.items():
                if key in task.questions and key not in task.answers and isinstance(answer, dict):
                    task.answers[key] = answer
            self.changed.notify_all()

    def cancel(self, task_id: Any) -> Task:
        task = self.find(task_id)
        with self.changed:
            if task.status in TERMINAL:
                if self.legacy:
                    raise RpcError(INVALID_PARAMS, f"Cannot cancel task in terminal status: {task.status}")
                return task  # the 2026 ack is only an ack
            task.cancel.set()
            self.changed.notify_all()
        self.finish(task, "cancelled", "Cancelled by the client")
        # Cancelling is cooperative; this fixture lets its job stop before it
        # answers, so its journal shows the work ended before the reply went out.
        task.stopped.wait(STOP_WAIT)
        return task

    def wait_result(self, task_id: Any) -> Json:
        """Legacy `tasks/result`: block until the task ends, then its result."""
        task = self.find(task_id)
        limit = (self.ttl_ms or 600_000) / 1000
        with self.changed:
            task.result_waiters += 1
            self.changed.notify_all()
            try:
                ended = self.changed.wait_for(lambda: task.status in TERMINAL, limit)
            finally:
                task.result_waiters -= 1
        if not ended:
            raise RpcError(INTERNAL_ERROR, f"Task {task.task_id} did not end within {limit:g} s")
        if task.error is not None:
            raise RpcError(task.error["code"], task.error["message"], task.error.get("data"))
        if task.result is None:
            raise RpcError(INTERNAL_ERROR, f"Task {task.task_id} has no result stored")
        return {**task.result, "_meta": {RELATED_TASK: {"taskId": task.task_id}}}

    # -- wire shapes ---------------------------------------------------------------

    def current_view(self, task: Task, *, detailed: bool) -> Json:
        view: Json = {"taskId": task.task_id, "status": task.status, "statusMessage": task.message,
                      "createdAt": now_iso(task.created), "lastUpdatedAt": now_iso(task.updated),
                      "ttlMs": self.ttl_ms, "pollIntervalMs": self.poll_ms}
        if detailed:
            with self.changed:
                if task.status == "input_required" and task.questions:
                    view["inputRequests"] = dict(task.questions)
                elif task.status == "completed" and task.result is not None:
                    view["result"] = task.result
                elif task.status == "failed" and task.error is not None:
                    view["error"] = task.error
        return view

    def legacy_view(self, task: Task) -> Json:
        return {"taskId": task.task_id, "status": task.status, "statusMessage": task.message,
                "createdAt": now_iso(task.created), "lastUpdatedAt": now_iso(task.updated),
                "ttl": self.ttl_ms, "pollInterval": self.poll_ms}

    def legacy_list(self) -> List[Json]:
        with self.changed:
            tasks = list(self.tasks.values())
        return [self.legacy_view(task) for task in tasks]
