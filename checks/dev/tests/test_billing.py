"""The stand-in bills as the providers' published rules say (the cost row is only as
good as this): breakpoints, the 1,024-token floor, the 20-block look-back, 128-token steps."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from checks.dev.billing import AnthropicCache, OpenAICache, TooManyBreakpoints

MARK = {"type": "ephemeral"}
BIG = "x" * 8000  # 2,000 tokens and a little JSON


def body(texts: List[str], marked: List[int]) -> Dict[str, Any]:
    """A Messages API request whose user message holds one text block per entry."""
    blocks: List[Dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
    for index in marked:
        blocks[index]["cache_control"] = MARK
    return {"system": "be brief", "messages": [{"role": "user", "content": blocks}]}


def test_a_breakpoint_writes_its_prefix_and_the_next_request_reads_it() -> None:
    cache = AnthropicCache()
    first = cache.usage(body([BIG, "question"], [0]))
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 2000
    again = cache.usage(body([BIG, "another question"], [0]))
    assert again["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert again["cache_creation_input_tokens"] == 0 and again["input_tokens"] == first["input_tokens"] + 2


def test_without_breakpoints_or_under_1024_tokens_nothing_is_cached() -> None:
    cache = AnthropicCache()
    for request in (body([BIG], []), body([BIG], []), body(["short"], [0]), body(["short"], [0])):
        usage = cache.usage(request)
        assert usage["cache_read_input_tokens"] == usage["cache_creation_input_tokens"] == 0


def test_a_hit_is_found_up_to_20_blocks_before_a_breakpoint_and_no_further() -> None:
    cache = AnthropicCache()
    cache.usage(body([BIG], [0]))
    near = cache.usage(body([BIG] + ["a"] * 20, [20]))
    assert near["cache_read_input_tokens"] > 2000
    cache = AnthropicCache()
    cache.usage(body([BIG], [0]))
    far = cache.usage(body([BIG] + ["a"] * 21, [21]))
    assert far["cache_read_input_tokens"] == 0


def test_cache_control_is_not_part_of_the_match_and_five_breakpoints_are_refused() -> None:
    cache = AnthropicCache()
    cache.usage(body([BIG, "q"], [0, 1]))
    moved = cache.usage(body([BIG, "q", "r"], [2]))  # the marks moved on: the blocks are the same
    assert moved["cache_read_input_tokens"] > 2000
    with pytest.raises(TooManyBreakpoints):
        cache.usage(body(["a"] * 5, [0, 1, 2, 3, 4]))


def test_openai_reads_the_longest_shared_prefix_in_128_token_steps_from_1024() -> None:
    cache = OpenAICache()
    table = [{"type": "function", "function": {"name": "t", "description": BIG}}]
    first = cache.usage({"tools": table, "messages": [{"role": "user", "content": "one"}]})
    second = cache.usage({"tools": table, "messages": [{"role": "user", "content": "two"}]})
    cached = second["prompt_tokens_details"]["cached_tokens"]
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    assert cached >= 1024 and (cached - 1024) % 128 == 0 and second["prompt_tokens"] - cached < 128 + 10
    small = OpenAICache()
    for _ in range(2):
        assert small.usage({"messages": [{"role": "user", "content": "hi"}]})["prompt_tokens_details"] == \
            {"cached_tokens": 0}
