"""The conformance runner's install: npm is run so that it works from the
Node wheel's copied launcher as well as from a machine's own Node."""

from __future__ import annotations

from pathlib import Path

from checks.dev.conformance import npm_command


def test_a_wheel_layout_runs_npms_own_entry_script_under_the_chosen_node(tmp_path: Path) -> None:
    # The wheel's bin/npm is a plain copy whose relative require fails: never use it.
    (tmp_path / "bin").mkdir()
    node = tmp_path / "bin" / "node"
    node.write_text("")
    (tmp_path / "bin" / "npm").write_text("#!/usr/bin/env node\nrequire('../lib/cli.js')(process)\n")
    cli = tmp_path / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    cli.parent.mkdir(parents=True)
    cli.write_text("")
    assert npm_command(str(node)) == [str(node), str(cli)]


def test_without_npms_entry_script_beside_node_the_npm_on_path_is_used(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    assert npm_command(str(tmp_path / "bin" / "node")) == ["npm"]
