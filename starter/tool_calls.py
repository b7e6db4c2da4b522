"""One tool call, start to finish: the request, an `input_required` round if
the server asks for one, and the check of structured output against the
tool's `outputSchema`.

What comes back is always a tool result; a server that breaks the rules gets
an `isError` result that says how, so the model can read it and move on.
"""

from __future__ import annotations

from typing import Any, Optional, Protocol

from .errors import error_result
from .lifecycle.input_answers import Answerers
from .jsonrpc import Json
from .lifecycle.sampling import Declined
from .stdio_client import ProgressHandler
from .task_calls.task_runner import TaskPlan, run_task
from .tasks import ask_for_task, handle_of
from .translate import ToolEntry, first_problem, schema_problem
from .untrusted import shown

MAX_INPUT_ROUNDS = 5  # input_required rounds for one call before it is given up


class Caller(Protocol):
    async def request(self, method: str, params: Optional[Json] = None, *,
                      timeout: Optional[float] = None, allow_input_required: bool = False,
                      allow_task: bool = False, on_progress: Optional[ProgressHandler] = None,
                      progress_resets_timeout: bool = False) -> Json: ...


async def call_tool(server: Caller, entry: ToolEntry, arguments: Any, *,
                    on_progress: Optional[ProgressHandler] = None, progress_resets_timeout: bool = False,
                    timeout: Optional[float] = None, tasks: Optional[TaskPlan] = None) -> Json:
    """`timeout`: this tool's own (from the config's toolTimeouts); None: the
    server's. `tasks`: how to follow a call that becomes a task (None: such a
    call is reported as one this caller cannot follow)."""
    # The original name goes out; the model-facing one never leaves the client.
    params: Json = {"name": entry.original_name, "arguments": arguments}
    era = str(getattr(server, "era", "current"))
    if tasks is not None and ask_for_task(entry.tool, era, tasks.server_capabilities, tasks.prefer):
        params["task"] = {}  # the handshake era: the client asks for a task
    result = await server.request("tools/call", params, timeout=timeout, allow_input_required=True,
                                  allow_task=True, on_progress=on_progress,
                                  progress_resets_timeout=progress_resets_timeout)
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
        asked = await server.request("tools/call", again, allow_input_required=True, allow_task=True)
        if asked.get("resultType") != "input_required":
            return asked
    return error_result(f"The server asked for input {MAX_INPUT_ROUNDS} times in a row; the call was given up.")


def checked_output(entry: ToolEntry, result: Json) -> Json:
    """A result whose structured part breaks the declared schema becomes an error,
    and so does one that is not a tool result at all (a task's final result too)."""
    content = result.get("content", [])
    if not isinstance(content, list) or not all(isinstance(block, dict) for block in content):
        return error_result(f"{entry.model_name}: the server's result is malformed: its content is not a list "
                            "of blocks.")
    if result.get("isError") or entry.output_validator is None or schema_problem(entry):
        return result  # nothing to check against (a broken outputSchema checks nothing)
    if "structuredContent" not in result:
        return error_result(f"{entry.model_name}: the server declared an outputSchema but sent no "
                            "structuredContent.")
    problem = first_problem(entry.output_validator, result["structuredContent"])
    if problem is None:
        return result
    shown = " ".join(b.get("text", "") for b in result.get("content") or [] if isinstance(b, dict))
    return error_result(f"The structured result of {entry.model_name} does not match its outputSchema: "
                        f"{problem}. The server's text was: {shown[:300]}")


def structured_data(entry: Optional[ToolEntry], result: Json) -> Any:
    """The result as data for the program (the model reads the text blocks)."""
    # >>> extension E5 (structured results): checked data for the caller, or None
    # TODO extension E5: the program gets no data. Return the result's
    # structuredContent as it came (call_tool already checked it against any
    # outputSchema), or None for an error result or when there is no entry.
    # The clauses the checks hold it to: labs/GUIDE.md section 11.5.
    return None
    # <<< extension E5
