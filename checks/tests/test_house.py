"""The house rules for the whole lab: small modules, and none importing another
that imports it back, in starter/, solution/, servers/ and checks/ (tests included)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

from checks.target import ROOT

PACKAGES = ("starter", "solution", "servers", "checks")
MAX_LINES = 400


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, known: Set[str], root: Path = ROOT) -> Set[str]:
    """Every module of the lab a file imports, wherever the import stands (a
    function's lazy import closes a circle as surely as one at the top), but
    for those only the type checker reads (under `if TYPE_CHECKING:`)."""
    me = module_name(path, root)
    package = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(node) for guard in ast.walk(tree) if isinstance(guard, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(guard.test) for stmt in guard.body for node in ast.walk(stmt)}
    found: Set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in found if name in known and name != me}


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


def files() -> List[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


def test_the_circle_finder_finds_a_lazy_circle_and_a_relative_one(tmp_path: Path) -> None:
    assert circles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "one.py").write_text("def later():\n    from .two import thing\n")  # lazy and relative
    (package / "two.py").write_text("from pkg import one\nif TYPE_CHECKING:\n    from pkg.three import T\n")
    (package / "three.py").write_text("")
    known = {"pkg", "pkg.one", "pkg.two", "pkg.three"}
    graph = {module_name(p, tmp_path): imports_of(p, known, tmp_path) for p in package.glob("*.py")}
    assert graph["pkg.one"] == {"pkg.two"} and graph["pkg.two"] == {"pkg", "pkg.one"}  # not three: types only
    assert circles(graph) == [["pkg.one", "pkg.two", "pkg.one"]]


def test_no_module_of_the_lab_imports_itself_back() -> None:
    known = {module_name(p) for p in files()}
    graph = {module_name(p): imports_of(p, known) for p in files()}
    assert circles(graph) == []


def test_no_module_of_the_lab_is_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in files()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_the_learners_client_imports_nothing_of_the_reference_layers() -> None:
    # The core is the day's client, whole: the starter is built from the reference's
    # top-level modules, and each of them may import only those (the layers build on
    # the core, never the other way round). Read from a fresh build, so the reference's
    # own `# >>> reference` lines (its full command line) are the starter's there.
    from checks.dev.starter import build

    built = build()
    core = {Path(name).stem for name in built if "/" not in name}
    strays = []
    for name, text in sorted(built.items()):
        if "/" in name:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.level:
                wanted = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
                if node.level > 1 or any(module not in core for module in wanted):
                    strays.append(f"{name}: from {'.' * node.level}{node.module or ''} import ...")
    assert strays == []
