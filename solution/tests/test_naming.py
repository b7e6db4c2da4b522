"""model_tool_name: legal for every model API, unique, stable."""

from __future__ import annotations

import random
import string

from solution.naming import MODEL_NAME_PATTERN, model_tool_name

MCP_CHARS = string.ascii_letters + string.digits + "_-."


def test_a_plain_name_is_prefixed_with_the_alias() -> None:
    assert model_tool_name("notes", "read_note") == "mcp__notes__read_note"


def test_the_alias_not_the_server_decides_the_prefix() -> None:
    assert model_tool_name("work-notes", "search") != model_tool_name("home_notes", "search")


def test_a_dot_is_replaced_and_a_hash_keeps_it_apart_from_its_lookalike() -> None:
    dotted, underscored = model_tool_name("t", "queue.stats"), model_tool_name("t", "queue_stats")
    assert MODEL_NAME_PATTERN.match(dotted) and dotted != underscored
    assert underscored == "mcp__t__queue_stats"


def test_long_names_are_cut_to_64_and_twins_stay_apart() -> None:
    base = "export_ticket_history_including_comments_and_attachments_for_audit_as_"
    csv, json_ = model_tool_name("tickets", base + "csv"), model_tool_name("tickets", base + "json")
    assert len(csv) == len(json_) == 64 and csv != json_
    assert csv.startswith("mcp__tickets__export_ticket_history")


def test_the_hash_covers_where_alias_ends_and_name_begins() -> None:
    assert model_tool_name("a", "b.c") != model_tool_name("a.b", "c")


def test_names_are_stable_between_runs() -> None:
    assert model_tool_name("tickets", "x" * 100) == model_tool_name("tickets", "x" * 100)


def test_every_legal_mcp_name_gives_a_legal_unique_model_name() -> None:
    rng = random.Random(7)
    seen: dict[str, tuple[str, str]] = {}
    for _ in range(5000):
        alias = "".join(rng.choice(string.ascii_lowercase + "-_") for _ in range(rng.randint(1, 12)))
        name = "".join(rng.choice(MCP_CHARS) for _ in range(rng.randint(1, 128)))
        model = model_tool_name(alias, name)
        assert MODEL_NAME_PATTERN.match(model), model
        assert seen.setdefault(model, (alias, name)) == (alias, name)
