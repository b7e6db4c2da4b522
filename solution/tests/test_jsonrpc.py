from __future__ import annotations

import json

import pytest

from solution.jsonrpc import PendingRequests, encode, parse_line


def test_encode_makes_one_line_even_for_text_with_newlines() -> None:
    data = encode({"jsonrpc": "2.0", "id": 1, "params": {"text": "a\nb", "name": "café"}})
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert json.loads(data)["params"] == {"text": "a\nb", "name": "café"}


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1,2]", b'"text"', b"42", b"\xff\xfe", b'{"a":'])
def test_parse_line_returns_none_for_anything_but_an_object(raw: bytes) -> None:
    assert parse_line(raw) is None


def test_parse_line_reads_an_object() -> None:
    assert parse_line(b'{"jsonrpc":"2.0","id":3,"result":{}}') == {"jsonrpc": "2.0", "id": 3, "result": {}}


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
