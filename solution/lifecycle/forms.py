"""A server's question answered: put to the person as a form, the answer checked, the reply.

The question becomes fields as elicitation.py says (or is declined, with why);
whoever answers questions here (an `Elicitor`: a terminal form, a caller's
callback) has `ANSWER_TIMEOUT` to do it; an accepted answer is checked against
the requested schema with bounded work (host/patterns.py: the schema is the
server's) and never sent when it does not fit. The server hears `accept` with
the content, `decline` or `cancel`, and in `_meta` why the client said so.
"""

from __future__ import annotations

from typing import Any, Optional

import anyio

from ..elicitation import Elicitor, Question, Unsupported, question_from
from ..host.patterns import bounded_problem
from ..jsonrpc import Json

ANSWER_TIMEOUT = 600.0  # a question left unanswered this long is cancelled
NOTE = "io.mcp-client-lab/note"  # in a reply's _meta: why the client answered as it did


def answer_problem(question: Question, content: Any) -> Optional[str]:
    """Why an accepted answer does not fit the requested schema, or None."""
    if not isinstance(content, dict):
        return "the answer is not an object"
    return bounded_problem(question.schema, content)


async def answer(elicitor: Optional[Elicitor], alias: str, params: Any, task_id: Optional[str] = None) -> Json:
    """The reply to one elicitation: the person's answer, checked, or a decline
    that says why (no one to ask, a form that cannot be shown)."""
    if elicitor is None:
        return {"action": "decline", "_meta": {NOTE: "nobody can answer questions here"}}
    try:
        question = question_from(alias, params, task_id)
    except Unsupported as exc:
        return {"action": "decline", "_meta": {NOTE: str(exc)}}
    try:
        with anyio.fail_after(ANSWER_TIMEOUT):
            reply = await elicitor(question)
    except Exception as exc:  # a form that broke, or nobody answered: the server hears "cancel"
        return {"action": "cancel", "_meta": {NOTE: f"no answer ({type(exc).__name__})"}}
    action = reply.get("action") if isinstance(reply, dict) else None
    if action == "accept":
        problem = answer_problem(question, reply.get("content"))
        if problem is not None:  # never send what the schema refuses: the person did not mean that
            return {"action": "cancel", "_meta": {NOTE: f"the answer did not fit the form: {problem}"}}
        return {"action": "accept", "content": reply["content"]}
    return {"action": action if action in ("decline", "cancel") else "cancel"}
