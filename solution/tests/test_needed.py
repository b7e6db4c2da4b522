"""`call` and `script` start only the servers they use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from solution.config import ServerSpec, config_of
from solution.commands.needed import alias_of, imported, servers_needed
from solution.tests.conftest import ROOT

CONFIG = config_of([ServerSpec(alias, "python", ()) for alias in ("notes", "tickets", "json", "my-db")])


def aliases(config: object) -> list[str]:
    return [s.alias for s in getattr(config, "servers")]


def test_a_call_needs_only_the_server_its_name_points_at() -> None:
    assert aliases(servers_needed(CONFIG, "call", "mcp__tickets__queue_stats_af6d318b")) == ["tickets"]
    assert aliases(servers_needed(CONFIG, "call", "mcp__my-db__x")) == ["my-db"]
    # No prefix, or an alias not configured: start them all and let the call say what is wrong.
    assert aliases(servers_needed(CONFIG, "call", "search")) == aliases(CONFIG)
    assert aliases(servers_needed(CONFIG, "call", "mcp__nowhere__x")) == aliases(CONFIG)
    assert alias_of("mcp____x") is None


def test_a_script_needs_only_the_servers_it_imports() -> None:
    script = "import asyncio\nfrom notes import search\nimport json_tools\nprint(1)\n"
    assert imported(script) == {"asyncio", "notes", "json_tools"}
    assert aliases(servers_needed(CONFIG, "script", source=script)) == ["notes", "json"]
    assert aliases(servers_needed(CONFIG, "script", source="print(")) == aliases(CONFIG)  # unreadable: all
    assert aliases(servers_needed(CONFIG, "tools")) == aliases(CONFIG)


def test_the_command_line_starts_no_other_server_for_a_call(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {
        "notes": {"command": sys.executable, "args": [str(ROOT / "servers" / "notes.py")]},
        "other": {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}}}))
    done = subprocess.run([sys.executable, "-m", "solution", "--config", str(path), "call",
                           "mcp__notes__read_note", '{"id": "n-2"}', "--audit", ""], capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 0 and "Timeouts" in done.stdout, done.stderr
    assert not marker.exists()  # the other server was never started
