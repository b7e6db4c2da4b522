from __future__ import annotations

from typing import Any, Dict

import pytest

from solution.translate import (argument_errors, make_entry, to_anthropic_tool,
                                to_openai_tool)

TOOL: Dict[str, Any] = {
    "name": "close_ticket", "title": "Close a ticket", "description": "Close a ticket.",
    "inputSchema": {"type": "object", "properties": {"ticket_id": {"type": "string"}},
                    "required": ["ticket_id"], "additionalProperties": False},
    "annotations": {"destructiveHint": True, "readOnlyHint": False},
    "outputSchema": {"type": "object"},
}


def test_anthropic_shape_has_only_what_the_model_needs() -> None:
    entry = make_entry("tickets", TOOL, "mcp__tickets__close_ticket")
    assert to_anthropic_tool(entry) == {"name": "mcp__tickets__close_ticket",
                                        "description": "[from tickets] Close a ticket.",
                                        "input_schema": TOOL["inputSchema"]}


def test_openai_shape_wraps_a_function_with_parameters() -> None:
    entry = make_entry("tickets", TOOL, "m")
    assert to_openai_tool(entry) == {"type": "function", "function": {
        "name": "m", "description": "[from tickets] Close a ticket.", "parameters": TOOL["inputSchema"]}}


def test_what_the_model_cannot_see_stays_in_the_entry() -> None:
    entry = make_entry("tickets", TOOL, "m")
    assert entry.title == "Close a ticket"
    assert entry.output_schema == {"type": "object"}
    assert entry.annotations["destructiveHint"] is True


def test_missing_annotations_default_to_the_cautious_reading() -> None:
    entry = make_entry("s", {"name": "t", "inputSchema": {"type": "object"}}, "m")
    assert entry.annotations == {"readOnlyHint": False, "destructiveHint": True,
                                 "idempotentHint": False, "openWorldHint": True}
    assert entry.title == "t" and entry.description == "[from s] t"


def test_title_falls_back_to_the_annotation_title() -> None:
    entry = make_entry("s", {"name": "t", "inputSchema": {}, "annotations": {"title": "Tee"}}, "m")
    assert entry.title == "Tee"


def test_arguments_are_checked_against_the_input_schema() -> None:
    entry = make_entry("tickets", TOOL, "m")
    assert argument_errors(entry, {"ticket_id": "T-1"}) is None
    assert "ticket_id" in str(argument_errors(entry, {}))
    assert "is not of type 'string'" in str(argument_errors(entry, {"ticket_id": 5}))
    assert argument_errors(entry, ["not", "an", "object"]) == "arguments must be a JSON object"


DRAFT7_TUPLE = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                "properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}}}


def test_arguments_are_checked_with_the_draft_the_schema_names() -> None:
    entry = make_entry("s", {"name": "t", "inputSchema": DRAFT7_TUPLE}, "m")
    assert argument_errors(entry, {"pair": ["a", 1]}) is None
    assert "'b' is not of type 'integer' (at pair/1)" == argument_errors(entry, {"pair": ["a", "b"]})


@pytest.mark.parametrize("schema, words", [
    ({"type": "string"}, "not an object schema"),
    ("object", "not an object schema"),
    ({"type": "object", "properties": ["a"]}, "malformed 'properties'"),
    ({"type": "object", "required": "a"}, "malformed 'required'"),
])
def test_unusable_schemas_are_refused_with_a_reason(schema: object, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        make_entry("s", {"name": "t", "inputSchema": schema}, "m")


def test_a_schema_that_breaks_its_metaschema_is_caught_at_the_first_call() -> None:
    entry = make_entry("s", {"name": "t", "inputSchema": {"type": "object", "properties": {
        "a": {"type": "no-such-type"}}}}, "m")
    problem = argument_errors(entry, {"a": 1})
    assert problem is not None and "its inputSchema is not a valid JSON Schema" in problem
    assert argument_errors(entry, {"a": 1}) == problem  # checked once, remembered


def fan_out(levels: int, width: int = 10) -> Dict[str, Any]:
    """$defs that each reference the next `width` times: width ** levels paths for one value."""
    defs: Dict[str, Any] = {f"d{n}": {"anyOf": [{"$ref": f"#/$defs/d{n + 1}"}] * width} for n in range(levels)}
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}}


def test_a_schema_that_fans_out_is_given_up_on_after_a_budget_of_steps() -> None:
    # The reference's entries bound their checks (the core's check whatever they are given).
    from solution.host.patterns import MAX_STEPS, BoundedToolEntry
    entry = make_entry("s", {"name": "t", "inputSchema": fan_out(6)}, "t", BoundedToolEntry)
    # A million paths to a value that fits none of them: without a budget, minutes and gigabytes.
    said = argument_errors(entry, {"x": 5})
    assert said is not None and "could not be checked" in said and f"more than {MAX_STEPS} steps" in said


def test_an_honest_schema_with_references_is_checked_within_the_budget() -> None:
    entry = make_entry("s", {"name": "t", "inputSchema": fan_out(3, 2)}, "t")
    assert argument_errors(entry, {"x": "fine"}) is None
    assert "is not valid under any of the given schemas (at x)" in str(argument_errors(entry, {"x": 5}))


def test_the_budget_is_spent_per_check_not_per_process() -> None:
    entry = make_entry("s", {"name": "t", "inputSchema": fan_out(3, 2)}, "t")
    for _ in range(2000):  # each check starts with the whole budget
        assert argument_errors(entry, {"x": "fine"}) is None
