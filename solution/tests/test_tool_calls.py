"""A call's second half: input_required rounds and outputSchema checks."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from solution.tool_calls import MAX_INPUT_ROUNDS, call_tool
from solution.translate import make_entry

TOOL = {"name": "count", "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
ENTRY = make_entry("s", TOOL, "mcp__s__count")
DONE = {"resultType": "complete", "content": [{"type": "text", "text": "3"}], "structuredContent": {"n": 3}}


class Replies:
    def __init__(self, *answers: Dict[str, Any]) -> None:
        self.answers = list(answers)
        self.sent: List[Dict[str, Any]] = []

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                      timeout: Optional[float] = None, allow_input_required: bool = False,
                      allow_task: bool = False, on_progress: Any = None,
                      progress_resets_timeout: bool = False) -> Dict[str, Any]:
        self.sent.append(dict(params or {}))
        return self.answers.pop(0)


def text(result: Dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


@pytest.mark.anyio
async def test_a_state_only_round_is_echoed_once() -> None:
    server = Replies({"resultType": "input_required", "requestState": "opaque-1"}, DONE)
    assert await call_tool(server, ENTRY, {}) == DONE
    assert server.sent[1] == {"name": "count", "arguments": {}, "requestState": "opaque-1"}


@pytest.mark.anyio
async def test_a_request_for_real_input_is_an_error_the_model_reads() -> None:
    ask = {"resultType": "input_required", "requestState": "s",
           "inputRequests": {"q": {"method": "elicitation/create", "params": {}}}}
    result = await call_tool(Replies(ask), ENTRY, {})
    assert result["isError"] and "elicitation/create" in text(result) and "cannot give" in text(result)


@pytest.mark.anyio
async def test_rounds_that_never_end_are_given_up() -> None:
    again = {"resultType": "input_required", "requestState": "s"}
    server = Replies(*[again] * (MAX_INPUT_ROUNDS + 1))
    result = await call_tool(server, ENTRY, {})
    assert result["isError"] and f"{MAX_INPUT_ROUNDS} times in a row" in text(result)
    assert len(server.sent) == MAX_INPUT_ROUNDS + 1 and not server.answers


@pytest.mark.anyio
async def test_a_question_goes_to_the_elicitor_and_its_answer_goes_back_with_the_state() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}
    ask = {"resultType": "input_required", "requestState": "s1",
           "inputRequests": {"q1": {"method": "elicitation/create",
                                    "params": {"message": "How many?", "requestedSchema": schema}}}}
    server = Replies(ask, DONE)
    asked: List[Any] = []

    async def person(question: Any) -> Dict[str, Any]:
        asked.append(question)
        return {"action": "accept", "content": {"n": 3}}
    server.elicitor = person  # type: ignore[attr-defined]
    assert await call_tool(server, ENTRY, {}) == DONE
    assert asked[0].message == "How many?" and asked[0].fields[0].kind == "integer"
    assert server.sent[1] == {"name": "count", "arguments": {}, "requestState": "s1",
                              "inputResponses": {"q1": {"action": "accept", "content": {"n": 3}}}}


@pytest.mark.anyio
@pytest.mark.parametrize("structured, words", [({"n": "three"}, "'three' is not of type 'integer' (at n)"),
                                               ({}, "'n' is a required property")])
async def test_structured_output_that_breaks_the_schema_becomes_an_error(structured: Any, words: str) -> None:
    result = await call_tool(Replies(dict(DONE, structuredContent=structured)), ENTRY, {})
    assert result["isError"] and words in text(result) and "The server's text was: 3" in text(result)


@pytest.mark.anyio
async def test_missing_structured_output_is_an_error_but_an_iserror_result_passes() -> None:
    bare = {"content": [{"type": "text", "text": "3"}]}
    assert "no structuredContent" in text(await call_tool(Replies(bare), ENTRY, {}))
    failed = {"content": [{"type": "text", "text": "nope"}], "isError": True}
    assert await call_tool(Replies(failed), ENTRY, {}) == failed


def test_a_result_whose_content_is_not_a_list_of_blocks_is_an_error() -> None:
    from solution.tool_calls import checked_output
    entry = make_entry("s", {"name": "t", "inputSchema": {"type": "object"}}, "t")
    for content in ("a string, not blocks", ["a string in a list"], {"type": "text"}):
        result = checked_output(entry, {"content": content})
        assert result["isError"] and "content is not a list of blocks" in result["content"][0]["text"]
    assert checked_output(entry, {"content": [{"type": "text", "text": "ok"}]})["content"][0]["text"] == "ok"
