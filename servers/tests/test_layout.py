"""The house rules for `servers/`: small modules, and none importing another that imports it back."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

SERVERS = Path(__file__).resolve().parents[1]
MAX_LINES = 400


def imports_of(path: Path) -> Set[str]:
    """Every `servers.*` module a file imports, wherever the import stands (a
    function's lazy import closes a circle as surely as one at the top)."""
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("servers."):
            found.add(str(node.module))
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("servers.")}
    return found


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    found: List[List[str]] = []
    done: Set[str] = set()

    def visit(module: str, path: List[str]) -> None:
        if module in path:
            found.append(path[path.index(module):] + [module])
            return
        if module in done:
            return
        for imported in sorted(graph.get(module, ())):
            visit(imported, path + [module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    return found


def test_the_circle_finder_finds_a_lazy_circle() -> None:
    assert circles({"servers.a": {"servers.b"}, "servers.b": {"servers.a"}}) == [["servers.a", "servers.b", "servers.a"]]
    assert circles({"servers.a": {"servers.b"}, "servers.b": set()}) == []


def test_no_module_in_servers_imports_itself_back() -> None:
    graph = {f"servers.{path.stem}": imports_of(path) for path in SERVERS.glob("*.py")}
    assert circles(graph) == []


def test_no_module_in_servers_is_over_400_lines() -> None:
    long = {path.name: n for path in SERVERS.glob("*.py") if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}
