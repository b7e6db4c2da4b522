"""An SSE body cut into events, however the network splits its bytes."""

from __future__ import annotations

import tracemalloc
from typing import Iterator, List

import anyio
import pytest
from hypothesis import given, strategies as st

from solution.remote.http_client import parsed
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


PENDING = 1 << 20  # a line this long, still open, is what a per-piece copy would copy


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    yield
    tracemalloc.stop()


def rose_by_more_than(size: int) -> bool:
    """Whether memory peaked more than `size` above where it stands now, since the last
    look: a copy of that much was made and let go. Starts the next look."""
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    return peak - current > size


def test_a_long_line_in_one_byte_pieces_is_not_copied_for_each_piece(traced: None) -> None:
    stream = EventStream()
    stream.feed(b"data: " + b"x" * PENDING)
    rose_by_more_than(0)
    copies = 0
    for _ in range(200):
        stream.feed(b"x")
        copies += rose_by_more_than(PENDING // 2)
    assert copies <= 2  # a buffer grown in place moves now and then, never on every piece (was 200)
    assert stream.feed(b"\n\n") == [Event("x" * (PENDING + 200))]


class Watched(EventStream):
    """Counts the lines before which the parser copied more than half of what it was given."""

    copies = 0

    def _line(self, line: str) -> "Event | None":
        Watched.copies += rose_by_more_than(PENDING // 4)
        return super()._line(line)


def test_many_lines_in_one_chunk_are_cut_out_without_copying_the_rest_each_time(traced: None) -> None:
    lines = b"data: " + b"y" * 57 + b"\n\n"  # 64 bytes: an event
    chunk = lines * (PENDING // 2 // len(lines))
    stream = Watched()
    rose_by_more_than(0)
    events = stream.feed(chunk)
    assert len(events) == len(chunk) // len(lines)
    assert Watched.copies <= 2  # the chunk taken in once; before, the rest was copied after every line


@pytest.mark.anyio
async def test_a_chunk_of_many_lines_lets_other_tasks_run_while_it_is_parsed() -> None:
    """A listen stream of blank lines must not hold up the client's other requests."""
    order: List[str] = []

    async def another() -> None:
        order.append("another task ran")

    async with anyio.create_task_group() as group:
        group.start_soon(another)
        events = await parsed(EventStream(), b"\n" * 65536 + b"data: x\n\n")
        order.append("the chunk was parsed")
    assert events == [Event("x")]
    assert order == ["another task ran", "the chunk was parsed"]
