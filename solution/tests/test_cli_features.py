"""The command line's resources, prompts, completions, logs and sampling, against the
scripted library server in both eras (one config holds both)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from solution.tests.conftest import ROOT

LIBRARY = ROOT / "solution" / "tests" / "feature_servers" / "library.py"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {
        "lib": {"command": sys.executable, "args": [str(LIBRARY)]},
        "old": {"command": sys.executable, "args": [str(LIBRARY), "--legacy"]}}}))
    return path


def run(config: Path, *args: str, stdin: str = "") -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "solution", *args, "--config", str(config), "--audit", ""],
                          input=stdin, capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "MOCK": "1"})


def test_resources_are_listed_in_both_eras_and_read_with_their_words_made_safe(config: Path) -> None:
    listed = run(config, "resources")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("note://long") == 2 and "template note://{id}" in listed.stdout
    read = run(config, "read", "old", "note://a")
    assert read.returncode == 0 and "alpha note \\x1b[2J\\x1b]0;owned\\x07end" in read.stdout
    assert "\x1b" not in read.stdout
    blob = run(config, "read", "lib", "note://b")
    assert "[binary resource note://b, image/png, about 264 bytes: not shown]" in blob.stdout
    long = run(config, "read", "lib", "note://long")
    assert "more characters not shown" in long.stdout and len(long.stdout) < 110_000
    missing = run(config, "read", "lib", "note://nope")
    assert missing.returncode == 1 and missing.stderr.startswith("error: the server answered error -32602")
    unknown = run(config, "read", "nobody", "x")
    assert unknown.returncode == 2 and unknown.stderr.strip() == "error: no server 'nobody' in the config"


def test_prompts_completions_and_a_run_that_starts_from_a_prompt(config: Path) -> None:
    listed = run(config, "prompts", "old")
    assert listed.returncode == 0 and "old/summarise(topic*, style)" in listed.stdout
    values = run(config, "complete", "lib/summarise", "topic", "pag")
    assert values.returncode == 0 and values.stdout.split() == ["paging", "pagination"]
    started = run(config, "prompt", "old/summarise", "topic=paging", "--yes", "--json")
    assert started.returncode == 0, started.stderr
    transcript = json.loads(started.stdout)
    assert transcript["question"].startswith("The user chose the prompt 'summarise' of the MCP server 'old'")
    assert "Summarise the notes on paging" in transcript["question"] and transcript["model"] == "model: mock (MOCK=1)"
    assert transcript["steps"], "the mock model should have called a tool"
    missing = run(config, "prompt", "lib/summarise")
    assert missing.returncode == 2 and "lib/summarise needs topic" in missing.stderr
    odd = run(config, "prompt", "lib/summarise", "topic")
    assert odd.returncode == 2 and "'topic' is not key=value" in odd.stderr and "Traceback" not in odd.stderr


@pytest.mark.parametrize("alias", ["lib", "old"])
def test_a_calls_server_text_is_indented_so_no_line_of_it_passes_for_the_clients_own(config: Path,
                                                                                     alias: str) -> None:
    done = run(config, "call", f"mcp__{alias}__find", "--yes")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "  error: server 'lib' is offline" in lines and "  notes wants to run add_note. Allow? [y/N]" in lines
    assert all(line.startswith("  ") for line in lines), lines


@pytest.mark.parametrize("alias", ["lib", "old"])
def test_log_messages_go_to_stderr_at_the_level_asked_never_to_stdout(config: Path, alias: str) -> None:
    done = run(config, "call", f"mcp__{alias}__noisy", "--yes", "--log-level", "warning")
    assert done.returncode == 0 and done.stdout.strip() == "logged"
    logged: List[str] = [line for line in done.stderr.splitlines() if line.startswith(f"[{alias} log")]
    assert logged == [f"[{alias} log warning lib] warning line \\x1b[2J\\x1b]0;owned\\x07",
                      f"[{alias} log error lib] error line \\x1b[2J\\x1b]0;owned\\x07"]
    quiet = run(config, "call", f"mcp__{alias}__noisy", "--yes")
    assert "log" not in quiet.stderr  # nothing asked for: none sent (warning and above would show)


@pytest.mark.parametrize("alias", ["lib", "old"])
def test_sampling_with_approvals_typed_on_standard_input(config: Path, alias: str) -> None:
    done = run(config, "call", f"mcp__{alias}__ask_model", "--yes", "--sampling", "ask", stdin="y\ny\n")
    assert done.returncode == 0 and "(mock) A reply to:" in done.stdout and '"model": "mock"' in done.stdout
    assert f"server '{alias}' asks to use your model, at most 1,024 tokens (it asked for 5,000; capped)" in done.stderr
    assert "Say hi \\x1b[2J" in done.stderr and "\x1b" not in done.stderr + done.stdout
    refused = run(config, "call", f"mcp__{alias}__ask_model", "--yes", "--sampling", "ask", stdin="n\n")
    assert "(mock)" not in refused.stdout and "declined" in refused.stdout
    undeclared = run(config, "call", f"mcp__{alias}__ask_model", "--yes", stdin="y\ny\n")  # no terminal: not offered
    assert "(mock)" not in undeclared.stdout and ("-32601" in undeclared.stdout or "declares no" in undeclared.stdout)


def test_roots_reach_a_server_that_asks_and_a_bad_one_is_one_line(config: Path, tmp_path: Path) -> None:
    place = tmp_path / "my root"
    place.mkdir()
    done = run(config, "call", "mcp__old__where", "--yes", "--root", str(place))
    assert done.returncode == 0 and place.as_uri() in done.stdout
    default = run(config, "call", "mcp__lib__where", "--yes")
    assert ROOT.as_uri() in default.stdout  # the working directory by default
    bad = run(config, "tools", "--root", str(tmp_path / "nope"))
    assert bad.returncode == 2 and bad.stderr.strip().endswith(f"--root {tmp_path / 'nope'}: not a directory")


@pytest.mark.parametrize("alias", ["lib", "old"])
def test_watch_prints_a_line_per_update_of_the_subscribed_resource(config: Path, alias: str) -> None:
    done = run(config, "watch", alias, "note://a", "--seconds", "60")
    assert done.returncode == 0 and done.stdout.strip() == f"updated: {alias} note://a", done.stderr


@pytest.mark.parametrize("alias", ["lib", "old"])
def test_watch_stops_at_its_count_though_the_updates_come_in_a_burst(config: Path, alias: str) -> None:
    done = run(config, "watch", alias, "note://burst", "--count", "3", "--seconds", "60")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"updated: {alias} note://burst"] * 3  # of the 50 the server sent
