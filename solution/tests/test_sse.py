"""An SSE body cut into events, however the network splits its bytes."""

from __future__ import annotations

from typing import List

import pytest
from hypothesis import given, strategies as st

from solution.sse import Event, EventStream, EventTooLarge

BODY = (b": keep-alive\r\n\r\nid: e-1\nretry: 500\ndata: \n\n"
        b"event: message\r\nid: e-2\r\ndata: {\"a\":\r\ndata:  1}\r\n\r\n"
        b"data:{\"b\":2}\r\rdata: x\ndata: y\nfield-we-do-not-know: z\n\n")
EXPECTED = [Event("", "message", "e-1"), Event('{"a":\n 1}', "message", "e-2"), Event('{"b":2}', "message", "e-2"), Event("x\ny", "message", "e-2")]


def parse(chunks: List[bytes]) -> "tuple[List[Event], EventStream]":
    stream = EventStream()
    return [event for chunk in chunks for event in stream.feed(chunk)], stream


def test_events_fields_and_line_ends() -> None:
    events, stream = parse([BODY])
    assert events == EXPECTED
    assert stream.last_id == "e-2" and stream.retry_ms == 500


def test_a_priming_event_sets_id_and_retry_and_carries_no_message() -> None:
    events, stream = parse([b"id: event-1\nretry: 500\ndata: \n\n"])  # empty data: the client skips it
    assert events == [Event("", "message", "event-1")] and stream.last_id == "event-1" and stream.retry_ms == 500
    assert parse([b"id: event-2\n\n"])[0] == []  # no data line at all: no event


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=12))
def test_any_split_of_the_bytes_gives_the_same_events(cuts: List[int]) -> None:
    points = sorted(set(cuts))
    chunks = [BODY[a:b] for a, b in zip([0, *points], [*points, len(BODY)])]
    assert parse(chunks)[0] == EXPECTED


def test_a_retry_that_is_not_digits_and_an_id_with_nul_are_ignored() -> None:
    _, stream = parse([b"retry: soon\nid: a\x00b\ndata: 1\n\n"])
    assert stream.retry_ms is None and stream.last_id is None


def test_an_event_that_never_ends_is_refused_at_the_limit() -> None:
    stream = EventStream(limit=1000)
    with pytest.raises(EventTooLarge):
        for _ in range(100):
            stream.feed(b"data: " + b"x" * 50 + b"\n")
    with pytest.raises(EventTooLarge):
        EventStream(limit=1000).feed(b"data: " + b"y" * 2000)
