"""What a question costs with the provider's prompt cache (issue 36), measured
against loopback stand-ins that bill by the published rules: no real API."""

from __future__ import annotations

import anyio
import pytest

from checks.dev.cost import LIST_CHANGE, LONG_RESULTS, SIX_TURNS, CostRun, Scenario, cost


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
    tables = found.stand_in.tables
    added = next(i for i, names in enumerate(tables) if len(names) > len(tables[0]))
    assert added == 1 and tables[added][:-1] == tables[0]  # the one seen before, then the new tool
    earlier, read = found.stand_in.prompt(added - 1), found.stand_in.read(added)
    assert read >= 0.75 * earlier, (read, earlier)
