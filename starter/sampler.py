"""Sampling answered by the configured model, with a person approving twice.

    sampler = TerminalSampler(model, terminal)   # then Aggregator.sampler = sampler

For each `sampling/createMessage` (a handshake-era server's request, or an
`inputRequests` entry of a 2026-07-28 call): the run's budget is checked, the
request is read (`sampling.sampling_ask`), the person sees the server's alias,
its system prompt and messages and says yes or no; only then does the model
answer (no tools, `maxTokens` capped), and the person sees the reply and says
yes or no again before it goes back. The terminal is held for the whole of it,
so no consent question or form can take either answer. Anything but a yes,
an end of input, or a read that fails is a decline (`Declined`), which the
server hears as an error.

When sampling is offered at all is the command line's decision (`offered`):
with a model configured, and a terminal to ask on or the user's explicit
`--sampling ask` (approvals then read from standard input, as a script types them).
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

from .jsonrpc import Json
from .model import Model
from .lifecycle.sampling import (MAX_TOKENS, Budget, Declined, approved, conversation, cut_reply, describe_ask,
                       describe_reply, new_fence, reply_result, sampling_ask)
from .commands.terminal import Terminal



def offered(mode: str, model_configured: bool, terminal: bool) -> bool:
    """Whether to declare sampling: `off` never; `ask` when a model is configured;
    `auto` when one is and there is a terminal to approve on."""
    if mode == "off" or not model_configured:
        return False
    return mode == "ask" or terminal


def model_configured(env: Mapping[str, str]) -> bool:
    """A model the user chose: the mock by MOCK=1, or a model API's settings (not the fallback mock)."""
    return env.get("MOCK", "") not in ("", "0") or bool(
        env.get("ANTHROPIC_API_KEY") or env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_KEY"))


def capped(model: Model, max_tokens: int) -> Model:
    """The model asking for at most `max_tokens` (for the adapters that take a limit)."""
    if not hasattr(model, "max_tokens"):
        return model
    limited = copy.copy(model)
    setattr(limited, "max_tokens", max_tokens)
    return limited


class TerminalSampler:
    def __init__(self, model: Model, terminal: Terminal, budget: "Budget | None" = None,
                 cap: int = MAX_TOKENS) -> None:
        self.model = model
        self.terminal = terminal
        self.budget = budget or Budget()
        self.cap = cap

    async def __call__(self, alias: str, params: Any) -> Json:
        # >>> extension E11 (sampling): the person approves the request, then the reply
        # TODO extension E11: answer a server's sampling request (labs/GUIDE.md section 11.11).
        # Take one from self.budget, read the request (sampling_ask), and inside one
        # self.terminal.turn(...) show describe_ask and ask; only after a yes (approved) ask
        # the model (conversation; capped to ask.max_tokens), cut the reply (cut_reply), show
        # describe_reply and ask again; only after that yes return reply_result. Any other
        # answer raises Declined. The clauses the checks hold it to: labs/GUIDE.md section 11.11.
        raise Declined("extension E11: answer a sampling request only with the person's approval "
                       "(labs/GUIDE.md section 11.11)")
        # <<< extension E11

    async def _read(self, prompt: str) -> str:
        try:
            return await self.terminal.read(prompt)
        except (EOFError, OSError):
            return ""  # no more input: no
