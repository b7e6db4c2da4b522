"""A tool that asks the user a question in the middle of a call, without a task.

The handler raises `NeedInput` when it needs an answer it does not have. How
the question reaches the person depends on the era:

- 2026-07-28 (multi round-trip requests): the call ends with
  `resultType: "input_required"`, the question in `inputRequests` and a
  `requestState` the client must send back verbatim; the client calls again,
  with a new id, carrying `inputResponses`.
- 2025-11-25: the server sends `elicitation/create` to the client and waits
  for the answer while the call stays open.

A client that did not declare what the tool asks for (form elicitation,
sampling, roots) is never asked: the handler gets `None` for its answers and
uses its default or says so in an `isError` result.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, Dict, Optional

from servers.rpc import INVALID_PARAMS, Json, RpcError, ToolOutput

AskingHandler = Callable[[Json, Optional[Dict[str, Json]]], ToolOutput]  # (arguments, answers or None)
Asker = Callable[[str, Json], Optional[Json]]  # (method, params) -> the client's result, None if none


class NeedInput(Exception):
    """Raised by a handler: it needs the answer to this request to the client
    (a question for the person by default; or a sampling, or the roots)."""

    def __init__(self, key: str, question: Json, method: str = "elicitation/create") -> None:
        super().__init__(key)
        self.key = key
        self.question = question
        self.method = method


def state_for(name: str, arguments: Json) -> str:
    """The opaque requestState: what the retry must match (tool and arguments)."""
    raw = json.dumps([name, arguments], sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def run_asking(name: str, handler: AskingHandler, arguments: Json, params: Json, can_ask: bool,
               ask_client: Optional[Asker], method: str = "elicitation/create") -> ToolOutput | Json:
    """Run the handler; the output, or (2026-07-28) an input_required result."""
    if not can_ask:
        return handler(arguments, None)
    answers: Dict[str, Json] = {}
    given = params.get("inputResponses")
    if given is not None:
        if params.get("requestState") != state_for(name, arguments):
            raise RpcError(INVALID_PARAMS, "Invalid params: requestState must be sent back exactly as received")
        if not isinstance(given, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        answers = {str(k): v for k, v in given.items() if isinstance(v, dict)}
    while True:
        try:
            return handler(arguments, answers)
        except NeedInput as need:
            if need.method != method:  # a handler asking for what its tool did not say it asks
                raise RuntimeError(f"{name} asked for {need.method}, but its tool asks {method}")
            if ask_client is None:  # 2026-07-28: the client asks (the person, the model) and calls again
                return {"resultType": "input_required", "requestState": state_for(name, arguments),
                        "inputRequests": {need.key: {"method": need.method, "params": need.question}}}
            reply: Any = ask_client(need.method, need.question)  # the handshake era: ask now
            # An error reply (or none): a question counts as cancelled; anything else as an empty answer.
            answers[need.key] = reply if isinstance(reply, dict) else \
                {"action": "cancel"} if need.method == "elicitation/create" else {}
