"""What a question costs with the provider's prompt cache (issue 36), measured
against loopback stand-ins that bill by the published rules: no real API."""

from __future__ import annotations

import anyio
import pytest

from checks.dev.cost import (LARGE, LIST_CHANGE, LONG_RESULTS, SHORT_CALLS, SIX_TURNS, CostRun, Scenario, cost,
                             read_after_change)


def measured(scenario: Scenario, mode: str, api: str) -> CostRun:
    found: CostRun = anyio.run(cost, scenario, mode, api)
    assert not found.errors, found.errors  # the figures are for a run that went as scripted
    return found


def test_a_29_tool_full_table_run_of_six_tool_turns_pays_for_its_table_about_once() -> None:
    found = measured(SIX_TURNS, "full", "anthropic")
    assert found.run.model_turns == 7 and found.bill.uncached > 7 * 4700
    assert found.fraction <= 0.31, found.bill.line()


def test_four_long_results_are_each_paid_for_about_once() -> None:
    found = measured(LONG_RESULTS, "full", "anthropic")
    assert found.run.model_turns == 5 and found.fraction <= 0.50, found.bill.line()


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_after_a_tool_is_added_the_next_request_still_reads_most_of_the_last_prompt(api: str) -> None:
    found = measured(LIST_CHANGE, "full", api)
    first, second = found.stand_in.tables[:2]
    assert second[:-1] == first and len(second) == 30  # the table the model saw, then the new tool
    assert read_after_change(found) >= 0.75, found.stand_in.usages[:2]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_default_run_of_the_29_tool_question_is_no_dearer_than_uncached(api: str) -> None:
    found = measured(SIX_TURNS, "default", api)
    assert found.mode == "meta" and found.run.model_turns == 19  # 4,700 tokens: past the threshold
    assert found.bill.billed <= found.bill.uncached, found.bill.line()


async def meta_over_full(calls: int, office_tools: int, api: str) -> "tuple[float, bool]":
    """(the meta-tools' bill / the full table's, whether `ask` picks the meta-tools) for a
    question of `calls` calls on a table grown by `office_tools` workplace tools."""
    question = Scenario(f"{calls} calls", LARGE, SHORT_CALLS[:calls], office_tools=office_tools)
    full, meta = await cost(question, "full", api), await cost(question, "meta", api)
    picked = await cost(question, "default", api)
    return meta.bill.billed / full.bill.billed, picked.mode == "meta"


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_the_threshold_sits_where_two_and_three_call_questions_cost_about_the_same(api: str) -> None:
    below = anyio.run(meta_over_full, 3, 6, api)  # 2,623 tokens
    assert below[0] > 1 and not below[1], below  # the full table: cheaper, and chosen
    for calls in (2, 3):
        above = anyio.run(meta_over_full, calls, 10, api)  # 3,667 tokens
        assert above[0] < 1 and above[1], (calls, above)  # the meta-tools: cheaper, and chosen
