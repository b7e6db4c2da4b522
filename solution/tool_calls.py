"""One tool call: the request, and the check of its structured result.

The original name goes out; the model-facing one never leaves the client. A
tool that declares an `outputSchema` promises `structuredContent` that fits
it, and the client holds it to that (`checked_output`): a result that breaks
the promise becomes an `isError` result saying how, so the model can read it
and move on, and the program can trust what `structured_data` hands it.

What comes back is always a tool result. The reference client's calls also
follow tasks and answer a server's questions mid-call (task_calls/tool_call.py).
"""

from __future__ import annotations

from typing import Any, Optional, Protocol

from .errors import error_result
from .jsonrpc import Json
from .stdio_client import ProgressHandler
from .translate import ToolEntry, schema_problem


class Caller(Protocol):
    async def request(self, method: str, params: Optional[Json] = None, *,
                      timeout: Optional[float] = None, on_progress: Optional[ProgressHandler] = None) -> Json: ...


async def call_tool(server: Caller, entry: ToolEntry, arguments: Any, *,
                    on_progress: Optional[ProgressHandler] = None, timeout: Optional[float] = None) -> Json:
    """`tools/call` for `entry`; `timeout`: None for the server's own."""
    params: Json = {"name": entry.original_name, "arguments": arguments}
    result = await server.request("tools/call", params, timeout=timeout, on_progress=on_progress)
    return checked_output(entry, result)


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
    problem = entry.problem(entry.output_validator, result["structuredContent"])
    if problem is None:
        return result
    shown = " ".join(b.get("text", "") for b in result.get("content") or [] if isinstance(b, dict))
    return error_result(f"The structured result of {entry.model_name} does not match its outputSchema: "
                        f"{problem}. The server's text was: {shown[:300]}")


def structured_data(entry: Optional[ToolEntry], result: Json) -> Any:
    """The result as data for the program (the model reads the text blocks)."""
    # >>> extension E5 (structured results): checked data for the caller, or None
    # `call_tool` already turned a result that breaks its outputSchema into an
    # isError, so a successful result's structuredContent is known to fit.
    if result.get("isError") or entry is None:
        return None
    return result.get("structuredContent")
    # <<< extension E5
