"""The command line, run as a learner runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

from solution.tests.conftest import ROOT


def run(*args: str, env: Optional[Dict[str, str]] = None, cwd: Path = ROOT,
        package: str = "solution") -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", package, *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env={**os.environ, "MOCK": "1", **(env or {})})


def test_tools_json_lists_the_table_with_aliases_and_originals() -> None:
    done = run("tools", "--json")
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)
    rows = {(t["alias"], t["original_name"]): t for t in table["tools"]}
    assert len(rows) == 18 and table["offline"] == {}
    # Two servers call themselves "notes"; only the aliases from the config tell them apart.
    assert table["servers"]["notes"]["name"] == table["servers"]["archive"]["name"] == "notes"
    assert rows[("archive", "search")]["model_name"] == "mcp__archive__search"
    assert rows[("tickets", "queue.stats")]["model_name"].startswith("mcp__tickets__queue_stats_")
    assert rows[("notes", "search")]["title"] == "Search notes"


def test_tools_prints_a_table_and_works_from_another_directory(tmp_path: Path) -> None:
    done = run("tools", cwd=tmp_path)
    assert done.returncode == 0 and "mcp__notes__search" in done.stdout


def test_call_prints_the_result_and_exits_1_on_iserror() -> None:
    ok = run("call", "mcp__notes__read_note", '{"id": "n-2"}')
    assert ok.returncode == 0 and "Timeouts" in ok.stdout
    bad = run("call", "mcp__tickets__schedule_followup", '{"ticket_id": "T-101", "date": "soon"}', "--yes")
    assert bad.returncode == 1 and "YYYY-MM-DD" in bad.stdout


def test_ask_shows_each_step_and_the_answer() -> None:
    done = run("ask", "Read note n-2")
    assert done.returncode == 0, done.stderr
    assert "model chose mcp__notes__read_note -> sent to notes / read_note" in done.stdout
    assert "answer:" in done.stdout and "model: mock (MOCK=1)" in done.stdout


def test_question_from_the_environment_runs_the_loop_for_the_starter_too() -> None:
    # The starter's command line is the day's (solution/cli.py): the model's name is whatever the
    # learner's naming makes of it (as shipped, the tool's own), the server's is read_note.
    done = run(env={"QUESTION": "Read note n-2"}, package="starter")
    assert done.returncode == 0 and re.search(r"model chose \S*read_note -> sent to notes / read_note", done.stdout), \
        done.stdout


def test_without_mock_the_output_says_the_mock_stands_in() -> None:
    done = run("ask", "Read note n-2", "--json", env={"MOCK": ""})
    assert "no model API is configured" in json.loads(done.stdout)["model"]


def test_a_bad_config_is_a_clear_error_and_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text('{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}')
    done = run("tools", "--config", str(config))
    assert done.returncode == 2 and "duplicate key 'a'" in done.stderr and "Traceback" not in done.stderr
    missing = run("tools", "--config", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "config file not found" in missing.stderr


def test_no_reachable_server_is_exit_2_with_the_reasons(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text('{"mcpServers": {"ghost": {"command": "no-such-command-for-the-lab"}}}')
    done = run("tools", "--config", str(config))
    assert done.returncode == 2 and "command not found" in done.stderr


def test_bad_call_arguments_are_a_usage_error() -> None:
    done = run("call", "mcp__notes__search", "{not json")
    assert done.returncode == 2 and "not valid JSON" in done.stderr


def test_a_closed_stdin_is_no_terminal_not_a_crash() -> None:
    done = subprocess.run([sys.executable, "-m", "solution", "call", "mcp__tickets__close_ticket",
                           '{"ticket_id": "T-101"}'], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "MOCK": "1"}, stdin=None, close_fds=True,
                          preexec_fn=lambda: os.close(0))
    assert done.returncode == 1 and "declined" in done.stdout and "Traceback" not in done.stderr


def test_common_options_work_before_the_subcommand_as_after_it(tmp_path: Path) -> None:
    before = run("--json", "--config", str(ROOT / "labs" / "servers.json"), "tools")
    after = run("tools", "--json", "--config", str(ROOT / "labs" / "servers.json"))
    assert before.returncode == after.returncode == 0
    assert json.loads(before.stdout)["tools"] == json.loads(after.stdout)["tools"]
    missing = run("--config", str(tmp_path / "none.json"), "tools")
    assert missing.returncode == 2 and "none.json" in missing.stderr  # not silently the default config
    both = run("--yes", "call", "mcp__notes__read_note", "--no")
    assert both.returncode == 2 and "--yes and --no cannot both be given" in both.stderr


def test_the_servers_table_keeps_the_configs_order() -> None:
    done = run("tools", "--json")
    assert list(json.loads(done.stdout)["servers"]) == ["notes", "tickets", "archive"]


def test_call_asks_for_progress_and_shows_it_on_stderr(tmp_path: Path) -> None:
    """As `ask` does, with stdout kept for the result alone."""
    journal = tmp_path / "tickets.jsonl"
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"tickets": {"command": sys.executable, "args": [
        str(ROOT / "servers" / "tickets.py"), "--journal", str(journal)]}}}))
    done = run("call", "--yes", "--config", str(config), "--audit", "", "mcp__tickets__rebuild_index", "{}")
    assert done.returncode == 0, done.stderr
    shown = [line for line in done.stderr.splitlines() if line.strip().startswith("progress")]
    assert shown and shown[-1].strip().startswith("progress [####################] 5/5"), done.stderr
    assert "progress" not in done.stdout and "tickets" in done.stdout
    (call,) = [json.loads(line)["msg"] for line in journal.read_text().splitlines()
               if '"tools/call"' in line and '"in"' in line]
    assert "progressToken" in call["params"]["_meta"]
