"""The fault suite, one test per scenario: the reference client holds up,
the note library keeps answering, the reason is clear, nothing is left."""

from __future__ import annotations

import pytest

from checks.dev.fault_lab import Scenario
from checks.dev.faults import SCENARIOS, run_scenario


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_the_client_survives(scenario: Scenario) -> None:
    outcome = run_scenario(scenario)
    assert not outcome.hung, outcome.account
    assert outcome.left_behind == [], f"processes left running: {outcome.left_behind}"
    assert outcome.survived, outcome.account
