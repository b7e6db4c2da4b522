from __future__ import annotations

import json
import tracemalloc
from typing import Any

import pytest

from solution.jsonrpc import MAX_DEPTH, PendingRequests, encode, nesting, parse_line


def test_encode_makes_one_line_even_for_text_with_newlines() -> None:
    data = encode({"jsonrpc": "2.0", "id": 1, "params": {"text": "a\nb", "name": "café"}})
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert json.loads(data)["params"] == {"text": "a\nb", "name": "café"}


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1,2]", b'"text"', b"42", b"\xff\xfe", b'{"a":'])
def test_parse_line_returns_none_for_anything_but_an_object(raw: bytes) -> None:
    assert parse_line(raw) is None


def test_parse_line_reads_an_object() -> None:
    assert parse_line(b'{"jsonrpc":"2.0","id":3,"result":{}}') == {"jsonrpc": "2.0", "id": 3, "result": {}}


def depth_of(value: Any) -> int:
    """How deep a parsed value nests (the measure nesting() takes from the bytes)."""
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    return 0


@pytest.mark.parametrize("value", [
    [[[[]]]] * 30, {"a": [{"b": "[[[[{{{{"}] * 30, "c": [[["]]]]"]]]},
    ["\\", ["\\\"[", [["\"]]"]]]] * 25, [[["x\\"], "\\\\\"", "{[\"]"]] * 25,
    [[[[[[[[[[0]]]]]]]]]] * 10])
def test_nesting_counts_brackets_outside_strings_whatever_the_escapes(value: Any) -> None:
    line = json.dumps(value).encode()
    assert line.count(b"[") + line.count(b"{") > MAX_DEPTH  # past the quick answer: the scan itself
    assert nesting(line) == depth_of(value)


def test_nesting_stops_reading_once_the_line_is_too_deep_to_take() -> None:
    assert nesting(b"[" * 10_000) == MAX_DEPTH + 1


def test_measuring_a_16_mib_line_of_brackets_and_strings_costs_a_small_multiple_of_it() -> None:
    unit = b'["ab\\"c", {"k": [1, "x\\\\", "[{"]}, "plain text"],'
    line = b'{"a": [' + unit * (16 * 1024 * 1024 // len(unit)) + b'0]}'
    tracemalloc.start()
    try:
        assert nesting(line) == 5
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2.5 * len(line), f"{peak / len(line):.1f} times the line"


@pytest.mark.anyio
async def test_ids_are_fresh_and_slots_resolve_once() -> None:
    table = PendingRequests()
    first, slot = table.open("a")
    second, _ = table.open("b")
    assert first != second and len(table) == 2
    slot.resolve({"x": 1})
    slot.reject(RuntimeError("late"))  # a second answer changes nothing
    assert slot.done.is_set() and slot.result == {"x": 1} and slot.error is None
    table.close(first)
    assert table.get(first) is None and len(table) == 1


@pytest.mark.anyio
async def test_lookup_ignores_ids_of_the_wrong_type() -> None:
    table = PendingRequests()
    request_id, _ = table.open("a")
    assert table.get(True) is None and table.get(None) is None and table.get([request_id]) is None
    assert table.get(str(request_id)) is None  # "1" is not 1: we only ever send integers


@pytest.mark.anyio
async def test_fail_all_rejects_every_waiting_request() -> None:
    table = PendingRequests()
    slots = [table.open(m)[1] for m in ("a", "b")]
    table.fail_all(ConnectionError("gone"))
    assert all(isinstance(s.error, ConnectionError) for s in slots)
