"""What a question costs: the same scripted questions, asked with the full tool
table and with the meta-tools, of a loopback stand-in for each model API that
bills by the provider's prompt-caching rules (checks/dev/billing.py).

The stand-in plays a model that knows which calls answer the question: with the
full table it makes them one a turn; with the meta-tools each takes three turns
(`search_tools`, `inspect_tool`, `call_tool`), as the tiers ask. Everything else
is the reference client as shipped: the real fixture servers (and
`cost_server.py`), the aggregator, the agent loop, the model adapters and their
HTTP. Tokens are counted, not timed, so every figure is the same on any machine.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from checks.dev.billing import AnthropicCache, OpenAICache, TooManyBreakpoints, text_of, tokens
from checks.target import ROOT
from solution.agent import AgentRun, ToolProvider, run_agent
from solution.host.aggregator import Aggregator
from solution.model_apis import AnthropicModel
from solution.commands.bill import Bill, bill_of
from solution.config import ServerSpec, config_of
from solution.meta_tools import CALL, CONTEXT_WINDOW, INSPECT, SEARCH, MetaTools, tool_share, too_many
from solution.model import Model
from solution.naming import model_tool_name
from solution.model_apis import OpenAIModel
from solution.stdio_client import ProgressHandler
from solution.tests.fake_api import FakeApi, Reply, ok
from solution.translate import ToolEntry

Json = Dict[str, Any]
Call = Tuple[str, str, Json]  # alias, original tool name, arguments
APIS = ("anthropic", "openai")
MODES = ("full", "meta")  # and "default": whichever `ask` would choose
SETTLE = 10.0  # seconds a list change may take to reach the table (only a broken server takes that long)
SERVERS = {"notes": ROOT / "servers" / "notes.py", "tickets": ROOT / "servers" / "tickets.py",
           "office": ROOT / "checks" / "dev" / "cost_server.py"}


@dataclass(frozen=True)
class Scenario:
    name: str
    servers: Tuple[str, ...]  # in config order
    calls: Tuple[Call, ...]  # what answers the question, one call a turn
    changes_list: str = ""  # a tool whose call changes the list: the next turn waits for the table
    office_tools: int = 14  # the workplace server's size (14: the 29-tool table)


LARGE = ("notes", "tickets", "office")  # 29 tools, about 4,700 tokens
SMALL = Scenario("small table (3 tools)", ("notes",),
                 (("notes", "search", {"query": "timeouts"}), ("notes", "read_note", {"id": "n-2"})))
SIX_TURNS = Scenario("large table (29 tools), 6 tool turns", LARGE, (
    ("office", "calendar_find_events", {"query": "planning", "date": "2026-05-04"}),
    ("office", "mail_search_messages", {"query": "budget"}),
    ("office", "files_search_documents", {"query": "budget 2026"}),
    ("office", "contacts_lookup_person", {"person": "ana@example.com"}),
    ("notes", "read_note", {"id": "n-2"}),
    ("tickets", "search", {"query": "login"})))
LONG_RESULTS = Scenario("large table, four 2,000-token results", LARGE, tuple(
    ("office", "reports_export_report", {"query": topic}) for topic in ("sales", "hiring", "support", "finance")))
LIST_CHANGE = Scenario("large table, a tool added mid-run", ("tickets", "notes", "office"), (
    ("tickets", "install_plugin", {}), ("tickets", "plugin.weekly_report", {}),
    ("office", "calendar_find_events", {"query": "weekly report"})), changes_list="install_plugin")
SCENARIOS = (SMALL, SIX_TURNS, LONG_RESULTS, LIST_CHANGE)


def specs(aliases: Tuple[str, ...], office_tools: int = 14) -> List[ServerSpec]:
    def argv(alias: str) -> Tuple[str, ...]:
        return (str(SERVERS[alias]), "--tools", str(office_tools)) if alias == "office" else (str(SERVERS[alias]),)
    return [ServerSpec(alias, sys.executable, argv(alias), {}, str(ROOT)) for alias in aliases]


def moves(scenario: Scenario, mode: str) -> List[Tuple[str, Json]]:
    """The model's tool calls, turn by turn, in the given mode."""
    found: List[Tuple[str, Json]] = []
    for alias, tool, arguments in scenario.calls:
        name = model_tool_name(alias, tool)
        if mode == "full":
            found.append((name, arguments))
            continue
        query = " ".join(tool.replace(".", "_").split("_"))
        found += [(SEARCH, {"query": query}), (INSPECT, {"name": name}),
                  (CALL, {"name": name, "arguments": arguments})]
    return found


class StandIn:
    """The model API: the scripted model's next move, billed by that API's cache rules."""

    def __init__(self, api: str, script: List[Tuple[str, Json]]) -> None:
        self.api = api
        self.script = script
        self.cache: Union[AnthropicCache, OpenAICache] = AnthropicCache() if api == "anthropic" else OpenAICache()
        self.usages: List[Json] = []  # each request's, as reported
        self.tables: List[List[str]] = []  # each request's tool names, in order

    def reply(self, body: Json) -> Reply:
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        move = self.script[turn] if turn < len(self.script) else None
        try:
            usage = self.cache.usage(body)
        except TooManyBreakpoints as exc:
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": str(exc)}}, {}
        self.tables.append([str(t.get("name") or t.get("function", {}).get("name")) for t in body.get("tools") or []])
        return ok(self.anthropic(turn, move, usage) if self.api == "anthropic" else self.openai(turn, move, usage))

    def anthropic(self, turn: int, move: Optional[Tuple[str, Json]], usage: Json) -> Json:
        content = [{"type": "tool_use", "id": f"tu{turn}", "name": move[0], "input": move[1]}] if move \
            else [{"type": "text", "text": "Here is what I found."}]
        self.usages.append({**usage, "output_tokens": tokens(text_of(content))})
        return {"type": "message", "role": "assistant", "content": content, "usage": self.usages[-1],
                "stop_reason": "tool_use" if move else "end_turn"}

    def openai(self, turn: int, move: Optional[Tuple[str, Json]], usage: Json) -> Json:
        message: Json = {"role": "assistant", "content": None if move else "Here is what I found."}
        if move:
            message["tool_calls"] = [{"id": f"c{turn}", "type": "function",
                                      "function": {"name": move[0], "arguments": json.dumps(move[1])}}]
        self.usages.append({**usage, "completion_tokens": tokens(text_of(message))})
        return {"choices": [{"message": message, "finish_reason": "tool_calls" if move else "stop"}],
                "usage": self.usages[-1]}

    def prompt(self, index: int) -> int:
        """Request `index`'s whole prompt, in tokens."""
        usage = self.usages[index]
        if self.api == "openai":
            return int(usage["prompt_tokens"])
        return int(usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"])

    def read(self, index: int) -> int:
        """How much of request `index`'s prompt came from the cache."""
        usage = self.usages[index]
        return int(usage["prompt_tokens_details"]["cached_tokens"] if self.api == "openai"
                   else usage["cache_read_input_tokens"])


class Settled:
    """The provider, except that after a call that changes the tool list the next
    turn waits (bounded) for the table to follow, so every run sees the change at
    the same turn, as a model that takes a moment to answer always would."""

    def __init__(self, inner: ToolProvider, tools: Aggregator, changes_list: str) -> None:
        self.inner = inner
        self.tools = tools
        self.changes_list = changes_list

    @property
    def offline(self) -> Dict[str, str]:
        return self.inner.offline

    @property
    def connections(self) -> Dict[str, Any]:
        return self.inner.connections

    @property
    def guidance(self) -> str:
        return self.inner.guidance

    def model_tools(self, api: str = "anthropic") -> List[Dict[str, Any]]:
        return self.inner.model_tools(api)

    def route(self, name: str, arguments: Any) -> Optional[ToolEntry]:
        return self.inner.route(name, arguments)

    async def call(self, name: str, arguments: Any = None, *,
                   on_progress: Optional[ProgressHandler] = None) -> Json:
        before = self.tools.version
        result = await self.inner.call(name, arguments, on_progress=on_progress)
        entry = self.inner.route(name, arguments)
        if entry is not None and entry.original_name == self.changes_list:
            await self.tools.wait_for_change(before, SETTLE)
        return result


@dataclass
class CostRun:
    scenario: str
    mode: str
    api: str
    bill: Bill
    run: AgentRun
    stand_in: StandIn
    errors: List[str] = field(default_factory=list)  # tool results that were errors (there should be none)

    @property
    def fraction(self) -> float:
        """Billed over uncached: what caching left of the bill."""
        return self.bill.billed / self.bill.uncached


def model_for(api: str, url: str) -> Model:
    if api == "anthropic":
        return AnthropicModel("stand-in-key", "claude-stand-in", url)
    return OpenAIModel("gpt-stand-in", url + "/v1", "stand-in-key")


async def cost(scenario: Scenario, mode: str, api: str) -> CostRun:
    """Ask the scenario's question once, in this mode ("full", "meta", or "default":
    the one `ask` would choose), of this API's stand-in."""
    script = moves(scenario, mode)
    stand_in = StandIn(api, script)
    with FakeApi(stand_in.reply) as fake:
        async with Aggregator(config_of(specs(scenario.servers, scenario.office_tools))) as tools:
            await tools.refresh()
            if tools.offline:  # a figure for a smaller table would pass for this one
                raise RuntimeError(f"the cost run's servers did not all start: {tools.offline}")
            if mode == "default":  # as `ask` decides
                mode = "meta" if too_many(tools) else "full"
                script = moves(scenario, mode)
                stand_in.script = script
            shown: ToolProvider = tools if mode == "full" else MetaTools(tools)
            provider = Settled(shown, tools, scenario.changes_list)
            run = await run_agent("What do I need to know for the week?", provider, model_for(api, fake.url),
                                  max_steps=len(script) + 1)
    bill = bill_of(run.usage)
    if bill is None:
        raise RuntimeError(f"the stand-in's usage was not understood: {run.usage}")
    return CostRun(scenario.name, mode, api, bill, run, stand_in,
                   [f"{s.model_name}: {s.result}" for s in run.steps if s.is_error])


def read_after_change(found: CostRun) -> float:
    """How much of the last prompt before the table grew the next request read from the cache."""
    tables = found.stand_in.tables
    grown = next(i for i, names in enumerate(tables) if len(names) > len(tables[0]))
    return found.stand_in.read(grown) / found.stand_in.prompt(grown - 1)


async def both_modes(api: str) -> List[Tuple[Scenario, CostRun, CostRun]]:
    """Every scenario, asked with the full table and with the meta-tools (the bench's cost rows)."""
    return [(scenario, await cost(scenario, "full", api), await cost(scenario, "meta", api))
            for scenario in SCENARIOS]


# -- where the meta-tools start to pay: `python -m checks.dev.cost` ----------------------

SHORT_CALLS: Tuple[Call, ...] = (
    ("notes", "read_note", {"id": "n-2"}), ("notes", "search", {"query": "timeouts"}),
    ("tickets", "search", {"query": "login"}), ("notes", "read_note", {"id": "n-3"}),
    ("tickets", "search", {"query": "page"}), ("notes", "read_note", {"id": "n-1"}))
QUESTION_CALLS = (1, 2, 3, 6)
OFFICE_SIZES = (0, 2, 4, 6, 8, 10, 14, 20)  # workplace tools beside notes and tickets: about 1,000 to 6,400 tokens


async def crossover(api: str) -> List[Tuple[int, Dict[int, float]]]:
    """For tables of growing size: (the table's tokens, {calls a question needs: meta-tools' bill / full table's})."""
    found = []
    for size in OFFICE_SIZES:
        ratios: Dict[int, float] = {}
        for calls in QUESTION_CALLS:
            question = Scenario(f"{calls} calls", LARGE, SHORT_CALLS[:calls], office_tools=size)
            full, meta = await cost(question, "full", api), await cost(question, "meta", api)
            ratios[calls] = meta.bill.billed / full.bill.billed
        found.append((await table_tokens(LARGE, size), ratios))
    return found


async def table_tokens(aliases: Tuple[str, ...], office_tools: int = 14) -> int:
    """The full table's size in tokens, in the Messages API's shape."""
    async with Aggregator(config_of(specs(aliases, office_tools))) as tools:
        await tools.refresh()
        return tokens(json.dumps(tools.model_tools()))


async def sweep() -> None:
    print(f"meta-tools' bill / the full table's, by the calls a question needs "
          f"(below 1: the meta-tools are cheaper); `ask` switches past {threshold():,} tokens")
    for api in APIS:
        print(f"{api:>10}  table tokens  " + "  ".join(f"{calls} call{'s' * (calls > 1)}" for calls in QUESTION_CALLS))
        for size, ratios in await crossover(api):
            print(f"{'':>10}  {size:>12,}  " + "  ".join(f"{ratios[c]:>{6 + (c > 1)}.2f}" for c in QUESTION_CALLS),
                  flush=True)


def threshold() -> int:
    """The table size in tokens past which `ask` gives the model the meta-tools."""
    return int(tool_share() * CONTEXT_WINDOW)


if __name__ == "__main__":
    import anyio

    anyio.run(sweep)
