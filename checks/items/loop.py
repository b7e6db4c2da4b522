"""Item 9: the agent loop, from the model's choice to the server's journal, with a step limit.
"""

from __future__ import annotations

from typing import Any

from checks.fixtures import Lab
from checks.harness import Fail
from checks.items.evidence import aggregator_for, refreshed, result_of
from checks.target import Target


HEALING_QUESTION = "Schedule a follow-up for T-101 next friday"


async def agent_loop(target: Target, lab: Lab) -> str:
    specs = [lab.server("notes"), lab.server("tickets")]
    ModelTurn, ToolCall = target.model.ModelTurn, target.model.ToolCall

    class Looping:
        """A model that never stops calling tools."""
        name = "looping"
        api = "anthropic"

        def __init__(self, tool: str) -> None:
            self.tool = tool

        async def next_turn(self, system: str, tools: Any, messages: Any) -> Any:
            return ModelTurn("", [ToolCall(f"loop-{len(messages)}", self.tool, {"id": "n-1"})])

    async with await aggregator_for(target, lab, specs) as tools:
        await refreshed(target, tools)
        table = {t["name"] for t in tools.model_tools()}
        # The configured model (the mock under MOCK=1 or when none is set up).
        model = target.module("model_apis").choose_model()[0]
        mock = isinstance(model, target.mock_model.MockModel)
        run = await target.agent.run_agent("Read note n-2", tools, model, max_steps=4)
        if not run.steps:
            raise Fail(f"the mock model made no tool call; answer: {run.answer!r}")
        step = run.steps[0]
        if step.model_name not in table:
            raise Fail(f"the model chose {step.model_name!r}, which is not in the tool table")
        entry = tools.entries[step.model_name]
        calls = lab.journal(entry.alias).calls()
        if not calls or calls[0].msg["params"]["name"] != entry.original_name:
            raise Fail(f"{entry.alias} should have received {entry.original_name!r}; journal shows "
                       f"{[c.msg['params']['name'] for c in calls]}")
        served = result_of(lab.journal(entry.alias), entry.original_name)
        text = " ".join(b.get("text", "") for b in served.get("content", []))
        if run.stopped_at_limit or not run.answer:
            raise Fail(f"the loop should end with an answer within its 4 steps; got {run.answer!r:.120}")
        if mock and text.split("\n")[0] not in run.answer:
            raise Fail(f"the result should be fed back and answered from; answer was {run.answer!r:.120}")
        healed = await self_healing(target, lab, tools, model) if mock else ""
        before = len(lab.journal("notes").calls())
        loop = await target.agent.run_agent("Loop", tools, Looping(step.model_name), max_steps=3)
        looped = len(lab.journal("notes").calls()) - before
        if not loop.stopped_at_limit or loop.model_turns != 3 or looped != 3:
            raise Fail(f"a model that keeps calling tools must stop at max_steps=3; it made "
                       f"{loop.model_turns} turns and the server got {looped} calls")
    return (f"the model chose {step.model_name}; {entry.alias} received {entry.original_name!r}; "
            f"answered from the result; {healed}a looping model stopped after 3 turns")


async def self_healing(target: Target, lab: Lab, tools: Any, model: Any) -> str:
    """The lesson of tool execution errors: the error's text goes back to the model,
    which fixes its own call. Judged from the journal: the second call carries a
    date that only the first reply's text could have given."""
    run = await target.agent.run_agent(HEALING_QUESTION, tools, model, max_steps=4)
    journal = lab.journal("tickets")
    calls = journal.calls("schedule_followup")
    replies = [journal.reply_to(c) for c in calls]
    results = [(r.msg.get("result") or {}) if r else {} for r in replies]
    if len(calls) != 2 or not results[0].get("isError") or results[1].get("isError"):
        said = [" ".join(b.get("text", "") for b in r.get("content", []))[:80] for r in results]
        raise Fail(f"expected: the date error goes back to the model as a tool result, and the model's "
                   f"second call fixes the date from its text\njournal: tickets received "
                   f"{len(calls)} schedule_followup call(s), answered {said}\n"
                   f"got: answer {run.answer!r:.120}")
    return (f"the date error reached the model, whose second call sent "
            f"{calls[1].msg['params']['arguments'].get('date')!r}; ")
