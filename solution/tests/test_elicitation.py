"""A server's question as a form: which schemas become which fields, what is
refused, how answers are checked, and how a terminal reads them."""

from __future__ import annotations

import io
import math
from typing import Any, Dict, List

import anyio

import pytest

from solution.elicitation import Question, Unsupported, field_from_schema, question_from
from solution.lifecycle.forms import answer
from solution.commands.prompts import TaskLines, describe, read_value, terminal_form
from solution.commands.terminal import Terminal
from solution.tasks import TaskState

SCHEMA = {"type": "object", "required": ["size"],
          "properties": {"size": {"type": "integer", "minimum": 1, "maximum": 3},
                         "colour": {"type": "string", "enum": ["red", "blue"], "enumNames": ["Red", "Blue"]},
                         "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"},
                                                                       {"const": "b", "title": "B"}]}},
                         "email": {"type": "string", "format": "email"},
                         "ok": {"type": "boolean", "default": True}}}


def test_each_simple_kind_becomes_its_field() -> None:
    question = question_from("shop", {"message": "Order?", "requestedSchema": SCHEMA})
    fields = {f.name: f for f in question.fields}
    assert (fields["size"].kind, fields["size"].minimum, fields["size"].maximum, fields["size"].required) == \
        ("integer", 1, 3, True)
    assert fields["colour"].options == [("red", "Red"), ("blue", "Blue")]
    assert fields["tags"].kind == "choices" and [v for v, _ in fields["tags"].options] == ["a", "b"]
    assert (fields["email"].kind, fields["email"].format) == ("text", "email")
    assert fields["ok"].kind == "boolean" and fields["ok"].default is True


@pytest.mark.parametrize("schema, words", [({"type": "object"}, "type 'object'"),
                                           ({"type": "string", "format": "ipv4"}, "format"),
                                           ({"type": "array", "items": {"type": "string"}}, "fixed set"),
                                           ("nope", "no schema")])
def test_what_a_form_cannot_show_is_refused_with_the_reason(schema: Any, words: str) -> None:
    with pytest.raises(Unsupported, match=words):
        field_from_schema("x", schema, False)


@pytest.mark.parametrize("name, schema", [("password", {"type": "string"}),
                                          ("key", {"type": "string", "title": "Your API key"}),
                                          ("x", {"type": "string", "description": "a GitHub token"})])
def test_a_field_that_asks_for_a_credential_is_flagged(name: str, schema: Dict[str, Any]) -> None:
    assert field_from_schema(name, schema, True).secret
    assert "must not ask" in describe(field_from_schema(name, schema, True))


def test_ordinary_fields_are_not_flagged() -> None:
    assert not field_from_schema("keyword", {"type": "string", "title": "Search words"}, True).secret


@pytest.mark.anyio
async def test_without_anyone_to_ask_or_with_a_url_form_the_answer_is_decline() -> None:
    assert (await answer(None, "s", {"requestedSchema": SCHEMA}))["action"] == "decline"

    async def person(question: Question) -> Dict[str, Any]:
        raise AssertionError("never asked")
    url = await answer(person, "s", {"mode": "url", "url": "https://example.com", "message": "m"})
    assert url["action"] == "decline" and "mode 'url'" in str(url["_meta"])


@pytest.mark.anyio
async def test_an_answer_that_breaks_the_schema_is_never_sent() -> None:
    async def person(question: Question) -> Dict[str, Any]:
        return {"action": "accept", "content": {"size": 9}}
    sent = await answer(person, "s", {"message": "m", "requestedSchema": SCHEMA})
    assert sent["action"] == "cancel" and "content" not in sent and "maximum" in str(sent["_meta"])


def test_typed_answers_are_read_by_kind() -> None:
    fields = {f.name: f for f in question_from("s", {"requestedSchema": SCHEMA}).fields}
    assert read_value(fields["size"], "2") == (2, None)
    assert read_value(fields["size"], "7")[1] == "it must be between 1 and 3"
    assert read_value(fields["colour"], "2") == ("blue", None)
    assert read_value(fields["colour"], "red") == ("red", None)
    assert read_value(fields["tags"], "1, b") == (["a", "b"], None)
    assert read_value(fields["ok"], "n") == (False, None)
    assert read_value(fields["ok"], "maybe")[1] == "answer y or n"


@pytest.mark.anyio
async def test_the_terminal_form_asks_field_by_field_and_marks_the_servers_words() -> None:
    typed: List[str] = ["9", "3", "", "", "me@example.com", "y"]
    out = io.StringIO()
    ask = terminal_form(Terminal(lambda prompt: typed.pop(0), out))
    question = question_from("shop", {"message": "Order?\x1b[2J", "requestedSchema": SCHEMA})
    reply = await ask(question)
    assert reply == {"action": "accept", "content": {"size": 3, "email": "me@example.com", "ok": True}}
    shown = out.getvalue()
    assert "server 'shop' asks" in shown and "\x1b" not in shown and "between 1 and 3" in shown


@pytest.mark.anyio
async def test_typing_decline_at_any_prompt_declines() -> None:
    ask = terminal_form(Terminal(lambda prompt: "!decline", io.StringIO()))
    assert await ask(question_from("s", {"requestedSchema": SCHEMA})) == {"action": "decline"}


def test_task_lines_show_changes_once() -> None:
    out = io.StringIO()
    lines = TaskLines(Terminal(out=out))
    for status, message in [("working", "a"), ("working", "a"), ("input_required", "q"), ("completed", "")]:
        lines("tickets", TaskState("t1", status, message))
    shown = out.getvalue().splitlines()
    assert [line.split(": ")[1] if ": " in line else line for line in shown][0].startswith("working")
    assert len(shown) == 3 and "completed" in shown[-1]


@pytest.mark.anyio
async def test_a_status_line_waits_until_the_open_question_is_answered() -> None:
    """The terminal has one owner: a task's status line never lands inside a prompt;
    it follows the question, the latest state of each task once."""
    out = io.StringIO()
    terminal = Terminal(lambda prompt: "", out)
    lines = TaskLines(terminal, per_second=math.inf)  # every change is a line: the clock decides nothing
    lines("tickets", TaskState("t1", "working", "batch 1"))
    async with terminal.turn("server tickets"):
        terminal.say("  Format (choice) > ")
        for n in (2, 3):
            lines("tickets", TaskState("t1", "working", f"batch {n}"))
        lines("tickets", TaskState("t2", "input_required", "asking"))
        assert out.getvalue().endswith("  Format (choice) > ")  # nothing inside the prompt
        terminal.say("csv\n")
    shown = out.getvalue().splitlines()
    assert [line.split(": ", 1)[1] for line in shown if line.startswith("  task")] == \
        ["working: batch 1", "working: batch 3", "input_required: asking"]
    assert shown.index("  Format (choice) > csv") < shown.index("  task t2 on tickets: input_required: asking")


@pytest.mark.anyio
async def test_a_form_and_a_consent_question_take_turns_and_never_share_an_answer() -> None:
    """Two questions at once: the second waits until the first has all its answers,
    so a 'y' typed for one can never be read by the other."""
    typed: List[str] = ["3", "", "", "a@b.c", "y", "n"]
    reads: List[str] = []

    def read(prompt: str) -> str:
        reads.append(terminal.holder)
        return typed.pop(0)
    terminal = Terminal(read, io.StringIO())
    form = terminal_form(terminal)
    answers: Dict[str, Any] = {}

    async def consent() -> None:
        async with terminal.turn("consent for notes"):
            answers["consent"] = await terminal.read("Allow? ")

    async def ask() -> None:
        answers["form"] = await form(question_from("shop", {"message": "Order?", "requestedSchema": SCHEMA}))
    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        group.start_soon(consent)
    assert reads == ["server shop"] * 5 + ["consent for notes"]
    assert answers == {"form": {"action": "accept", "content": {"size": 3, "email": "a@b.c", "ok": True}},
                       "consent": "n"}


@pytest.mark.anyio
async def test_a_cancelled_question_does_not_wait_for_enter() -> None:
    import threading
    never = threading.Event()
    terminal = Terminal(lambda prompt: str(never.wait(60)), io.StringIO())  # a person who never types
    with anyio.move_on_after(0.2) as scope:  # stands in for Ctrl-C or SIGTERM cancelling the run
        async with terminal.turn("consent for notes"):
            await terminal.read("Allow? ")
    assert scope.cancelled_caught  # the read was abandoned, not waited for
    never.set()


@pytest.mark.anyio
async def test_a_question_out_of_the_blue_is_declined_without_being_shown() -> None:
    from solution.lifecycle.server_requests import DECLINED, answer_server_request
    shown_to: List[Any] = []

    async def person(question: Any) -> Dict[str, Any]:
        shown_to.append(question)
        return {"action": "accept", "content": {"size": 1}}
    ask = {"jsonrpc": "2.0", "id": 0, "method": "elicitation/create",
           "params": {"message": "Allow?", "requestedSchema": SCHEMA}}
    idle = await answer_server_request("old", person, ask, busy=False)
    assert idle["result"]["action"] == "decline" and DECLINED in idle["result"]["_meta"] and not shown_to
    working = await answer_server_request("old", person, ask, busy=True)
    assert working["result"]["action"] == "accept" and len(shown_to) == 1


def test_a_huge_choice_is_listed_in_part_and_a_pattern_is_shown() -> None:
    from solution.elicitation import form_fields
    many, coded = form_fields({"type": "object", "properties": {
        "city": {"type": "string", "enum": [f"c{n}" for n in range(200_000)]},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"}}})
    line = describe(many)
    assert "20=c19" in line and "21=" not in line and "and 199,980 more: type the value itself" in line
    assert len(line) < 2000
    assert read_value(many, "c123456") == ("c123456", None)  # any value can still be typed
    assert "matching ^[A-Z]{3}$" in describe(coded)


def test_an_answer_to_a_schema_that_fans_out_is_given_up_on_not_expanded() -> None:
    from solution.elicitation import Question
    from solution.lifecycle.forms import answer_problem
    defs: Dict[str, Any] = {f"d{n}": {"anyOf": [{"$ref": f"#/$defs/d{n + 1}"}] * 10} for n in range(6)}
    defs["d6"] = {"type": "string", "maxLength": 1}
    schema = {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}}
    said = answer_problem(Question("s", "?", [], schema), {"x": "too long"})
    assert said is not None and "could not be checked" in said


def test_pin_is_a_secret_only_when_it_means_a_pin() -> None:
    from solution.elicitation import field_from_schema
    version = field_from_schema("version", {"type": "string", "description": "pin the version to keep"}, False)
    assert not version.secret
    for name, schema in (("pin", {"type": "string"}), ("code", {"type": "string", "title": "Card PIN"}),
                         ("x", {"type": "string", "description": "your pin code"})):
        assert field_from_schema(name, schema, False).secret, name


SEP_1034 = {"type": "object", "properties": {
    "name": {"type": "string", "default": "John Doe"}, "age": {"type": "integer", "default": 30},
    "score": {"type": "number", "default": 95.5},
    "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
    "verified": {"type": "boolean", "default": True},
    "odd": {"type": "integer", "minimum": 0, "maximum": 10, "default": 99},  # out of range: ignored
    "kind": {"type": "string", "enum": ["a", "b"], "default": "c"}}}  # not a choice: ignored


def test_enter_takes_each_fields_default_and_the_prompt_says_so() -> None:
    """SEP-1034: a field's default is shown, and Enter accepts it; a default the
    field could not accept is neither shown nor sent."""
    prompts: List[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        return ""

    question = question_from("srv", {"message": "m", "requestedSchema": SEP_1034})
    got = anyio.run(terminal_form(Terminal(read=read, out=io.StringIO())), question)
    assert got == {"action": "accept", "content": {"name": "John Doe", "age": 30, "score": 95.5,
                                                   "status": "active", "verified": True}}
    assert "Enter for John Doe" in prompts[0] and "Enter for y" in prompts[4]
    assert not any("Enter for 99" in p or "Enter for c" in p for p in prompts)
