"""Mutation testing, as specifications: every wrong answer in the learner
catalogue is red on its item for its reason; the tool's own parts hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.dev.mutants.__main__ import learner_verdict, main
from checks.dev.mutants.catalogue import CATALOGUE, LearnerMutant
from checks.dev.mutants.equivalents import BadEquivalent, read_equivalents
from checks.dev.mutants.judge import judge
from checks.dev.mutants.regions import REGIONS, solution_text


@pytest.mark.parametrize("mutant", CATALOGUE, ids=lambda m: f"{m.region}: {m.name}")
def test_each_learner_mutant_is_red_on_its_item_for_its_reason(mutant: LearnerMutant) -> None:
    assert learner_verdict(mutant, judge(mutant.where, mutant.text(), (mutant.red,))) is None


def test_every_region_has_learner_mutants_that_edit_it() -> None:
    for name, region in REGIONS.items():
        own = [m for m in CATALOGUE if m.region == name and m.where == region.file]
        assert own, f"no learner mutant for region {name}"
        text = solution_text(region)
        body_at = text.index(region.body(text))
        for mutant in own:  # each edit begins inside the region's lines
            assert body_at <= text.index(mutant.old) < body_at + len(region.body(text)), mutant.name


def test_the_unchanged_solution_is_not_killed() -> None:
    region = REGIONS["3"]
    judged = judge(region.file, solution_text(region), region.items)
    assert not judged.killed and set(judged.verdicts) == {"5", "6"}, judged


def test_a_learner_mutant_red_for_another_reason_is_reported() -> None:
    mutant = next(m for m in CATALOGUE if m.region == "1")
    wrong = LearnerMutant(mutant.name, "1", mutant.old, mutant.new, "2", ("words no message holds",))
    said = learner_verdict(wrong, judge(wrong.where, wrong.text(), ("2",)))
    assert said is not None and "does not say ['words no message holds']" in said


def test_every_equivalent_line_gives_its_reason(tmp_path: Path) -> None:
    assert all(read_equivalents().reasons.values())
    bad = tmp_path / "equivalent.txt"
    bad.write_text("E1 | AddNot | return not x\n")
    with pytest.raises(BadEquivalent, match="REASON"):
        read_equivalents(bad)


def test_an_unknown_region_is_refused_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["E12"]) == 2
    assert "regions are 1 to 4 and E1 to E11; got E12" in capsys.readouterr().err
