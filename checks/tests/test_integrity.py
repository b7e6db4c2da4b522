"""The lab's own promises: what the starter shows, and what each exercise changes."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict

import pytest

from checks.dev.starter import build, stale, write
from checks.exercises import EXERCISES, EXTENSIONS, extension_regions, regions
from checks.harness import Verdict
from checks.items import EXTENSION_ITEMS
from checks.target import ROOT
from checks.tests.conftest import Variant, learner_work, verdicts_for

pytestmark = pytest.mark.shipped_starter  # every test here describes the shipped starter

STARTER_GREEN = {1, 4, 7, 9}


@pytest.fixture(scope="module")
def starter() -> Dict[int, Verdict]:
    return verdicts_for(ROOT / "starter")


def passing(verdicts: Dict[int, Verdict]) -> set[int]:
    return {n for n, v in verdicts.items() if v.status == "pass"}


def unexpected(verdicts: Dict[int, Verdict], expected: set[int]) -> Dict[int, str]:
    """Every verdict that is not what was expected, both ways, with its account."""
    return {n: f"{v.status}: {v.message}" for n, v in verdicts.items()
            if (v.status == "pass") != (n in expected)}


def test_the_committed_starter_is_a_fresh_build_of_the_reference_and_its_stubs() -> None:
    # One source: starter/ is made by `python -m checks.dev.starter`, never by hand.
    assert stale(build(), ROOT / "starter") == []


def test_a_stale_starter_is_named_file_by_file(tmp_path: Path) -> None:
    built = build()
    write(built, tmp_path)
    assert stale(built, tmp_path) == []
    (tmp_path / "naming.py").write_text(built["naming.py"].replace("return tool_name", "return 'x'"))
    (tmp_path / "discovery.py").unlink()
    (tmp_path / "extra.py").write_text("")
    assert stale(built, tmp_path) == ["discovery.py: missing", "naming.py: differs from a fresh build",
                                      "extra.py: not in a fresh build"]


def test_each_exercise_is_one_region_in_its_own_file_in_both_packages() -> None:
    for package in ("starter", "solution"):
        found = {number: path.name for path in (ROOT / package).glob("*.py")
                 for number in regions(path.read_text())}
        assert found == {e.number: e.file for e in EXERCISES.values()}, package


def test_each_region_differs_between_starter_and_solution() -> None:
    for exercise in EXERCISES.values():
        starter = regions((ROOT / "starter" / exercise.file).read_text())[exercise.number]
        solution = regions((ROOT / "solution" / exercise.file).read_text())[exercise.number]
        assert starter != solution and "TODO exercise" in starter


def test_every_exercise_marker_names_its_items() -> None:
    for exercise in EXERCISES.values():
        text = (ROOT / "starter" / exercise.file).read_text()
        marker = re.search(rf"# >>> exercise {exercise.number} \((items?) ([0-9, ]+)\)", text)
        assert marker, exercise
        assert {int(n) for n in marker.group(2).split(",")} == set(exercise.items)


def test_the_solution_passes_all_nine() -> None:
    verdicts = verdicts_for(ROOT / "solution")
    assert passing(verdicts) == set(range(1, 10)), {n: v.message for n, v in verdicts.items()}


def test_the_starter_passes_exactly_1_4_7_9(starter: Dict[int, Verdict]) -> None:
    assert passing(starter) == STARTER_GREEN, {n: v.message for n, v in starter.items()}
    assert all(v.status == "fail" for n, v in starter.items() if n not in STARTER_GREEN)


def test_every_red_starter_item_names_its_exercise_and_where_to_edit(starter: Dict[int, Verdict]) -> None:
    for number, verdict in starter.items():
        if number in STARTER_GREEN:
            continue
        exercise = next(e for e in EXERCISES.values() if number in e.items)
        assert verdict.where is not None and verdict.where.exercise == exercise.number
        assert f"exercise {exercise.number}" in verdict.message
        assert f"starter/{exercise.file}" in verdict.message and exercise.function in verdict.message


def test_item_2_is_red_for_the_right_reason(starter: Dict[int, Verdict]) -> None:
    message = starter[2].message
    assert "the server answered -32601 'Method not found'; a later request was answered after it" in message
    assert "notes/reindex was still waiting: its error reply was read and dropped" in message


def test_item_3_is_red_because_only_one_page_was_read(starter: Dict[int, Verdict]) -> None:
    assert "1 tools/list request(s)" in starter[3].message and "never came back" in starter[3].message


def test_a_red_scenario_names_the_clause_its_region_breaks_before_the_edit_line(starter: Dict[int, Verdict]) -> None:
    # The scenario says what the run did; the contract, judged beside it, which duty that breaks.
    message = starter[3].message
    assert "\nclause 2.2 is red too: must ask for pages" in message, message
    assert message.index("clause 2.2 is red too") < message.index("\nedit: "), message


def test_item_8_is_red_because_refresh_raised(starter: Dict[int, Verdict]) -> None:
    assert "refresh() raised" in starter[8].message and "sank the whole refresh" in starter[8].message


@pytest.mark.parametrize("number", sorted(EXERCISES))
def test_each_exercise_alone_flips_exactly_its_own_items(variant: Variant, number: int) -> None:
    verdicts = verdicts_for(variant("starter", from_solution=(number,)))
    expected = STARTER_GREEN | set(EXERCISES[number].items)
    assert passing(verdicts) == expected, unexpected(verdicts, expected)


def test_each_extension_is_one_region_in_its_own_file_in_both_packages() -> None:
    for package in ("starter", "solution"):
        found = {name: path.name for path in (ROOT / package).glob("*.py")
                 for name in extension_regions(path.read_text())}
        assert found == {e.name: e.file for e in EXTENSIONS.values()}, package
    for extension in EXTENSIONS.values():
        starter = extension_regions((ROOT / "starter" / extension.file).read_text())[extension.name]
        assert "TODO extension" in starter


@pytest.fixture(scope="module")
def starter_with_extensions() -> Dict[int, Verdict]:
    return verdicts_for(ROOT / "starter", extensions=True)


def test_the_starter_fails_every_extension_and_still_shows_the_nine_as_before(
        starter_with_extensions: Dict[int, Verdict]) -> None:
    assert passing(starter_with_extensions) == STARTER_GREEN
    for number in range(11, 11 + len(EXTENSION_ITEMS)):
        verdict = starter_with_extensions[number]
        assert verdict.status == "fail", verdict.message
        assert "labs/GUIDE.md section 11." in verdict.message and "starter/" in verdict.message


def test_the_solution_passes_every_extension() -> None:
    verdicts = verdicts_for(ROOT / "solution", extensions=True)
    assert passing(verdicts) == set(range(1, 10)) | set(range(11, 11 + len(EXTENSION_ITEMS))), \
        {n: v.message for n, v in verdicts.items() if v.status != "pass"}


@pytest.mark.parametrize("name", sorted(EXTENSIONS))
def test_each_extension_alone_flips_exactly_its_own_item(variant: Variant, name: str) -> None:
    verdicts = verdicts_for(variant("starter", extensions=(name,)), extensions=True)
    expected = STARTER_GREEN | {10 + int(name[1:])}
    assert passing(verdicts) == expected, unexpected(verdicts, expected)


@pytest.mark.skipif(not os.environ.get("MCP_LAB_SHIPPED"), reason="CI only: the tree must hold the shipped starter")
def test_ci_runs_on_the_shipped_starter() -> None:
    assert learner_work() == [], "starter/ is not the shipped starter"
