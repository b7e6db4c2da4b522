"""One tool call as the reference client makes it: a task followed to its end, and
the server's questions answered mid-call.

`call_with_tasks` asks for a task where the handshake era lets the client
choose, follows a task handle wherever one comes back (task_runner.py), and
answers `input_required` rounds (MRTR: the 2026-07-28 way a server asks the
client something during a call). The final result is checked as the core
checks any (tool_calls.checked_output).
"""

from __future__ import annotations

from typing import Any, Optional, Protocol, Tuple

from ..errors import error_result
from ..jsonrpc import Json
from ..lifecycle.input_answers import Answerers
from ..sampler import Declined
from ..stdio_client import ProgressHandler
from ..tool_calls import checked_output
from ..translate import ToolEntry
from ..untrusted import shown
from .support import ask_for_task, handle_of
from .task_runner import TaskPlan, run_task

MAX_INPUT_ROUNDS = 5  # input_required rounds for one call before it is given up
ACCEPTED = ("complete", "input_required", "task")  # the kinds of result a tool call can handle here


class Caller(Protocol):
    async def request(self, method: str, params: Optional[Json] = None, *,
                      timeout: Optional[float] = None, on_progress: Optional[ProgressHandler] = None,
                      accept: Tuple[str, ...] = ...) -> Json: ...


async def call_with_tasks(server: Caller, entry: ToolEntry, arguments: Any, *,
                          on_progress: Optional[ProgressHandler] = None, timeout: Optional[float] = None,
                          tasks: Optional[TaskPlan] = None) -> Json:
    """`timeout`: this tool's own (from the config's toolTimeouts); None: the
    server's. `tasks`: how to follow a call that becomes a task (None: such a
    call is reported as one this caller cannot follow)."""
    # The original name goes out; the model-facing one never leaves the client.
    params: Json = {"name": entry.original_name, "arguments": arguments}
    era = str(getattr(server, "era", "current"))
    if tasks is not None and ask_for_task(entry.tool, era, tasks.server_capabilities, tasks.prefer):
        params["task"] = {}  # the handshake era: the client asks for a task
    result = await server.request("tools/call", params, timeout=timeout, on_progress=on_progress, accept=ACCEPTED)
    if result.get("resultType") == "input_required":
        result = await answer_input_required(server, params, result)
    handle = handle_of(result, era)
    if handle is not None:
        if tasks is None:
            return error_result(f"{entry.model_name}: the server answered with a task, which this caller "
                                "does not follow.")
        result = await run_task(server, handle, entry.original_name, tasks)  # type: ignore[arg-type]
    return checked_output(entry, result)


async def answer_input_required(server: Caller, params: Json, asked: Json) -> Json:
    """Answer `input_required` rounds (MRTR) and call again, each time with a
    new id, the answers and the server's `requestState` verbatim. Questions go
    to the caller's answerers (input_answers.py): forms, sampling, roots. A
    server that asks for a kind the client did not declare gets no answers and
    the model is told why; a sampling request the person declined ends the call."""
    answerers = Answerers.of(server)
    alias = str(getattr(server, "alias", "?"))
    for _ in range(MAX_INPUT_ROUNDS):
        requests = asked.get("inputRequests") or {}
        if not isinstance(requests, dict):
            requests = {}
        kinds = sorted({str(r.get("method")) for r in requests.values() if isinstance(r, dict)})
        missing = [kind for kind in kinds if kind not in answerers.kinds()]
        if (requests and (missing or not kinds)) or (not requests and not isinstance(asked.get("requestState"), str)):
            lacking = [kind for kind in ("elicitation", "sampling", "roots")
                       if not any(k.startswith(kind) for k in answerers.kinds())]
            return error_result(f"The server asked for input this client cannot give "
                                f"({shown(', '.join(kinds), 120) or 'no state to resume'}): it declares no "
                                f"{' or '.join(lacking) or 'such'} capability.")
        again: Json = {**params}
        if requests:
            try:
                again["inputResponses"] = {key: await answerers.answer(alias, request.get("method"),
                                                                       request.get("params"))
                                           for key, request in requests.items() if isinstance(request, dict)}
            except Declined as exc:  # no answer can stand in for a refused sampling: the call ends here
                return error_result(f"The call was not completed: the server asked to use the model and "
                                    f"that was refused ({exc}). Do not retry it unless the user asks.")
        if isinstance(asked.get("requestState"), str):
            again["requestState"] = asked["requestState"]
        asked = await server.request("tools/call", again, accept=ACCEPTED)
        if asked.get("resultType") != "input_required":
            return asked
    return error_result(f"The server asked for input {MAX_INPUT_ROUNDS} times in a row; the call was given up.")
