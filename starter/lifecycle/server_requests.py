"""Requests a server sends to the client, and the answers they get.

Every request gets an answer, never silence (a server may be waiting on it):
`ping` is answered at once; `elicitation/create` goes to whoever answers
questions (a terminal form, a caller's callback), and is declined with a
reason when nobody does or the form cannot be shown; `sampling/createMessage`
goes to the sampler (the model, after the person approves) and a refusal is
an error (-1, the spec's "user rejected"); `roots/list` gets the client's roots
when it has any; anything else, or a kind with nothing behind it, is a method
this client does not offer (-32601), said in words.

Up to a point: each answer is a task and a message (over HTTP a connection of
its own), so a server that sends thousands at once (3,000 pings on one answer)
gets `Admission`'s treatment: a few answered at a time, more refused as busy,
and past both none, since even a refusal costs a message.
"""

from __future__ import annotations

from typing import Any, Dict, Literal, Optional

from ..elicitation import Elicitor
from ..jsonrpc import Json
from ..sampler import USER_REJECTED, Declined, Sampler
from ..untrusted import shown
from .input_answers import ELICIT, SAMPLE, Answerers
from .roots import Roots

METHOD_NOT_FOUND = -32601
RELATED_TASK = "io.modelcontextprotocol/related-task"
DECLINED = "mcp-client-lab/declined"  # why the client declined without asking anyone
BUSY = -32000  # JSON-RPC's range for an implementation's own errors: too many requests at once
ANSWERING = 8  # a server's own requests answered at once
REFUSING = 64  # beyond those, refused as busy at once; beyond both, left unanswered

Handling = Literal["answer", "refuse"]


class Admission:
    """How one server's requests are being handled, and what a new one gets."""

    def __init__(self, answering: int = ANSWERING, refusing: int = REFUSING) -> None:
        self.limits: Dict[Handling, int] = {"answer": answering, "refuse": refusing}
        self.held: Dict[Handling, int] = {"answer": 0, "refuse": 0}
        self.unanswered = 0  # requests that came while both were full

    def admit(self) -> Optional[Handling]:
        """"answer" or "refuse" (call `done` with it when the reply is sent), or None."""
        for handling in ("answer", "refuse"):
            if self.held[handling] < self.limits[handling]:
                self.held[handling] += 1
                return handling
        self.unanswered += 1
        return None

    def done(self, handling: Handling) -> None:
        self.held[handling] -= 1


def busy_reply(message: Json) -> Json:
    """The refusal of a request that came while ANSWERING others were being answered."""
    return {"jsonrpc": "2.0", "id": message.get("id"),
            "error": {"code": BUSY, "message": f"Busy: this client answers at most {ANSWERING} requests "
                                               "from a server at once; send it again later"}}


def related_task(params: Any) -> Optional[str]:
    """The task a server's request belongs to, if it says (handshake-era tasks)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    task_id = related.get("taskId") if isinstance(related, dict) else None
    return task_id if isinstance(task_id, str) else None


async def answer_server_request(alias: str, elicitor: Optional[Elicitor], message: Json,
                                busy: bool = True, *, sampler: Optional[Sampler] = None,
                                roots: Optional[Roots] = None) -> Json:
    """The reply to one request from server `alias`. `busy`: whether one of the
    client's own requests to that server is in flight. A server may put a
    question to the person (a form, a sampling to approve) only then, about
    work the person started; one out of the blue is declined without being
    shown. Roots need no person and are given whenever the client has them."""
    method = message.get("method")
    reply: Json = {"jsonrpc": "2.0", "id": message.get("id")}
    answerers = Answerers(elicitor, sampler, roots)
    params = message.get("params")
    if method == "ping":
        reply["result"] = {}
    elif method == ELICIT and elicitor is not None and not busy:
        reply["result"] = {"action": "decline", "_meta": {DECLINED: "asked while no request of this client's "
                                                                   "was in flight; not shown to anyone"}}
    elif method == SAMPLE and sampler is not None and not busy:
        reply["error"] = {"code": USER_REJECTED, "message": "Declined: asked while no request of this client's "
                                                            "was in flight; not shown to anyone"}
    elif method in answerers.kinds():
        try:
            reply["result"] = await answerers.answer(alias, method, params, related_task(params))
        except Declined as exc:
            reply["error"] = {"code": USER_REJECTED, "message": f"Declined: {exc}"}
    else:
        reply["error"] = {"code": METHOD_NOT_FOUND,
                          "message": f"Method not found: this client does not offer {shown(method, 80)}"}
    return reply
