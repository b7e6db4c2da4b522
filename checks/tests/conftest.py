from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from checks.dev.starter import BuildError, build, write
from checks.exercises import extension_regions, regions, with_extension, with_region
from checks.harness import Verdict, run_items
from checks.hybrid import bodies
from checks.items import EXTENSION_ITEMS, ITEMS
from checks.target import ROOT, load_target
from checks.tests.doc_fixtures import all_claims, runs, scratch, source  # noqa: F401 (the documents' tests share them)

Variant = Callable[..., Path]


def learner_work() -> List[str]:
    """What differs in starter/ from the shipped starter, a fresh build of the
    reference and its stubs (nothing on a clean clone)."""
    try:
        built = build()
    except BuildError as exc:
        return [str(exc)]
    found: List[str] = []
    for name, shipped in built.items():
        path = ROOT / "starter" / name
        if not path.is_file():
            found.append(f"{name} removed")
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if text != shipped:
            found += changes(text, shipped, name)
    return found


def changes(text: str, shipped: str, name: str) -> List[str]:
    """How one module differs from the shipped one: regions worked on, edits outside them."""
    mine, theirs = bodies(text), bodies(shipped)
    found = [f"{'exercise' if region.isdigit() else 'extension'} {region} worked on"
             for region in sorted(theirs, key=lambda r: (not r.isdigit(), len(r), r))
             if region in mine and text[slice(*mine[region])] != shipped[slice(*theirs[region])]]

    def outside(source: str, spans: Dict[str, "tuple[int, int]"]) -> str:
        at, kept = 0, ""
        for start, end in sorted(spans.values()):
            kept, at = kept + source[at:start], end
        return kept + source[at:]
    if set(mine) != set(theirs) or outside(text, mine) != outside(shipped, theirs):
        found.append(f"{name} edited outside the regions")
    return found


def skip_reason() -> Optional[str]:
    """Why the shipped-starter tests are skipped here, or None when they run."""
    work = learner_work()
    if not work or os.environ.get("MCP_LAB_SHIPPED"):  # CI runs them whatever the tree holds
        return None
    more = f", and {len(work) - 3} more" if len(work) > 3 else ""
    return (f"starter/ holds your work ({len(work)} change(s): {', '.join(work[:3])}{more}); "
            "these tests describe the shipped starter, and CI runs them on a clean clone")


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """Tests marked shipped_starter describe the starter as it ships: on a
    learner's edited starter they are skipped, saying why."""
    why = skip_reason()
    if why is not None:
        for item in items:
            if "shipped_starter" in item.keywords:
                item.add_marker(pytest.mark.skip(reason=why))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    why = skip_reason()
    if why is not None:
        terminalreporter.write_line(f"skipped the shipped-starter tests: {why}")


def verdicts_for(directory: "str | Path", limit: Optional[float] = None,
                 only: Optional[set[int]] = None, extensions: bool = False) -> Dict[int, Verdict]:
    target = load_target(str(directory))
    items = [i for i in ITEMS if only is None or i.number in only] + (EXTENSION_ITEMS if extensions else [])
    found = run_items(items, target, limit=limit) if limit else run_items(items, target)
    return {v.number: v for v in found}


@pytest.fixture(scope="session")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The starter as it ships: a fresh build of the reference and its stubs
    (python -m checks.dev.starter), whatever the learner's starter/ holds now,
    so a test of the shipped starter holds on a solved lab too."""
    directory = tmp_path_factory.mktemp("shipped") / "starter"
    write(build(), directory)
    return directory


@pytest.fixture
def variant(tmp_path: Path, shipped: Path) -> Variant:
    """A copy of the shipped starter (or of solution/) with some regions or lines changed."""
    def make(base: str = "starter", from_solution: tuple[int, ...] = (),
             edits: Optional[Dict[str, tuple[str, str]]] = None, extensions: tuple[str, ...] = ()) -> Path:
        directory = tmp_path / f"{base}_copy"
        shutil.copytree(shipped if base == "starter" else ROOT / base, directory,
                        ignore=shutil.ignore_patterns("tests", "__pycache__"))
        for number in from_solution:
            for path in directory.glob("*.py"):
                text = path.read_text()
                if number in regions(text):
                    body = regions((ROOT / "solution" / path.name).read_text())[number]
                    path.write_text(with_region(text, number, body))
        for name in extensions:
            for path in directory.glob("*.py"):
                text = path.read_text()
                if name in extension_regions(text):
                    body = extension_regions((ROOT / "solution" / path.name).read_text())[name]
                    path.write_text(with_extension(text, name, body))
        for file, (old, new) in (edits or {}).items():
            path = directory / file
            text = path.read_text()
            assert old in text, f"{old!r} not in {file}"
            path.write_text(text.replace(old, new, 1))
        return directory
    return make


@pytest.fixture(scope="session")
def judge(template: Path) -> Path:
    """The template, for grading mode's tests: skipped, saying why, where grading
    mode cannot run."""
    from checks.grading import cannot_grade_here
    why = cannot_grade_here()
    if why is not None:
        pytest.skip(why)
    return template


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lab as it is on disk (tracked and new files, edits included) committed
    in a repository of its own: the template a judge is cloned or fetched from."""
    import subprocess
    repository = tmp_path_factory.mktemp("judge")
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], capture_output=True, cwd=ROOT,
                            check=True, timeout=60).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (repository / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repository / name)
    for args in (["init", "--quiet"], ["add", "--all"], ["-c", "user.name=lab", "-c", "user.email=lab@lab.invalid",
                                                        "commit", "--quiet", "--message", "the judge"]):
        subprocess.run(["git", *args], cwd=repository, check=True, timeout=60, capture_output=True)
    return repository
