"""One tool call, start to finish: the request, an `input_required` round if
the server asks for one, and the check of structured output against the
tool's `outputSchema`.

What comes back is always a tool result; a server that breaks the rules gets
an `isError` result that says how, so the model can read it and move on.
"""

from __future__ import annotations

from typing import Any, Optional, Protocol

from .failures import error_result
from .jsonrpc import Json
from .stdio_client import ProgressHandler
from .translate import ToolEntry, first_problem, schema_problem


class Caller(Protocol):
    async def request(self, method: str, params: Optional[Json] = None, *,
                      timeout: Optional[float] = None, allow_input_required: bool = False,
                      on_progress: Optional[ProgressHandler] = None,
                      progress_resets_timeout: bool = False) -> Json: ...


async def call_tool(server: Caller, entry: ToolEntry, arguments: Any, *,
                    on_progress: Optional[ProgressHandler] = None, progress_resets_timeout: bool = False,
                    timeout: Optional[float] = None) -> Json:
    """`timeout`: this tool's own (from the config's toolTimeouts); None: the server's."""
    # The original name goes out; the model-facing one never leaves the client.
    params: Json = {"name": entry.original_name, "arguments": arguments}
    result = await server.request("tools/call", params, timeout=timeout, allow_input_required=True,
                                  on_progress=on_progress, progress_resets_timeout=progress_resets_timeout)
    if result.get("resultType") == "input_required":
        result = await answer_input_required(server, params, result)
    return checked_output(entry, result)


async def answer_input_required(server: Caller, params: Json, asked: Json) -> Json:
    """This client declares no capabilities, so it can only echo `requestState`,
    once. Anything more is a request for input it cannot give."""
    state = asked.get("requestState")
    if asked.get("inputRequests") or not isinstance(state, str):
        kinds = sorted({str(r.get("method")) for r in (asked.get("inputRequests") or {}).values()
                        if isinstance(r, dict)})
        return error_result(f"The server asked for input this client cannot give ({', '.join(kinds) or 'no state to resume'}): "
                            "it declares no elicitation, sampling or roots capability.")
    again = await server.request("tools/call", {**params, "requestState": state}, allow_input_required=True)
    if again.get("resultType") == "input_required":
        return error_result("The server asked for input again after its state was returned once; "
                            "this client cannot give more.")
    return again


def checked_output(entry: ToolEntry, result: Json) -> Json:
    """A result whose structured part breaks the declared schema becomes an error."""
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
    # structuredContent (already checked against the outputSchema) unless it is an error.
    return None
    # <<< extension E5
