"""Real model APIs, played by a loopback fake: shapes, loop, retries, errors."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from typing import Any, Dict, List

import pytest

from solution.agent import run_agent
from solution.host.aggregator import Aggregator
from solution.model_apis import AnthropicModel, HttpSettings, OpenAIModel, choose_model, tool_message_content, tool_result_content
from solution.host.breaker import Breaker
from solution.config import config_of
from solution.errors import ModelApiError
from solution.mock_model import MockModel
from solution.model import Message, ToolCall
from solution.tests.conftest import ROOT
from solution.tests.fake_api import FakeApi, ok

FAST = HttpSettings(timeout=5.0, retries=2, backoff=0.0)


def anthropic(url: str, http: HttpSettings = FAST) -> AnthropicModel:
    return AnthropicModel("test-key", "claude-test", url, http=http)


def openai(url: str, http: HttpSettings = FAST) -> OpenAIModel:
    return OpenAIModel("gpt-test", url + "/v1", "sk-test", http=http)


def tool_use(name: str, arguments: Dict[str, Any], call_id: str = "tu1") -> Dict[str, Any]:
    return {"content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}],
            "usage": {"input_tokens": 10, "output_tokens": 3}}


def text(answer: str) -> Dict[str, Any]:
    return {"content": [{"type": "text", "text": answer}], "usage": {"input_tokens": 20, "output_tokens": 4}}


def openai_call(name: str, arguments: str, call_id: str = "c1") -> Dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 2}}


def openai_text(answer: str) -> Dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": answer}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5}}


@pytest.mark.anyio
async def test_anthropic_loop_end_to_end(fixture: Any) -> None:
    notes = fixture("notes")
    with FakeApi([ok(tool_use("mcp__notes__read_note", {"id": "n-9"})), ok(text("No such note."))]) as api:
        async with Aggregator(config_of([notes.spec])) as tools:
            await tools.refresh()
            run = await run_agent("Read note n-9", tools, anthropic(api.url))
    first, second = api.requests
    assert first[0] == "/v1/messages"
    assert first[1]["x-api-key"] == "test-key" and first[1]["anthropic-version"] == "2023-06-01"
    body = first[2]
    assert {t["name"] for t in body["tools"]} == {"mcp__notes__search", "mcp__notes__read_note",
                                                    "mcp__notes__add_note"}
    assert all(set(t) - {"cache_control"} == {"name", "description", "input_schema"} for t in body["tools"])
    assert "untrusted" in body["system"][0]["text"]
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Read note n-9", "cache_control": {"type": "ephemeral"}}]}]
    assert [c["name"] for c in notes.calls()] == ["read_note"]  # the original name reached the server
    result = second[2]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "tu1" and result["is_error"] is True
    assert "No note with id 'n-9'" in result["content"][0]["text"]
    assert second[2]["messages"][1]["content"][0]["type"] == "tool_use"
    assert run.answer == "No such note." and run.usage == {"input_tokens": 30, "output_tokens": 7}


@pytest.mark.anyio
async def test_openai_loop_end_to_end(fixture: Any) -> None:
    tickets = fixture("tickets")
    with FakeApi([ok(openai_call("mcp__tickets__search", '{"query": "login"}')),
                  ok(openai_text("T-101 is about the login page."))]) as api:
        async with Aggregator(config_of([tickets.spec])) as tools:
            await tools.refresh()
            run = await run_agent("Any login tickets?", tools, openai(api.url))
    first, second = api.requests
    assert first[0] == "/v1/chat/completions" and first[1]["authorization"] == "Bearer sk-test"
    assert all(t["type"] == "function" and set(t["function"]) == {"name", "description", "parameters"}
               for t in first[2]["tools"])
    assert first[2]["messages"][0]["role"] == "system"
    assert tickets.calls()[0]["name"] == "search" and tickets.calls()[0]["arguments"] == {"query": "login"}
    reply = second[2]["messages"][-1]
    assert reply["role"] == "tool" and reply["tool_call_id"] == "c1" and "T-101" in reply["content"]
    assert second[2]["messages"][-2]["tool_calls"][0]["function"]["arguments"] == '{"query": "login"}'
    assert run.answer.startswith("T-101") and run.usage == {"prompt_tokens": 21, "completion_tokens": 7}


@pytest.mark.anyio
async def test_broken_argument_json_reaches_the_model_as_an_error(fixture: Any) -> None:
    notes = fixture("notes")
    with FakeApi([ok(openai_call("mcp__notes__search", "{not json")), ok(openai_text("sorry"))]) as api:
        async with Aggregator(config_of([notes.spec])) as tools:
            await tools.refresh()
            await run_agent("x", tools, openai(api.url))
    assert api.bodies()[1]["messages"][-1]["content"].startswith("[tool error] ")
    assert notes.calls() == []


@pytest.mark.anyio
async def test_the_loop_stops_at_its_step_limit_with_a_real_api(fixture: Any) -> None:
    notes = fixture("notes")
    with FakeApi(lambda body: ok(tool_use("mcp__notes__search", {"query": "x"}))) as api:
        async with Aggregator(config_of([notes.spec])) as tools:
            await tools.refresh()
            run = await run_agent("x", tools, anthropic(api.url), max_steps=2)
    assert run.stopped_at_limit and len(api.requests) == 2 and len(notes.calls()) == 2


@pytest.mark.anyio
async def test_a_server_lost_mid_run_is_news_after_the_breakpoints_not_a_new_system_prompt(fixture: Any) -> None:
    notes, crashy = fixture("notes"), fixture("misbehave", "crashy", "--scenario", "die-mid-call")
    with FakeApi([ok(tool_use("mcp__crashy__echo", {"text": "hi"})), ok(text("It is gone."))]) as api:
        async with Aggregator(config_of([notes.spec, crashy.spec])) as tools:
            tools.breaker = Breaker(threshold=1)  # the first lost connection pauses it
            await tools.refresh()
            await run_agent("echo hi", tools, anthropic(api.url))
    first, second = api.bodies()
    assert second["system"] == first["system"] and "offline" not in json.dumps(first["system"])
    blocks = second["messages"][-1]["content"]
    assert [b["type"] for b in blocks] == ["tool_result", "text"] and "cache_control" in blocks[1]
    assert "'crashy' is offline" in blocks[1]["text"] and "untrusted" in blocks[1]["text"]


def test_news_reaches_each_api_as_the_client_s_words_after_the_tool_results() -> None:
    from solution.model_apis import anthropic_messages, openai_messages
    conversation = [Message("user", "q"), Message("assistant", tool_calls=[ToolCall("a", "x", {})]),
                    Message("tool", tool_call_id="a", result={"content": []}), Message("note", "n is back")]
    assert anthropic_messages(conversation)[-1]["content"][-1] == {"type": "text", "text": "n is back"}
    assert openai_messages("s", conversation)[-1] == {"role": "user", "content": "n is back"}
    assert anthropic_messages(conversation[:1] + conversation[3:])[-1] == \
        {"role": "user", "content": [{"type": "text", "text": "n is back"}]}


async def turn(model: Any) -> Any:
    return await model.next_turn("sys", [], [Message("user", "hi")])


@pytest.mark.anyio
async def test_429_then_200_is_retried_honouring_retry_after() -> None:
    with FakeApi([(429, {"error": {"message": "slow down"}}, {"retry-after": "0"}), ok(text("hello"))]) as api:
        assert (await turn(anthropic(api.url))).text == "hello"
    assert len(api.requests) == 2


@pytest.mark.anyio
async def test_server_errors_are_retried_then_reported() -> None:
    with FakeApi([(503, {"error": {"message": "overloaded"}}, {})] * 3) as api:
        with pytest.raises(ModelApiError, match="HTTP 503: overloaded"):
            await turn(anthropic(api.url))
    assert len(api.requests) == 3


@pytest.mark.anyio
@pytest.mark.parametrize("status, body, words", [
    (401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
     "API key was refused (HTTP 401); check ANTHROPIC_API_KEY"),
    (404, {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-test"}},
     "unknown model 'claude-test'"),
    (400, {"type": "error", "error": {"type": "invalid_request_error",
                                      "message": "tools.1.name: String should match pattern"}},
     "rejected tool 'second' (tools.1): tools.1.name: String should match pattern"),
    (400, {"type": "error", "error": {"message": "max_tokens: must be positive"}},
     "rejected the request: max_tokens: must be positive"),
])
async def test_client_errors_are_one_clear_line(status: int, body: Dict[str, Any], words: str) -> None:
    tools = [{"name": "first", "description": "", "input_schema": {}},
             {"name": "second", "description": "", "input_schema": {}}]
    with FakeApi([(status, body, {})]) as api:
        with pytest.raises(ModelApiError) as caught:
            await anthropic(api.url).next_turn("s", tools, [Message("user", "hi")])
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert len(api.requests) == 1  # client errors are not retried


@pytest.mark.anyio
async def test_openai_400_names_the_rejected_tool_from_param() -> None:
    tools = [{"type": "function", "function": {"name": "bad.name", "parameters": {}}}]
    body = {"error": {"message": "Invalid 'tools[0].function.name'", "param": "tools[0].function.name"}}
    with FakeApi([(400, body, {})]) as api:
        with pytest.raises(ModelApiError, match=r"rejected tool 'bad.name' \(tools\[0\].function.name\)"):
            await openai(api.url).next_turn("s", tools, [Message("user", "hi")])


@pytest.mark.anyio
async def test_a_stalled_response_times_out() -> None:
    with FakeApi([], stall=True) as api:
        with pytest.raises(ModelApiError, match="no response within 0.3 s"):
            await turn(anthropic(api.url, HttpSettings(timeout=0.3, retries=0)))


@pytest.mark.anyio
async def test_an_unreachable_api_is_named() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ModelApiError, match="cannot reach http://127.0.0.1"):
        await turn(openai(f"http://127.0.0.1:{port}", HttpSettings(timeout=2, retries=0)))


def test_content_blocks_map_to_what_each_api_accepts() -> None:
    result = {"content": [{"type": "text", "text": "t"}, {"type": "image", "data": "aGk=", "mimeType": "image/gif"},
                          {"type": "resource_link", "uri": "file:///a", "name": "a"},
                          {"type": "resource", "resource": {"uri": "file:///b", "text": "inside"}},
                          {"type": "audio", "data": "x", "mimeType": "audio/wav"}], "isError": True}
    blocks = tool_result_content(result)
    assert blocks[1] == {"type": "image", "source": {"type": "base64", "data": "aGk=", "media_type": "image/gif"}}
    assert [b.get("text") for b in blocks[2:]] == ["[resource link: a file:///a]", "[embedded resource file:///b]\ninside",
                                            "[audio content not shown]"]
    flat = tool_message_content(result)
    assert flat.startswith("[tool error] t\n[image content not shown]") and "inside" in flat


def marks(body: Dict[str, Any]) -> List[str]:
    """Where a Messages API request carries cache_control, in prompt order."""
    found = [f"tool {t['name']}" for t in body["tools"] if "cache_control" in t]
    found += ["system" for b in body["system"] if "cache_control" in b]
    for number, message in enumerate(body["messages"]):
        content = message["content"] if isinstance(message["content"], list) else []
        found += [f"message {number} block {i}" for i, b in enumerate(content) if "cache_control" in b]
    return found


def test_the_prompt_is_marked_for_caching_after_the_table_the_system_and_the_conversation() -> None:
    model = anthropic("http://127.0.0.1:9")
    table = [{"name": n, "description": "", "input_schema": {"type": "object"}} for n in ("a", "b")]
    calls = [ToolCall(f"t{i}", "a", {}) for i in range(12)]  # 24 blocks in one turn: past the API's look-back
    conversation = [Message("user", "q"), Message("assistant", "x", [ToolCall("t", "a", {})]),
                    Message("tool", tool_call_id="t", result={"content": []}), Message("assistant", "", calls),
                    *[Message("tool", tool_call_id=c.id, result={"content": []}) for c in calls]]
    assert marks(model.request_body("sys", table, conversation[:1])) == ["tool b", "system", "message 0 block 0"]
    body = model.request_body("sys", table, conversation)
    # The last block, and where the previous request ended: four marks, the API's limit.
    assert marks(body) == ["tool b", "system", "message 2 block 0", "message 4 block 11"]
    assert marks(model.request_body("", [], conversation[:1])) == ["message 0 block 0"]
    assert body["messages"][0] == {"role": "user", "content": "q"}  # unmarked, as the previous request sent it


def test_consecutive_tool_results_share_one_user_message() -> None:
    from solution.model_apis import anthropic_messages as to_messages
    wire = to_messages([Message("user", "q"),
                        Message("assistant", tool_calls=[ToolCall("a", "x", {}), ToolCall("b", "y", {})]),
                        Message("tool", tool_call_id="a", result={"content": []}),
                        Message("tool", tool_call_id="b", result={"content": []})])
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in wire[2]["content"]] == ["a", "b"]


def test_the_model_is_chosen_from_the_environment() -> None:
    assert isinstance(choose_model({"MOCK": "1", "ANTHROPIC_API_KEY": "k"})[0], MockModel)
    model, note = choose_model({"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MODEL": "m", "OPENAI_API_KEY": "o"})
    assert isinstance(model, AnthropicModel) and model.model == "m" and "ANTHROPIC_API_KEY" in note
    model, note = choose_model({"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_MODEL": "llama"})
    assert isinstance(model, OpenAIModel) and "authorization" not in model.endpoint.headers
    assert "127.0.0.1:1" in note
    model, note = choose_model({})
    assert isinstance(model, MockModel) and "no model API is configured" in note


def picks_read_note(body: Dict[str, Any]) -> Any:
    """A fake model that reads the table it was sent, like a real one would."""
    messages: List[Dict[str, Any]] = body["messages"]
    if messages[-1]["role"] == "tool":
        return ok(openai_text("Answer: " + messages[-1]["content"].split("\n")[0]))
    name = next(t["function"]["name"] for t in body["tools"] if "read_note" in t["function"]["name"])
    return ok(openai_call(name, '{"id": "n-2"}'))


def real_env(url: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "MOCK"))}
    return {**env, "OPENAI_BASE_URL": url + "/v1", "OPENAI_MODEL": "fake-model"}


def test_ask_from_the_command_line_against_an_openai_compatible_fake() -> None:
    with FakeApi(picks_read_note) as api:
        done = subprocess.run([sys.executable, "-m", "solution", "ask", "Read note n-2", "--json"],
                              capture_output=True, text=True, timeout=60, cwd=ROOT, env=real_env(api.url))
    assert done.returncode == 0, done.stderr
    transcript = json.loads(done.stdout)
    assert "fake-model" in transcript["model"] and transcript["answer"] == "Answer: Timeouts"
    step = transcript["steps"][0]
    assert (step["model_name"], step["alias"], step["original_name"]) == \
        ("mcp__notes__read_note", "notes", "read_note")
    assert transcript["usage"] == {"prompt_tokens": 21, "completion_tokens": 7}


def test_a_model_api_error_on_the_command_line_is_one_line_and_exit_2() -> None:
    with FakeApi(lambda body: (401, {"error": {"message": "bad key"}}, {})) as api:
        done = subprocess.run([sys.executable, "-m", "solution", "ask", "hi"], capture_output=True,
                              text=True, timeout=60, cwd=ROOT, env=real_env(api.url))
    assert done.returncode == 2 and "API key was refused (HTTP 401)" in done.stderr
    assert "Traceback" not in done.stderr


def test_checks_item_9_uses_the_configured_model() -> None:
    with FakeApi(picks_read_note) as api:
        done = subprocess.run([sys.executable, "-m", "checks", "--target", "solution", "--json"],
                              capture_output=True, text=True, timeout=120, cwd=ROOT, env=real_env(api.url))
    report = json.loads(done.stdout)
    assert "fake-model" in report["model"] and report["items"][8]["status"] == "pass"
    assert len(api.requests) == 2
