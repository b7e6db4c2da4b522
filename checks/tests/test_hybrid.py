"""Each region is judged on its own code: an item runs against the learner's
package with every other region the reference's, and what it shows (paths,
line numbers) is the learner's own file."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

from checks.exercises import EXERCISES, EXTENSIONS, extension_regions, regions
from checks.harness import learner_frame, run_items
from checks.hybrid import OUTSIDE, Hybrids, Package, layers, region_of, swapped
from checks.items import EXTENSION_ITEMS, ITEMS
from checks.target import ROOT, learner_line, load_target
from checks.tests.conftest import Variant

LEARNER = """a = 1
    # >>> exercise 1 (x): one
    mine
    mine too
    mine three
    # <<< exercise 1
b = 2
    # >>> extension E1 (y): two
    kept
    # <<< extension E1
c = 3
"""
REFERENCE = LEARNER.replace("    mine\n    mine too\n    mine three\n", "    theirs\n").replace("kept", "ref")


def test_every_region_but_the_kept_one_takes_the_references_body() -> None:
    made, _ = swapped(LEARNER, REFERENCE, "E1")
    assert "theirs" in made and "mine" not in made and "kept" in made
    made, _ = swapped(LEARNER, REFERENCE, "1")
    assert "mine three" in made and "ref" in made and "kept" not in made


def test_lines_after_a_shorter_swapped_body_map_back_to_the_learners_lines() -> None:
    made, shifts = swapped(LEARNER, REFERENCE, "E1")
    copy = made.splitlines()
    for number, text in enumerate(copy, start=1):
        if text in ("b = 2", "        kept", "c = 3", "a = 1"):
            assert LEARNER.splitlines()[learner_line(shifts, number) - 1] == text, text
    assert learner_line(shifts, copy.index("    theirs") + 1) == 3  # inside: the body's first line


def test_each_item_runs_on_its_own_region_and_the_references_others(shipped: Path) -> None:
    starter = load_target(str(shipped))
    hybrids = Hybrids(starter)
    try:
        for item in ITEMS + EXTENSION_ITEMS:
            region = region_of(item)
            made = hybrids.for_item(item)
            assert made.shown == starter.directory and made.display_path("naming.py") == starter.display_path("naming.py")
            for path in made.directory.glob("*.py"):
                text, reference = path.read_text(), (ROOT / "solution" / path.name).read_text()
                learner = (starter.directory / path.name).read_text()
                found = {**{str(k): v for k, v in regions(text).items()}, **extension_regions(text)}
                for name, body in found.items():
                    own = {**{str(k): v for k, v in regions(learner).items()}, **extension_regions(learner)}
                    want = own[name] if name == region else \
                        {**{str(k): v for k, v in regions(reference).items()}, **extension_regions(reference)}[name]
                    assert body == want, (item.id, path.name, name)
        assert region_of(ITEMS[0]) == OUTSIDE and region_of(EXTENSION_ITEMS[5]) == "E6"
    finally:
        hybrids.close()


def test_a_region_right_alone_in_the_shipped_starter_is_green(variant: Variant) -> None:
    # E6's scenario needs a question answered (E7's field_from_schema), and the
    # pager (exercise 2) and the namer (exercise 3) to find the tool at all.
    body = extension_regions((ROOT / "solution" / "tasks.py").read_text())["E6"]
    directory = variant("starter", extensions=("E6",))
    assert extension_regions((Path(directory) / "tasks.py").read_text())["E6"] == body
    item = next(i for i in EXTENSION_ITEMS if i.id.startswith("E6"))
    verdict = run_items([item], load_target(str(directory)))[0]
    assert verdict.status == "pass", verdict.message


def test_a_region_wrong_alone_in_a_solved_lab_reddens_only_its_own_items(variant: Variant) -> None:
    old = '        if "result" in message:\n            slot.resolve(message["result"])\n'
    directory = variant("solution", edits={"stdio_client.py": (old, '        if message.get("result"):\n'
                                                                     '            slot.resolve(message["result"])\n')})
    # Twenty items in one process, on a machine running the rest of the suite: the
    # items' own deadline (a hang guard, not a verdict) given room for that load.
    verdicts = run_items(ITEMS + EXTENSION_ITEMS, load_target(str(directory)), limit=120.0)
    red = sorted(v.id for v in verdicts if v.status != "pass")
    assert red == ["protocol-error"], [(v.id, v.message[:200]) for v in verdicts if v.status != "pass"]


def test_a_learners_exception_in_a_later_region_names_its_own_line(variant: Variant) -> None:
    # stdio_client.py holds exercise 1 (the starter's is shorter than the
    # reference's) before E3: the copy's E3 lines sit elsewhere than the learner's.
    directory = variant("starter", edits={"stdio_client.py": (
        "        # TODO extension E3", "        raise ValueError('mine')\n        # TODO extension E3")})
    learner = load_target(str(directory))
    hybrids = Hybrids(learner)
    try:
        made = hybrids.for_region("E3")
        assert made.directory != learner.directory
        client = made.stdio_client.StdioClient(made.config.ServerSpec("x", "python"))
        try:
            client._on_progress({})
        except ValueError as exc:
            shown = learner_frame(exc, made)
    finally:
        hybrids.close()
    lines = (Path(directory) / "stdio_client.py").read_text().splitlines()
    line = next(n for n, text in enumerate(lines, start=1) if "raise ValueError('mine')" in text)
    assert shown == f"{learner.display_path('stdio_client.py')}:{line} in _on_progress: raise ValueError('mine')"
    assert EXERCISES[1].file == "stdio_client.py" and EXTENSIONS["E3"].file == "stdio_client.py"


def test_an_item_runs_the_references_layers_around_the_learners_core(tmp_path: Path, shipped: Path) -> None:
    package = Package(shipped)
    made = package.copy_for("E6", tmp_path)
    assert made is not None
    copy = Path(str(made["dir"]))
    assert {p.name for p in copy.iterdir() if p.is_dir() and p.name != "__pycache__"} == \
        {layer.name for layer in layers()}  # the reference's layers, beside the learner's modules
    assert (copy / "tasks.py").read_text() == (shipped / "tasks.py").read_text()  # E6: the learner's own
    target = load_target(str(copy))
    # The reference's aggregator is built on the package's own core, the learner's.
    assert issubclass(target.module("host.aggregator").Aggregator, target.aggregator.Aggregator)
    assert target.module("task_calls.task_runner").settled is target.module("tasks").settled


def test_regions_that_differ_nowhere_else_share_one_package(tmp_path: Path, shipped: Path) -> None:
    package = Package(ROOT / "solution")
    assert package.copy_for("1", tmp_path) is None  # the reference, whole: judged as it is
    starter = Package(shipped)
    first, second = starter.copy_for(OUTSIDE, tmp_path), starter.copy_for("9", tmp_path)
    assert first is not None and first is second  # no region 9: the same package as the one that owns none


def test_the_layers_are_the_references_whatever_the_learners_folder_holds(variant: Variant, tmp_path: Path) -> None:
    starter = Path(variant("starter"))
    (starter / "host").mkdir()  # a layer of the learner's own: never read (checks/intake.py takes modules only)
    (starter / "host" / "__init__.py").write_text("raise SystemExit('mine')\n")
    made = Package(starter).copy_for(OUTSIDE, tmp_path)
    assert made is not None
    copy = Path(str(made["dir"]))
    assert (copy / "host" / "__init__.py").read_text() == (ROOT / "solution" / "host" / "__init__.py").read_text()


def test_nothing_is_taken_from_or_left_in_the_learners_bytecode_cache(variant: Variant, tmp_path: Path) -> None:
    import importlib.util
    import py_compile
    from checks.dev.starter import build
    starter = Path(variant("starter"))
    (starter / "naming.py").write_text(build()["naming.py"])  # the shipped stub, whatever this lab's holds
    # The reference's answer, compiled and planted where the learner's stub would be looked for.
    planted = Path(importlib.util.cache_from_source(str(starter / "naming.py")))
    planted.parent.mkdir(exist_ok=True)
    py_compile.compile(str(ROOT / "solution" / "naming.py"), cfile=str(planted),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    before = sorted(p.name for p in planted.parent.iterdir())
    made = Package(starter).copy_for("3", tmp_path)
    assert made is not None
    copy = Path(str(made["dir"]))
    target = load_target(str(copy))
    assert target.naming.model_tool_name("notes", "search") == "search"  # the learner's stub ran, not the plant
    assert sorted(p.name for p in planted.parent.iterdir()) == before  # and nothing was written there


def compiles(monkeypatch: Any) -> List[str]:
    """The files py_compile is asked to compile from now on, by name; bytecode is written as a learner's Python does."""
    import py_compile
    import sys
    from checks import intake
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(intake, "_COMPILED", {})  # a fresh run
    asked: List[str] = []
    real = py_compile.compile

    def counted(file: str, *args: Any, **kwargs: Any) -> Any:
        if "solution" not in Path(file).parts:  # the reference's layers keep theirs beside it
            asked.append(Path(file).name)
        return real(file, *args, **kwargs)
    monkeypatch.setattr(py_compile, "compile", counted)
    return asked


def test_each_text_is_compiled_once_a_run_into_the_copies_and_nothing_is_kept_in_the_learners_folder(
        variant: Variant, tmp_path: Path, monkeypatch: Any) -> None:
    import importlib.util
    asked = compiles(monkeypatch)
    starter = variant("starter")
    before = {p: p.read_bytes() for p in starter.rglob("*") if p.is_file()}
    package = Package(starter)
    made = [package.copy_for(region, tmp_path / "one") for region in ("1", "2", OUTSIDE)]
    texts = {(Path(str(m["dir"])) / name).read_text(encoding="utf-8") for m in made if m for name in package.texts
             if (Path(str(m["dir"])) / name).read_text(encoding="utf-8") != (ROOT / "solution" / name).read_text()}
    assert len(asked) == len(texts)  # each text of the learner's once, however many copies hold it
    source = Path(str(made[1]["dir"])) / "discovery.py" if made[1] else None  # region 2's: the learner's body
    assert source is not None
    data = Path(importlib.util.cache_from_source(str(source))).read_bytes()
    assert int.from_bytes(data[4:8], "little") == 0b11  # hash-based, checked: a text that differs is compiled again
    assert data[8:16] == importlib.util.source_hash(source.read_bytes())
    assert {p: p.read_bytes() for p in starter.rglob("*") if p.is_file()} == before  # nothing written there
    agent = source.parent / "agent.py"  # the reference's text: the reference's file and bytecode
    assert agent.stat().st_ino == (ROOT / "solution" / "agent.py").stat().st_ino
