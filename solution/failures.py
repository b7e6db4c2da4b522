"""Failures become words: one place that turns any exception into a reason.

The aggregator uses `reason` for the offline table and `error_result` for the
`isError` results the model reads. Both must say what happened and where, in a
line, with no traceback: the model and the person reading the tool table act
on this text.
"""

from __future__ import annotations

from typing import List

from .errors import ClientError, McpError, RequestTimeout, ServerGone
from .jsonrpc import Json


def leaves(exc: BaseException) -> List[BaseException]:
    """The innermost exceptions of (possibly nested) exception groups."""
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, (list, tuple)) and inner:
        return [leaf for child in inner for leaf in leaves(child)]
    return [exc]


def reason(exc: BaseException) -> str:
    """One line saying what went wrong."""
    parts = []
    for leaf in leaves(exc):
        if isinstance(leaf, McpError):
            parts.append(f"the server answered error {leaf.code}: {leaf.message}")
        elif isinstance(leaf, (RequestTimeout, ServerGone, ClientError)):
            parts.append(str(leaf))
        elif isinstance(leaf, TimeoutError):
            parts.append("timed out" + (f": {leaf}" if str(leaf) else ""))
        else:
            parts.append(f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__)
    return "; ".join(parts)


def error_result(text: str) -> Json:
    """A tool result the model can read: MCP's shape for a tool execution error."""
    return {"content": [{"type": "text", "text": text}], "isError": True}
