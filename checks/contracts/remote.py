"""E9's contract: `EventStream._line`, one line of a server's event stream.

Each input is a list of lines (line ends already taken off, as `feed` does)
handed to a fresh stream one by one; what is observed is every event the
lines ended, then the id and retry the stream kept.
"""

from __future__ import annotations

from typing import Any, List

from checks.contracts.clause import Clause, Contract, Told
from checks.target import Target


def stream_of(package: Target, lines: List[str]) -> Told:
    stream = package.module("sse").EventStream()
    events = []
    for line in lines:
        event = stream._line(line)
        if event is not None:
            events.append(f"({getattr(event, 'event', None)!r}, {getattr(event, 'data', None)!r}, "
                          f"id {getattr(event, 'id', None)!r})")
    return Told(f"gave {'; '.join(events) or 'no event'}, then kept id {stream.last_id!r} and retry "
                f"{stream.retry_ms!r}")


def show(lines: List[str]) -> str:
    return "the lines " + ", ".join(repr(line) for line in lines)


def lines_of(st: Any, fields: List[str]) -> Any:
    value = st.one_of(st.text(max_size=8), st.sampled_from(["", " ", "  x", "{\"id\":1}", "a:b", "a: b", " a: b", "\0", "é"]))
    field_line = st.builds(lambda name, sep, v: f"{name}{sep}{v}", st.sampled_from(fields),
                           st.sampled_from([":", ": ", ":  ", ""]), value)
    other = st.sampled_from(["", "", " ", "\t", ":comment", ": keep-alive", "data", "data:", "event"])
    return st.lists(st.one_of(field_line, other), max_size=8)


def retries(st: Any) -> Any:
    digits = st.one_of(st.integers(0, 10**6).map(str),
                       st.sampled_from(["²", "٣", "１", "1.5", "-1", "+1", " 1", "1 ", "", "0x10", "1e3",
                                        "soon", "0", "007"]))
    retry = st.builds(lambda v: f"retry: {v}" if v[:1] != " " else f"retry:{v}", digits)
    return st.lists(st.one_of(retry, st.sampled_from(["data: x", "", "retry", "retry:"])), min_size=1, max_size=5)


def ids(st: Any) -> Any:
    value = st.one_of(st.text(max_size=6), st.sampled_from(["", "\0", "a\0b", "7", " 7"]))
    id_line = st.builds(lambda v: f"id: {v}", value)
    return st.lists(st.one_of(id_line, st.sampled_from(["data: x", "", "id", "id:"])), min_size=1, max_size=7)


CONTRACTS = (Contract("E9", "EventStream._line", (
    Clause("E9.1", "must end an event at a blank line and give it its data lines joined by \"\\n\" (an "
                   "event with no data line gives nothing) and its type (\"message\" when none came); "
                   "must ignore comment lines, those starting with ':'",
           "WHATWG event stream format, as MCP's Streamable HTTP uses it", stream_of, show,
           edges=(["data: a", "data: b", ""], ["event: ping", ""], [": hi", "data: x", ""],
                  ["data", ""], ["data:", "data:", ""], ["data: x", " ", "data: y", ""]),
           inputs=lambda st: lines_of(st, ["data", "event"]), count=150),
    Clause("E9.2", "must take a field's value as all after the first ':', less one space if one follows "
                   "it, and read a line with no ':' as a field with an empty value",
           "WHATWG event stream format", stream_of, show,
           edges=(["data:  two spaces", ""], ["data:x:y", ""], ["data", ""], ["event:ping", "data: 1", ""],
                  # a ': ' inside the value, after a colon with no space: only the field's own colon counts
                  ['data:{"text":"x: y"}', ""], ["event:type: x", "data: 1", ""], ["id:a: b", "data: x", ""],
                  ["data:\tx", ""], ["event: Message", "data: 1", ""]),
           inputs=lambda st: lines_of(st, ["data", "event", "id"]), count=150),
    Clause("E9.3", "must set retry only from a value made of ASCII digits and ignore any other (\"²\", "
                   "\"1.5\", \"-1\", \"\", \"soon\"), and one of more than 15 digits, leading zeros counted "
                   "(no server means a wait of over 30,000 years: RETRY_DIGITS), never raising",
           "WHATWG event stream format: retry is ASCII digits only", stream_of, show,
           edges=(["retry: 1500"], ["retry: ²"], ["retry: ٣"], ["retry: 1.5"], ["retry: -1"],
                  ["retry: "], ["retry: soon"], ["retry: 10", "retry: x"], ["retry: " + "9" * 15],
                  ["retry: " + "1" * 16], ["retry: " + "7" * 17], ["retry: " + "5" * 5000],
                  ["retry: " + "0" * 15 + "1500"]),
           inputs=retries, count=120),
    Clause("E9.4", "must keep the last id (an empty one included) across events and ignore an id that "
                   "holds a NUL",
           "WHATWG event stream format: the last event ID buffer", stream_of, show,
           edges=(["id: 7", "data: x", "", "data: y", ""], ["id: a\0b", "data: x", ""], ["id: 7", "id:", ""]),
           inputs=ids, count=120),
    Clause("E9.5", "must ignore every other field, whatever it is called (\"Data\", \"data \", \"ID\", a "
                   "name after a byte order mark: only the stream's very start may carry one), and never "
                   "raise on any line",
           "WHATWG event stream format: other fields are ignored", stream_of, show,
           edges=(["Data: x", ""], ["data : x", ""], ["ID: 3", "data: x", ""], ["\0: x", ""],
                  ["data: a", "\ufeffdata: b", ""]),
           inputs=lambda st: lines_of(st, ["Data", "data ", "ID", "Retry", "events", "x", "\0", "é"]),
           count=100),
)),)
