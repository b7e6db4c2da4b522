"""What code mode saves: the context a model is sent for the demo question,
answered once with one script and once with direct tool calls.

Both runs use the real fixture servers and the reference client. The code-mode
run is the mock model writing its script; the direct run replays the very
calls that script made, as a model would make them (consecutive calls of one
tool in one turn, since they do not depend on each other), and ends with the
same answer. Every turn's request is built as the Messages API would receive
it (system, tool table, conversation) and counted at 4 characters a token.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Dict, List, Tuple

from checks.target import ROOT
from solution.agent import ToolProvider, run_agent
from solution.host.aggregator import Aggregator
from solution.model_apis import anthropic_messages as to_messages
from solution.code_mode.run_script import CodeMode, ScriptCall
from solution.config import ServerSpec, config_of
from solution.consent import ONCE, Consent, always
from solution.code_mode.mock_code import CodeModeMock
from solution.model import Json, Message, ModelTurn, ToolCall
from solution.naming import model_tool_name

DEMO_QUESTION = "Read the notes about timeouts, naming and paging, and save their titles as one new note"


@dataclass
class Metered:
    """A model wrapped so that every request it is sent is counted."""

    inner: Any
    sent: List[int] = field(default_factory=list)  # characters of each request
    name: str = "metered"
    api: str = "anthropic"

    async def next_turn(self, system: str, tools: List[Json], messages: List[Message]) -> ModelTurn:
        request = {"system": system, "tools": tools, "messages": to_messages(messages)}
        self.sent.append(len(json.dumps(request, ensure_ascii=False)))
        turn: ModelTurn = await self.inner.next_turn(system, tools, messages)
        return turn

    @property
    def tokens(self) -> int:
        return sum(self.sent) // 4


@dataclass
class Replay:
    """A model that makes given calls directly, a batch per turn, then answers."""

    batches: List[List[Tuple[str, Json]]]
    answer: str
    name: str = "replay"
    api: str = "anthropic"

    async def next_turn(self, system: str, tools: List[Json], messages: List[Message]) -> ModelTurn:
        done = sum(1 for m in messages if m.role == "assistant")
        if done >= len(self.batches):
            return ModelTurn(self.answer)
        return ModelTurn("", [ToolCall(f"c{done}-{i}", name, arguments)
                              for i, (name, arguments) in enumerate(self.batches[done])])


def servers() -> List[ServerSpec]:
    return [ServerSpec(alias, sys.executable, (str(ROOT / "servers" / f"{alias}.py"),), {}, str(ROOT))
            for alias in ("notes", "tickets")]


async def answered(provider_of: Any, model: Any) -> Tuple[Any, Any]:
    async with Aggregator(config_of(servers())) as tools:
        tools.consent = Consent(always(ONCE))  # add_note writes: allowed, as a user would
        await tools.refresh()
        provider: ToolProvider = provider_of(tools)
        run = await run_agent(DEMO_QUESTION, provider, model)
        return run, provider


async def demo_tokens() -> Dict[str, Any]:
    """Tokens sent to the model for the demo question, code mode against direct calls."""
    scripted = Metered(CodeModeMock())
    run, code = await answered(CodeMode, scripted)
    calls: List[ScriptCall] = [c for script in code.runs for c in script.calls]
    batches = [[(model_tool_name(alias, tool), c.arguments) for c in group]
               for (alias, tool), group in groupby(calls, key=lambda c: (c.alias, c.original_name))]
    direct = Metered(Replay([list(b) for b in batches], run.answer))
    direct_run, _ = await answered(lambda tools: tools, direct)
    return {"code_mode": scripted.tokens, "code_mode_turns": len(scripted.sent),
            "direct": direct.tokens, "direct_turns": len(direct.sent), "calls": len(calls),
            "same_answer": direct_run.answer == run.answer,
            "direct_errors": sum(1 for s in direct_run.steps if s.is_error)}
