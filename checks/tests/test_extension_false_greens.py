"""Wrong solutions of E6 (tasks), E7 (elicitation) and E8 (code mode): each is
red on its own item, for the right reason, and the shipped region is green."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

from checks.exercises import extension_regions
from checks.extensions import by_name
from checks.harness import Verdict, run_items
from checks.target import ROOT, load_target
from checks.tests.conftest import Variant

SETTLED = extension_regions((ROOT / "solution" / "tasks.py").read_text())["E6"]
FIELD = extension_regions((ROOT / "solution" / "elicitation.py").read_text())["E7"]
LITERAL = extension_regions((ROOT / "solution" / "stubs.py").read_text())["E8"]


def verdict(directory: Path, name: str) -> Verdict:
    (found,) = run_items([by_name()[name]], load_target(str(directory)))
    return found


def e6(variant: Variant, body: str) -> Verdict:
    return verdict(variant("solution", edits={"tasks.py": (SETTLED, body)}), "E6")


def e7(variant: Variant, body: str) -> Verdict:
    return verdict(variant("solution", edits={"elicitation.py": (FIELD, body)}), "E7")


def test_a_wait_that_ends_only_on_completed_is_red_on_the_failed_task(variant: Variant) -> None:
    only_completed = SETTLED.replace('    if state.status == "failed":', '    if False:')
    assert only_completed != SETTLED
    found = e6(variant, only_completed)
    assert found.status == "fail" and "status failed ends the wait" in found.message
    assert "did not finish within 5 s" in found.message  # it polled until its limit


def test_a_wait_that_stops_at_input_required_is_red(variant: Variant) -> None:
    early = SETTLED.replace('    return None\n', '    if state.status == "input_required":\n'
                            '        return error_result("the task needs input")\n    return None\n')
    assert early != SETTLED
    found = e6(variant, early)
    assert found.status == "fail" and "input_required means the task waits" in found.message


def test_a_made_up_result_is_red_against_the_journal(variant: Variant) -> None:
    faked = SETTLED.replace('        return state.result\n',
                            '        return {"content": [{"type": "text", "text": "done"}]}\n')
    assert faked != SETTLED
    found = e6(variant, faked)
    assert found.status == "fail" and "the last answer said 'completed'" in found.message


def test_a_form_of_text_fields_only_is_red(variant: Variant) -> None:
    everything_text = '''    return FormField(name, "text", str(name), "", required)
'''
    found = e7(variant, everything_text)
    assert found.status == "fail" and "priority as a choice of low/normal/high" in found.message


def test_a_form_that_takes_any_type_is_red(variant: Variant) -> None:
    lenient = FIELD.replace('        raise Unsupported(f"field {name!r} is of type {kind!r}, which a form cannot ask for")',
                            '        made.kind = "text"')
    assert lenient != FIELD
    found = e7(variant, lenient)
    assert found.status == "fail" and "object field cannot be shown" in found.message


def test_a_form_that_never_flags_secrets_is_red(variant: Variant) -> None:
    careless = FIELD.replace("    made.secret = bool(", "    made.secret = False and bool(")
    assert careless != FIELD
    found = e7(variant, careless)
    assert found.status == "fail" and "flagged secret" in found.message


def e8(variant: Variant, body: str) -> Verdict:
    return verdict(variant("solution", edits={"stubs.py": (LITERAL, body)}), "E8")


def test_enums_typed_as_plain_strings_are_red_because_the_script_ran(variant: Variant) -> None:
    found = e8(variant, '    return "str"\n')
    assert found.status == "fail" and "the script ran: its search on line 3 reached the server" in found.message


def test_one_hard_coded_literal_for_every_enum_is_red(variant: Variant) -> None:
    found = e8(variant, '    return "Literal[\'low\', \'normal\', \'high\']"\n')
    assert found.status == "fail" and "a script with allowed values (priority='high')" in found.message


def test_values_written_without_quotes_are_red(variant: Variant) -> None:
    unquoted = LITERAL.replace("shown_values.append(repr(value))", "shown_values.append(str(value))")
    assert unquoted != LITERAL
    found = e8(variant, unquoted)  # names, not values: the checker gives up on them and lets anything by
    assert found.status == "fail" and "the script ran" in found.message


def test_the_shipped_regions_are_green() -> None:
    verdicts: Dict[str, Verdict] = {name: verdict(ROOT / "solution", name) for name in ("E6", "E7", "E8")}
    assert all(v.status == "pass" for v in verdicts.values()), verdicts
