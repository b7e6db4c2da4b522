"""Wrong solutions outside the catalogue's regions, and the evidence a right one is given.

The wrong answers of each region live in `checks/dev/mutants/catalogue.py` and are
judged by `test_mutants.py`; these are the cases that need more than "red on
its item": a loop that is wrong outside any region, and the account of a right
discovery. (Discovery one server after another was green here, with evidence
saying so, until issue 44 made discovering them at once a duty: clause 4.5, in
the catalogue.)"""

from __future__ import annotations

from checks.tests.conftest import Variant, verdicts_for


def test_an_agent_loop_that_stops_at_an_error_result_is_red_on_item_9(variant: Variant) -> None:
    old = "            messages.append(Message(\"tool\", tool_call_id=call.id, result=redacted_json(result)))\n"
    new = old + "            if result.get(\"isError\"):\n                run.answer = \"failed\"\n                return run\n"
    verdict = verdicts_for(variant("solution", edits={"agent.py": (old, new)}), only={9})[9]
    assert verdict.status == "fail"
    assert "tickets received 1 schedule_followup call(s)" in verdict.message


def test_the_reference_discovery_is_said_to_overlap() -> None:
    from checks.target import ROOT
    verdict = verdicts_for(ROOT / "solution", only={8})[8]
    assert verdict.status == "pass" and "discovery overlapped" in verdict.message, verdict.message
