"""`servers/` must run on a bare Python: it imports the standard library only."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SERVERS = Path(__file__).resolve().parents[1]


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_servers_import_nothing_outside_the_standard_library() -> None:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for path in SERVERS.glob("*.py"):
        outside = imported_roots(path) - stdlib - {"servers"}
        assert not outside, f"{path.name} imports {outside}"
