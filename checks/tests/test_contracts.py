"""The contracts, as specifications: every region has its clauses, the guide
shows them as the judge holds them, the reference meets them without tripping
over its own inputs, the corpus is what the strategies draw, and a wrong
answer is red for the clause it breaks, with an input that shows it."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any, List

import anyio
import pytest

from checks.contracts import contracts, corpus, guide_blocks, hold, observe_all, render
from checks.contracts.clause import Clause
from checks.dev.contracts import draw, expected
from checks.dev.mutants.catalogue import CATALOGUE, LearnerMutant
from checks.exercises import EXERCISES, EXTENSIONS, extension_regions, regions
from checks.harness import Fail
from checks.hints import HINTS
from checks.target import ROOT, load_target

JUDGED = [str(n) for n in EXERCISES] + list(EXTENSIONS)
GUIDE = (ROOT / "labs" / "GUIDE.md").read_text(encoding="utf-8")


def test_every_region_has_a_contract_of_numbered_must_clauses() -> None:
    assert sorted(contracts()) == sorted(JUDGED)
    for region, contract in contracts().items():
        assert [c.id for c in contract.clauses] == [f"{region}.{n + 1}" for n in range(len(contract.clauses))]
        for clause in contract.clauses:
            assert clause.duty.startswith(("must ", "must not ")), clause.id
            assert clause.source, clause.id


@pytest.mark.parametrize("region", JUDGED)
def test_the_guide_shows_each_regions_clauses_as_the_judge_holds_them(region: str) -> None:
    # python -m checks.dev.contracts --guide rewrites the blocks
    assert guide_blocks(GUIDE).get(region) == render(region)


@pytest.mark.parametrize("region", JUDGED)
def test_the_guide_section_holding_the_clauses_is_the_one_the_hints_send_the_learner_to(region: str) -> None:
    before = GUIDE[:GUIDE.index(f"<!-- contract {region}:")]
    heading = [line for line in before.splitlines() if line.startswith("#")][-1]
    section = heading.lstrip("#").split(" ", 2)[1].rstrip(".")
    item = region if region.startswith("E") else str(EXERCISES[int(region)].items[-1])
    assert f"section {section}" in HINTS[item][1], (region, heading, HINTS[item][1])


@pytest.mark.shipped_starter
@pytest.mark.parametrize("region", JUDGED)
def test_the_starters_todo_sends_the_learner_to_the_section_holding_the_clauses(region: str) -> None:
    before = GUIDE[:GUIDE.index(f"<!-- contract {region}:")]
    section = [line for line in before.splitlines() if line.startswith("#")][-1].lstrip("#").split(" ", 2)[1]
    file = EXTENSIONS[region].file if region.startswith("E") else EXERCISES[int(region)].file
    text = (ROOT / "starter" / file).read_text(encoding="utf-8")
    body = extension_regions(text)[region] if region.startswith("E") else regions(text)[int(region)]
    assert f"The clauses the checks hold it to: labs/GUIDE.md section {section.rstrip('.')}." in body


CONSTANT = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")  # ID_CHARS, SECRET_NAME: a module's own


@pytest.mark.shipped_starter
@pytest.mark.parametrize("region", JUDGED)
def test_each_constant_a_clause_holds_the_code_to_is_named_by_the_regions_todo_and_hint(region: str) -> None:
    # A TODO that names one limit where the clause holds another leads a learner who follows it to red.
    named = {name for clause in contracts()[region].clauses for name in CONSTANT.findall(clause.duty)}
    file = EXTENSIONS[region].file if region.startswith("E") else EXERCISES[int(region)].file
    text = (ROOT / "starter" / file).read_text(encoding="utf-8")
    todo = extension_regions(text)[region] if region.startswith("E") else regions(text)[int(region)]
    item = region if region.startswith("E") else str(EXERCISES[int(region)].items[-1])
    assert {name for name in named if name not in todo} == set(), region
    assert {name for name in named if name not in HINTS[item][-1]} == set(), region


@pytest.mark.parametrize("region", JUDGED)
def test_the_corpus_starts_with_each_clauses_edges_and_is_what_the_strategies_draw(region: str) -> None:
    kept = corpus(region)
    for clause in contracts()[region].clauses:
        edges = [json.dumps(e, sort_keys=True) for e in clause.edges]
        assert [json.dumps(e, sort_keys=True) for e, _ in kept[clause.id][:len(edges)]] == edges, clause.id
        assert len(kept[clause.id]) > len(edges), clause.id
    first = contracts()[region].clauses[0]
    # Derandomised: the same inputs on every draw (compared as JSON: NaN is not equal to itself).
    assert json.dumps(draw(first)) == json.dumps(draw(first))


@pytest.mark.parametrize("region", JUDGED)
def test_what_the_corpus_says_the_reference_does_is_what_it_does_now(region: str) -> None:
    # The worker never loads the reference: each input carries what the reference
    # did, and a change to the reference must be followed by --write.
    for clause in contracts()[region].clauses:
        entries = corpus(region)[clause.id]
        now = expected(clause, [example for example, _ in entries])
        stale = [(example, want, seen) for (example, want), seen in zip(entries, now) if want != seen]
        assert not stale, (clause.id, stale[:2], "python -m checks.dev.contracts --write")


@pytest.mark.parametrize("region", JUDGED)
def test_the_reference_raises_only_where_its_clause_says_it_does(region: str) -> None:
    # A look that trips over its own input (a missing module, a wrong key) would
    # see the same exception in learner and reference, and pass wrong code.
    for clause in contracts()[region].clauses:
        for example, want in corpus(region)[clause.id]:
            if want.startswith("raised "):
                assert want.removeprefix("raised ") in clause.raises, (clause.id, example, want)


@pytest.mark.parametrize("region", JUDGED)
def test_the_reference_holds_its_own_contract(region: str) -> None:
    assert "clauses held over" in anyio.run(hold, load_target("solution"), region)


@pytest.mark.shipped_starter
@pytest.mark.parametrize("region", JUDGED)
def test_the_shipped_starter_breaks_every_regions_contract(region: str) -> None:
    with pytest.raises(Fail, match=rf"\(clause {region}\.\d+;"):
        anyio.run(hold, load_target("starter"), region)


CLAUSED = [m for m in CATALOGUE if any(said.startswith("clause ") for said in m.says)]


def wrong(tmp_path: Path, mutant: LearnerMutant) -> Any:
    package = tmp_path / "wrong"
    shutil.copytree(ROOT / "solution", package, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (package / mutant.where).write_text(mutant.text(), encoding="utf-8")
    return load_target(str(package))


def test_the_catalogue_has_wrong_answers_that_only_a_clause_catches() -> None:
    assert {m.region for m in CLAUSED} >= {"2", "3", "E3", "E5", "E6", "E8", "E9"}


@pytest.mark.parametrize("mutant", CLAUSED, ids=lambda m: f"{m.region}: {m.name}")
def test_a_wrong_answer_is_red_for_the_clause_it_breaks_with_the_input_that_shows_it(
        tmp_path: Path, mutant: LearnerMutant) -> None:
    # In memory, as the item's contract half judges it (the catalogue test runs the whole item).
    with pytest.raises(Fail) as failed:
        anyio.run(hold, wrong(tmp_path, mutant), mutant.region)
    message = str(failed.value)
    clause = next(said for said in mutant.says if said.startswith("clause "))
    assert f"({clause};" in message and "\nedit: " in message, message
    assert all(said in message for said in mutant.says if not said.startswith("clause ")), message


NO_PACKAGE: Any = None  # the looks below use none


def on_own_loop(look: Any, loop: str = "own") -> Clause:
    return Clause("T.1", "must do", "a test", look, loop=loop)


def test_on_a_loop_of_its_own_a_time_limit_is_met_by_the_clock_not_the_machine() -> None:
    async def slept(package: Any, seconds: float) -> Any:
        began = anyio.current_time()
        with anyio.move_on_after(seconds / 2):  # met in its turn, however long the machine takes
            await anyio.sleep(seconds)
        return [round(anyio.current_time() - began), abs(anyio.current_time() - time.monotonic()) > 86400]
    seen = anyio.run(observe_all, on_own_loop(slept), NO_PACKAGE, [3600, 7200])
    assert seen == ["returned [1800, true]", "returned [3600, true]"]


@pytest.mark.parametrize("loop", ["own", "alone"])
def test_a_keyboard_interrupt_out_of_a_task_ends_only_that_inputs_loop_and_is_observed(loop: str) -> None:
    async def spawned(package: Any, example: str) -> str:
        async def task() -> None:
            if example == "interrupt":
                await anyio.sleep(0)  # every input's task has begun (none is left never started)
                raise KeyboardInterrupt  # out of a task, asyncio ends the loop it runs on
        async with anyio.create_task_group() as group:
            group.start_soon(task)
        return example
    seen = anyio.run(observe_all, on_own_loop(spawned, loop), NO_PACKAGE, ["before", "interrupt", "after"])
    assert seen == ['returned "before"', "raised KeyboardInterrupt", 'returned "after"']


def test_the_judge_cancelled_while_an_own_loop_runs_is_cancelled_and_the_thread_ends_on_its_own() -> None:
    started, finish = threading.Event(), threading.Event()

    def blocking(package: Any, example: Any) -> str:
        started.set()
        finish.wait(10)
        return "done"

    async def judge() -> bool:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(observe_all, on_own_loop(blocking), NO_PACKAGE, [1])
                await anyio.to_thread.run_sync(started.wait, 10)
                scope.cancel()
        return scope.cancelled_caught
    assert anyio.run(judge)
    finish.set()


def on_trio(look: Any, loop: str = "own") -> Clause:
    return Clause("T.1", "must do", "a test", look, loop=loop, backend="trio")


def test_on_trio_the_clock_is_virtual_and_a_time_limit_is_met_in_its_turn() -> None:
    async def slept(package: Any, seconds: float) -> Any:
        began = anyio.current_time()
        with anyio.move_on_after(seconds / 2):
            await anyio.sleep(seconds)
        return round(anyio.current_time() - began)
    assert anyio.run(observe_all, on_trio(slept), NO_PACKAGE, [3600, 7200]) == ["returned 1800", "returned 3600"]


def test_on_trio_an_asyncio_only_call_is_what_is_observed_for_the_input_that_made_it() -> None:
    import asyncio

    async def waited(package: Any, example: str) -> str:
        async def child() -> None:  # a task the input's code starts: its calls are that input's
            if example == "wait_for":
                await asyncio.wait_for(anyio.sleep(0), 5)
            elif example == "loop time":
                asyncio.get_running_loop().time()
            elif example == "sleep(0)":
                await asyncio.sleep(0)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(child)
        except Exception:  # caught, as a learner's try/except would: the call is still what was seen
            return "caught it"
        return "anyio alone"
    seen = anyio.run(observe_all, on_trio(waited), NO_PACKAGE, ["anyio", "wait_for", "loop time", "sleep(0)"])
    assert seen[0] == 'returned "anyio alone"'
    assert seen[1].startswith("called asyncio.wait_for, which works only on asyncio's event loop"), seen[1]
    assert seen[2].startswith("called asyncio.get_running_loop().time,"), seen[2]
    assert seen[3] == 'returned "caught it"', seen[3]  # asyncio.sleep(0) asks no loop: trio refuses its yield


def test_on_trio_an_asyncio_only_call_that_escapes_is_named_with_the_learners_line(tmp_path: Path) -> None:
    mutant = LearnerMutant("asyncio.sleep(0) in the re-list", "E2", "            self._task_group.start_soon(self._relist, alias)\n",
                           "            import asyncio\n\n            async def soon() -> None:\n"
                           "                await asyncio.sleep(0)\n                await self._relist(alias)\n"
                           "            self._task_group.start_soon(soon)\n", "E2", ())
    clause = next(c for c in contracts()["E2"].clauses if c.backend == "trio")
    example = clause.edges[0]
    seen = anyio.run(observe_all, clause, wrong(tmp_path, mutant), [example], True)[0]
    assert seen.startswith("called asyncio.sleep, which works only on asyncio"), seen
    assert "aggregator.py:" in seen and "in soon: await asyncio.sleep(0)" in seen, seen


def test_where_trio_is_not_installed_its_clauses_are_not_judged_and_the_account_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import checks.contracts as judged
    monkeypatch.setattr(judged, "trio_missing", lambda: "trio is not installed (pip install trio)")
    said = anyio.run(hold, load_target("solution"), "4")
    assert "(4.6 not judged: trio is not installed (pip install trio))" in said, said
    assert said.startswith(f"{len(contracts()['4'].clauses) - 1} clauses held over"), said
