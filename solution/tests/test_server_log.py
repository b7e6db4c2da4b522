"""A server's log messages: filtered by level, made safe, bounded, never on stdout."""

from __future__ import annotations

from typing import List, Tuple

from solution.lifecycle.server_log import ServerLog, log_line


def test_a_message_at_or_above_the_threshold_is_one_safe_line() -> None:
    line = log_line("notes", {"level": "error", "logger": "db\x1b[2J", "data": "disk \x1b]0;owned\x07full\nnow"},
                    "warning")
    assert line == "[notes log error db\\x1b[2J] disk \\x1b]0;owned\\x07full\\nnow\n"
    assert log_line("notes", {"level": "info", "data": "x"}, "warning") is None
    assert log_line("notes", {"level": "warning", "data": "x"}, "warning") is not None


def test_structured_data_is_shown_as_json_and_an_unknown_level_counts_as_info() -> None:
    assert log_line("s", {"level": "debug", "data": {"rows": 3}}, "debug") == '[s log debug] {"rows": 3}\n'
    assert log_line("s", {"level": "loud\x1b", "data": "x"}, "info") == "[s log loud\\x1b] x\n"
    assert log_line("s", {"level": "loud", "data": "x"}, "notice") is None
    assert log_line("s", "not an object", "debug") is None


def test_a_long_message_is_cut() -> None:
    line = log_line("s", {"level": "error", "data": "x" * 5000}, "debug")
    assert line is not None and len(line) < 600 and line.endswith("…\n")


def test_a_flood_is_cut_off_with_one_line_saying_so() -> None:
    written: List[Tuple[str, str]] = []
    log = ServerLog(lambda key, text: written.append((key, text)), "debug", limit=3)
    for n in range(10):
        log("noisy", {"level": "info", "data": f"line {n}"})
    log("calm", {"level": "info", "data": "hello"})
    assert [text for _, text in written] == ["[noisy log info] line 0\n", "[noisy log info] line 1\n",
                                             "[noisy log info] line 2\n",
                                             "[noisy log] 3 lines shown; the rest are not\n",
                                             "[calm log info] hello\n"]
    assert len({key for key, _ in written}) == len(written)  # each kept, even while a prompt holds the terminal
