"""What a question costs with the provider's prompt cache (issue 36), measured
against loopback stand-ins that bill by the published rules: no real API."""

from __future__ import annotations

import anyio
import pytest

from checks.dev.cost import LONG_RESULTS, SIX_TURNS, CostRun, Scenario, cost


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
