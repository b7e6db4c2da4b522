"""A call the reference makes: input_required rounds answered, then the result checked."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from solution.task_calls.tool_call import MAX_INPUT_ROUNDS, call_with_tasks
from solution.tests.test_tool_calls import DONE, ENTRY, Replies, text


@pytest.mark.anyio
async def test_a_state_only_round_is_echoed_once() -> None:
    server = Replies({"resultType": "input_required", "requestState": "opaque-1"}, DONE)
    assert await call_with_tasks(server, ENTRY, {}) == DONE
    assert server.sent[1] == {"name": "count", "arguments": {}, "requestState": "opaque-1"}


@pytest.mark.anyio
async def test_a_request_for_real_input_is_an_error_the_model_reads() -> None:
    ask = {"resultType": "input_required", "requestState": "s",
           "inputRequests": {"q": {"method": "elicitation/create", "params": {}}}}
    result = await call_with_tasks(Replies(ask), ENTRY, {})
    assert result["isError"] and "elicitation/create" in text(result) and "cannot give" in text(result)


@pytest.mark.anyio
async def test_rounds_that_never_end_are_given_up() -> None:
    again = {"resultType": "input_required", "requestState": "s"}
    server = Replies(*[again] * (MAX_INPUT_ROUNDS + 1))
    result = await call_with_tasks(server, ENTRY, {})
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
    assert await call_with_tasks(server, ENTRY, {}) == DONE
    assert asked[0].message == "How many?" and asked[0].fields[0].kind == "integer"
    assert server.sent[1] == {"name": "count", "arguments": {}, "requestState": "s1",
                              "inputResponses": {"q1": {"action": "accept", "content": {"n": 3}}}}
