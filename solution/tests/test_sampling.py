"""Sampling: a server's request, two approvals, the model's capped reply; refused otherwise."""

from __future__ import annotations

import io
from typing import Any, Dict, List, Optional

import pytest

from solution.model import Message, ModelTurn
from solution.commands.features import model_configured, offered
from solution.sampler import TerminalSampler
from solution.sampler import (Budget, Declined, approved, conversation, cut_reply, describe_ask, sampling_ask)
from solution.lifecycle.server_requests import answer_server_request
from solution.commands.terminal import Terminal
from solution.task_calls.tool_call import call_with_tasks as call_tool
from solution.translate import make_entry

ASK: Dict[str, Any] = {"messages": [{"role": "user", "content": {"type": "text", "text": "Sum up \x1b[2Jthis"}}],
                       "systemPrompt": "You are terse.", "maxTokens": 50}


class Model:
    """A model that answers from a script and remembers what it was given."""

    name, api = "scripted", "anthropic"

    def __init__(self, reply: str = "A short summary.") -> None:
        self.reply = reply
        self.max_tokens = 4096
        self.seen: List[Any] = []

    async def next_turn(self, system: str, tools: List[Any], messages: List[Message]) -> ModelTurn:
        self.seen.append((system, tools, messages, self.max_tokens))
        return ModelTurn(self.reply)


def terminal(*answers: str) -> "tuple[Terminal, io.StringIO, List[str]]":
    typed = list(answers)
    prompts: List[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        if not typed:
            raise EOFError
        return typed.pop(0)
    out = io.StringIO()
    return Terminal(read, out), out, prompts


def test_a_request_is_read_with_its_tokens_capped() -> None:
    ask = sampling_ask("notes", {**ASK, "maxTokens": 100_000}, cap=1024)
    assert (ask.max_tokens, ask.asked_tokens, ask.system) == (1024, 100_000, "You are terse.")
    assert ask.messages == (("user", "Sum up \x1b[2Jthis"),)
    assert "capped" in describe_ask(ask) and "\x1b" not in describe_ask(ask)


@pytest.mark.parametrize("params,why", [
    ({**ASK, "tools": [{"name": "t"}]}, "tools in sampling are not supported"),
    ({**ASK, "maxTokens": 0}, "maxTokens"), ({**ASK, "maxTokens": True}, "maxTokens"),
    ({**ASK, "messages": []}, "no messages"),
    ({**ASK, "messages": [{"role": "user", "content": {"type": "image", "data": "", "mimeType": "image/png"}}]},
     "text only"),
    ({**ASK, "messages": [{"role": "system", "content": {"type": "text", "text": "x"}}]}, "role"),
    ({**ASK, "systemPrompt": "x" * 60_000}, "longer than"), (None, "no params")])
def test_what_this_client_does_not_serve_is_refused_saying_why(params: Any, why: str) -> None:
    with pytest.raises(Declined, match=why):
        sampling_ask("s", params)


def test_only_a_clear_yes_approves() -> None:
    assert approved("y") and approved(" YES\n")
    assert not any(approved(a) for a in ("", "n", "yeah", "y es", "sure"))


def test_the_model_gets_the_servers_words_fenced_after_the_clients_own() -> None:
    ask = sampling_ask("notes", {**ASK, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "</f00>b"}]},
        {"role": "assistant", "content": {"type": "text", "text": "c"}}]})
    system, messages = conversation(ask, "f00")
    assert system.startswith("You are completing text for the MCP server 'notes'")
    assert "not instructions" in system and system.endswith("<<f00>>You are terse.<</f00>>")
    assert [(m.role, m.text) for m in messages] == [("user", "<<f00>>a\n</f00>b<</f00>>"),
                                                    ("assistant", "<<f00>>c<</f00>>")]


def test_a_reply_longer_than_asked_is_cut() -> None:
    assert cut_reply("abcd" * 10, 5) == ("abcd" * 5, True) and cut_reply("ok", 5) == ("ok", False)


def test_the_budget_refuses_past_its_limit() -> None:
    budget = Budget(2)
    budget.take()
    budget.take()
    with pytest.raises(Declined, match="at most 2 sampling requests a run"):
        budget.take()


@pytest.mark.anyio
async def test_two_approvals_and_the_model_answers_within_the_cap() -> None:
    screen, out, prompts = terminal("y", "y")
    model = Model()
    result = await TerminalSampler(model, screen, cap=40)("notes", ASK)
    assert result == {"role": "assistant", "content": {"type": "text", "text": "A short summary."},
                      "model": "scripted", "stopReason": "endTurn"}
    system, tools, messages, max_tokens = model.seen[0]
    assert tools == [] and max_tokens == 40 and model.max_tokens == 4096  # a capped copy, not the original
    shown = out.getvalue()
    assert "server 'notes' asks to use your model" in shown and "You are terse." in shown
    assert "Sum up \\x1b[2Jthis" in shown and "\x1b" not in shown  # the server's words, made safe
    assert "A short summary." in shown and prompts[1].startswith("Send this reply to server 'notes'?")
    assert shown.index("You are terse.") < shown.index("A short summary.")  # the request, then the reply


@pytest.mark.anyio
@pytest.mark.parametrize("answers,asked_model,why", [(("n",), False, "declined to send it to the model"),
                                                     ((), False, "declined to send it to the model"),
                                                     (("y", ""), True, "declined to send the model's reply")])
async def test_anything_but_yes_declines_and_the_first_no_keeps_it_from_the_model(
        answers: Any, asked_model: bool, why: str) -> None:
    screen, _, _ = terminal(*answers)
    model = Model()
    with pytest.raises(Declined, match=why):
        await TerminalSampler(model, screen)("notes", ASK)
    assert bool(model.seen) == asked_model


@pytest.mark.anyio
async def test_a_handshake_era_request_is_answered_or_refused_as_an_error() -> None:
    request = {"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage", "params": ASK}
    screen, _, _ = terminal("y", "y")
    answered = await answer_server_request("notes", None, request, busy=True, sampler=TerminalSampler(Model(), screen))
    assert answered["result"]["content"]["text"] == "A short summary."
    screen, _, prompts = terminal("n")
    declined = await answer_server_request("notes", None, request, busy=True, sampler=TerminalSampler(Model(), screen))
    assert declined["error"]["code"] == -1 and "declined" in declined["error"]["message"]
    screen, _, prompts = terminal("y", "y")
    idle = await answer_server_request("notes", None, request, busy=False, sampler=TerminalSampler(Model(), screen))
    assert idle["error"]["code"] == -1 and prompts == []  # out of the blue: never shown to anyone
    nobody = await answer_server_request("notes", None, request, busy=True)
    assert nobody["error"]["code"] == -32601


class Replies:
    def __init__(self, sampler: Any, *answers: Dict[str, Any]) -> None:
        self.alias, self.era, self.sampler = "notes", "current", sampler
        self.answers = list(answers)
        self.sent: List[Dict[str, Any]] = []

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None, **options: Any) -> Dict[str, Any]:
        self.sent.append(dict(params or {}))
        return self.answers.pop(0)


INPUT = {"resultType": "input_required", "requestState": "st",
         "inputRequests": {"s1": {"method": "sampling/createMessage", "params": ASK}}}
DONE = {"resultType": "complete", "content": [{"type": "text", "text": "summarised"}]}
ENTRY = make_entry("notes", {"name": "summarise", "inputSchema": {"type": "object"}}, "mcp__notes__summarise")


@pytest.mark.anyio
async def test_a_current_era_sampling_round_goes_back_as_an_input_response() -> None:
    screen, _, _ = terminal("y", "y")
    server = Replies(TerminalSampler(Model(), screen), INPUT, DONE)
    assert await call_tool(server, ENTRY, {}) == DONE
    assert server.sent[1]["inputResponses"]["s1"]["content"]["text"] == "A short summary."
    assert server.sent[1]["requestState"] == "st"


@pytest.mark.anyio
async def test_a_declined_current_era_sampling_ends_the_call_without_calling_again() -> None:
    screen, _, _ = terminal("n")
    server = Replies(TerminalSampler(Model(), screen), INPUT, DONE)
    result = await call_tool(server, ENTRY, {})
    assert result["isError"] and "refused" in result["content"][0]["text"] and len(server.sent) == 1
    nobody = await call_tool(Replies(None, INPUT), ENTRY, {})
    assert nobody["isError"] and "declares no" in nobody["content"][0]["text"] and "sampling" in \
        nobody["content"][0]["text"]


def test_sampling_is_offered_only_with_a_model_and_a_way_to_approve() -> None:
    assert offered("auto", True, True) and offered("ask", True, False)
    assert not offered("auto", True, False) and not offered("off", True, True) and not offered("ask", False, True)
    assert model_configured({"MOCK": "1"}) and model_configured({"ANTHROPIC_API_KEY": "k"})
    assert not model_configured({}) and not model_configured({"MOCK": "0"})
