"""The fixtures' command line (switches.py): argparse's reading, defaults from the
environment read at each parse, and a bad switch refused in one line."""

from __future__ import annotations

import os
from typing import List
from unittest import mock

import pytest

from servers.switches import parse_options, parser
from servers.tests.conftest import run_server


def test_the_command_lines_the_judge_writes_are_read_as_written() -> None:
    options = parse_options("notes", ["--journal", "/tmp/x-0.jsonl", "--evidence", "/tmp/e.sock", "--hold",
                                      "read_note", "--hold", "search", "--fail=never-answer", "--delay", "0.15",
                                      "--inline", "--auth", "--unknown-session", "400", "--page-size", "1"])
    assert (options.journal, options.evidence, options.hold) == ("/tmp/x-0.jsonl", "/tmp/e.sock", ["read_note", "search"])
    assert (options.fail, options.delay, options.inline, options.auth) == ("never-answer", 0.15, True, "ask")
    assert (options.unknown_session, options.page_size, options.era) == (400, 1, "current")


def test_switch_values_are_read_into_what_they_stand_for() -> None:
    options = parse_options("notes", ["--latency", "read_note=0.2", "--annotations", "search=null",
                                      "--annotations", 'read_note={"readOnlyHint": 1}',
                                      "--add-tool", "weekly report", "--add-tool", 'résumé={"type": "object"}'])
    assert options.latency == {"read_note": 0.2}
    assert options.annotations == [("search", None), ("read_note", {"readOnlyHint": 1})]
    assert [(tool.name, tool.input_schema) for tool in options.add_tool] == [
        ("weekly report", {"type": "object", "additionalProperties": False}), ("résumé", {"type": "object"})]


def test_a_default_that_reads_the_environment_is_read_at_each_parse() -> None:
    with mock.patch.dict(os.environ, {"MCP_LAB_ERA": "legacy", "MCP_LAB_INLINE": "1",
                                      "MCP_LAB_LATENCY": "search=1,read_note=0.5"}):
        options = parse_options("notes", ["--latency", "search=3"])
    assert options.era == "legacy" and options.inline is True
    assert options.latency == {"search": 1.0, "read_note": 0.5}  # the environment's word is the last
    with mock.patch.dict(os.environ, {"MCP_LAB_ERA": "", "MCP_LAB_INLINE": "", "MCP_LAB_LATENCY": ""}):
        options = parse_options("notes", [])
    assert options.era == "current" and options.inline is False and options.latency == {}


def test_a_negative_number_is_a_value_as_argparse_reads_it() -> None:
    assert parse_options("notes", ["--delay", "-1"]).delay == -1.0


@pytest.mark.parametrize("words, said", [
    (["--era", "bogus"], "argument --era: invalid choice: 'bogus'"),
    (["--no-such-switch"], "unrecognized arguments: --no-such-switch"),
    (["--journal"], "argument --journal: expected one argument"),
    (["--page-size", "two"], "argument --page-size: invalid int value: 'two'"),
    (["--latency", "read_note"], "argument --latency: not TOOL=SECONDS: 'read_note'"),
    (["--add-tool", "x={oops"], "argument --add-tool: the text after '=' is not JSON: '{oops'"),
    (["--annotations", "search=yes"], "argument --annotations: the text after '=' is not JSON: 'yes'"),
    (["--conformance-names"], "--conformance-names: the tickets fixture has nothing behind this switch"),
])
def test_a_bad_switch_is_refused_in_one_line_with_status_2(words: List[str], said: str) -> None:
    done = run_server("tickets", [], *words)
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 2 and done.stdout == b"" and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"python -m servers.tickets: {said}"), lines[0]


def test_a_bad_latency_in_the_environment_is_refused_naming_the_variable(capsys: pytest.CaptureFixture[str]) -> None:
    with mock.patch.dict(os.environ, {"MCP_LAB_LATENCY": "search"}), pytest.raises(SystemExit) as exited:
        parse_options("notes", [])
    assert exited.value.code == 2
    assert capsys.readouterr().err == "python -m servers.notes: MCP_LAB_LATENCY: not TOOL=SECONDS: 'search'\n"


def test_help_lists_every_switch_with_its_help_and_exits_0() -> None:
    done = run_server("notes", [], "--help")
    assert done.returncode == 0 and done.stderr == b""
    unwrapped = "".join(done.stdout.decode().split())  # argparse wraps to the terminal's width
    for action in parser("notes")._actions:
        assert action.option_strings[-1] in unwrapped and "".join((action.help or "").split()) in unwrapped
