"""A tool call's result held to its outputSchema."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from solution.tool_calls import call_tool
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
                      timeout: Optional[float] = None, on_progress: Any = None,
                      accept: Any = ("complete",)) -> Dict[str, Any]:
        self.sent.append(dict(params or {}))
        return self.answers.pop(0)


def text(result: Dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


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
