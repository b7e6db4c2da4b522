"""Wrong solutions outside the catalogue's regions, and a slow right one.

The wrong answers of each region live in `checks/dev/mutants/catalogue.py` and are
judged by `test_mutants.py`; these are the cases that need more than "red on
its item": a loop that is wrong outside any region, and a right answer whose
cost the evidence must show without turning it red."""

from __future__ import annotations

from checks.tests.conftest import Variant, verdicts_for


def test_an_agent_loop_that_stops_at_an_error_result_is_red_on_item_9(variant: Variant) -> None:
    old = "            messages.append(Message(\"tool\", tool_call_id=call.id, result=redacted_json(result)))\n"
    new = old + "            if result.get(\"isError\"):\n                run.answer = \"failed\"\n                return run\n"
    verdict = verdicts_for(variant("solution", edits={"agent.py": (old, new)}), only={9})[9]
    assert verdict.status == "fail"
    assert "tickets received 1 schedule_followup call(s)" in verdict.message


def test_discovery_one_server_after_another_stays_green_and_its_evidence_says_so(variant: Variant) -> None:
    old = ("        async with anyio.create_task_group() as group:\n"
           "            for spec in self.eager_servers():\n"
           "                group.start_soon(connect_one, spec)\n")
    new = "        for spec in self.eager_servers():\n            await connect_one(spec)\n"
    verdict = verdicts_for(variant("solution", edits={"aggregator.py": (old, new)}), only={8})[8]
    assert verdict.status == "pass", verdict.message
    assert "discovery did not overlap: one server waited for the other" in verdict.message
    assert "labs/GUIDE.md section 6" in verdict.message


def test_the_reference_discovery_is_said_to_overlap() -> None:
    from checks.target import ROOT
    verdict = verdicts_for(ROOT / "solution", only={8})[8]
    assert verdict.status == "pass" and "discovery overlapped" in verdict.message, verdict.message
