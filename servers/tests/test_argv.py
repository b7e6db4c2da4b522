"""The servers' command line read without argparse: whatever it reads, argparse
reads the same; whatever argparse would read otherwise or refuse, it leaves to
argparse."""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any, Dict, List, Optional
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servers import argv
from servers.switches import SWITCHES, parse_options, parser

NAMES = [switch.name for switch in SWITCHES]
# Words a command line may hold: the switches, their values right and wrong, and
# what only argparse reads (help, abbreviations, "--", negative numbers, "=").
VALUES = ["legacy", "current", "bogus", "ask", "auto", "404", "400", "0", "7", "-1", "-5", "1.5", "nan", "x",
          "read_note=0.2", "read_note", "search={\"a\":1}", "", " ", "a b", "-", "--", "-h", "--help", "--jour",
          "--era=legacy", "--auth=auto", "--inline=1", "exit-at-start", "never-answer", "endless", "résumé", "\0"]
WORDS = st.one_of(st.sampled_from(NAMES), st.sampled_from(VALUES),
                  st.builds(lambda name, value: f"{name}={value}", st.sampled_from(NAMES), st.sampled_from(VALUES)))
ENVIRONMENTS = st.sampled_from([{}, {"MCP_LAB_ERA": "legacy"}, {"MCP_LAB_INLINE": "1", "MCP_LAB_DELAY": "0.5"},
                                {"MCP_LAB_FAIL": "garbage", "MCP_LAB_JOURNAL": "/tmp/j.jsonl"}])


def by_argparse(words: List[str]) -> Optional[Dict[str, Any]]:
    """What argparse makes of `words` (None: it refused them, or printed help)."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(parser("notes").parse_args(words))
        except SystemExit:
            return None


@settings(max_examples=600, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WORDS, max_size=6), ENVIRONMENTS)
def test_a_command_line_read_without_argparse_is_read_as_argparse_reads_it(words: List[str],
                                                                          environment: Dict[str, str]) -> None:
    with mock.patch.dict(os.environ, environment, clear=False):
        quick = argv.read(words, SWITCHES)
        if quick is not None:
            assert quick == by_argparse(words)


def test_the_lab_s_own_command_lines_are_read_without_argparse() -> None:
    # As checks.fixtures starts the servers: the common path must not fall back.
    for words in (["--journal", "/tmp/x-0.jsonl", "--evidence", "/tmp/e.sock", "--hold", "read_note"],
                  ["--journal=/tmp/x-1.jsonl", "--fail", "never-answer", "--delay", "0.15", "--inline"],
                  ["--add-tool", "weekly report", "--add-tool", "résumé=" + '{"type": "object"}', "--auth"],
                  ["--era", "legacy", "--auth", "auto", "--unknown-session", "400", "--page-size", "1"], []):
        assert argv.read(words, SWITCHES) == by_argparse(words), words


def test_what_argparse_alone_reads_is_left_to_it() -> None:
    for words in (["--help"], ["--jour", "x"], ["--delay", "-1"], ["--era", "bogus"], ["--inline=1"],
                  ["--journal"], ["--", "x"], ["x"], ["--auth", "-5"], ["--page-size", "two"]):
        assert argv.read(words, SWITCHES) is None, words
    assert parse_options("notes", ["--delay", "-1"]).delay == -1.0  # argparse's reading, a negative number


def test_a_default_that_reads_the_environment_is_read_at_each_parse() -> None:
    with mock.patch.dict(os.environ, {"MCP_LAB_ERA": "legacy", "MCP_LAB_INLINE": "1"}):
        options = parse_options("notes", [])
    assert options.era == "legacy" and options.inline is True
    assert parse_options("notes", []).era == os.environ.get("MCP_LAB_ERA", "current")
