"""E6 and E7: when a task's snapshot ends the wait (`settled`), and one
property of a server's requested schema as a form field (`field_from_schema`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List

from checks.contracts.clause import Clause, Contract, Told, brief
from checks.contracts.wire import json_values
from checks.target import Target

ABSENT = "<absent>"
# Server text the reference shows as it came (no control characters, short):
# the clauses judge what an error result names, not how text is made safe.
PLAIN = "abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789-_.:'\"é"


# -- E6: settled --------------------------------------------------------------------


def ending(package: Target, case: Dict[str, Any]) -> Told:
    TaskState = package.module("tasks").TaskState
    # Copies: a settled that changes the stored result in place must not change what it is compared with.
    state = TaskState(case["task"], case["status"], case.get("message", ""),
                      result=json.loads(json.dumps(case.get("result"))),
                      error=json.loads(json.dumps(case.get("error"))))
    out = package.module("tasks").settled(state)
    if out is None:
        return Told("said the task is still running (None)")
    if case["status"] == "completed":
        return Told("returned the stored result" if out == case.get("result") else f"returned {out!r:.120}")
    if not isinstance(out, dict):
        return Told(f"returned {out!r:.80}, not a tool result")
    text = " ".join(str(b.get("text", "")) for b in out.get("content") or [] if isinstance(b, dict))
    facts = ["isError true" if out.get("isError") is True else "no isError true"]
    error = case.get("error")
    if case["status"] == "failed" and isinstance(error, dict):
        if isinstance(error.get("code"), int):
            facts.append(("naming" if str(error["code"]) in text else "not naming") + " the error's code")
        if isinstance(error.get("message"), str) and error["message"]:
            facts.append(("naming" if error["message"] in text else "not naming") + " its message")
    elif case.get("message"):
        facts.append(("naming" if case["message"] in text else "not naming") + " the statusMessage")
    if case["status"] == "cancelled":
        facts.append("saying it was cancelled" if "cancel" in text.lower() else "not saying it was cancelled")
    if case["status"] == "failed":
        facts.append("saying it failed" if "fail" in text.lower() else "not saying it failed")
    # A server's words are cut and shown, never taken whole (tasks.py: ID_CHARS, REASON_CHARS).
    facts.append(f"{'within' if len(text) <= TEXT_BOUND else 'past'} {TEXT_BOUND} characters")
    facts.append("control characters shown, not sent" if not CONTROL.search(text) else "a raw control character in it")
    return Told("returned an error result with " + ", ".join(facts))


TEXT_BOUND = 500  # the most an error result's words run to when every text a server sent was cut
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
LONG = "Disk full \x1b]52;c;cGF3bmVk\x07 " * 40  # 1,200 characters, an escape sequence in each line
# A task id is the server's word too: of any length, with what a terminal obeys (OSC 52 writes the clipboard).
LONG_ID = "t-\x1b]52;c;cGF3bmVk\x07" + "x" * 2000
# An error's code as a server may send it: past a float, a string that carries an escape, no number.
ODD_CODES = [10 ** 600, "-32603\x1b]52;c;cGF3bmVk\x07", "E" * 600, 1.5, True, None]


def show_task(case: Dict[str, Any]) -> str:
    shown = {k: v for k, v in case.items() if k != "task"}
    task_id = case["task"]
    named = f"task id {task_id!r}" if len(task_id) <= 40 else f"a {len(task_id):,}-character task id {task_id[:24]!r}…"
    return brief(f"a task snapshot ({named}) {shown!r}")[:240]


def snapshots(st: Any, statuses: List[str]) -> Any:
    words = st.one_of(st.text(PLAIN, max_size=24), st.text(PLAIN, max_size=24),
                      st.sampled_from([LONG, "stopped \x1b[2J\r by the operator"]))
    code = st.one_of(st.integers(-33000, 40000), st.integers(-33000, 40000), st.sampled_from(ODD_CODES))
    error = st.one_of(st.none(), st.fixed_dictionaries({"code": code, "message": words}),
                      st.sampled_from(["disk full", 42, [], True]))  # no error object at all
    result = st.one_of(st.fixed_dictionaries({"content": st.just([{"type": "text", "text": "done"}])},
                                             optional={"isError": st.booleans(),
                                                       "structuredContent": json_values(st)}),
                       st.just({}))
    task_id = st.one_of(st.just("t-1"), st.text(max_size=12), st.sampled_from([LONG_ID, "t-\x1b[2J", "t" * 300]))
    return st.fixed_dictionaries({"task": task_id, "status": st.sampled_from(statuses),
                                  "message": words, "result": result, "error": error})


def task(status: str, **fields: Any) -> Dict[str, Any]:
    return {"task": "t-1", "status": status, "message": "", "result": None, "error": None, **fields}


# -- E7: field_from_schema ----------------------------------------------------------


def field_of(package: Target, case: Dict[str, Any]) -> Any:
    made = package.elicitation.field_from_schema(case["name"], case["schema"], case["required"])
    return made


def kind(package: Target, case: Dict[str, Any]) -> Told:
    made = field_of(package, case)
    options = [[value, str(label)] for value, label in (getattr(made, "options", None) or [])]
    return Told(f"made a {getattr(made, 'kind', '?')!r} field with options {options}, format "
                f"{getattr(made, 'format', '')!r}, bounds {getattr(made, 'minimum', None)!r} to "
                f"{getattr(made, 'maximum', None)!r}, required {getattr(made, 'required', None)!r}, "
                f"default {getattr(made, 'default', None)!r}")


def as_text(given: Any, made: Any) -> Any:
    """A label as it is observed: a title or description the server sent as no string
    may become none or its str(), and either is text; only a label that is no text
    (the form would break on it) differs."""
    return "a text" if given is not None and not isinstance(given, str) and isinstance(made, str) else made


def labels(package: Target, case: Dict[str, Any]) -> Told:
    made = field_of(package, case)
    schema = case["schema"] if isinstance(case["schema"], dict) else {}
    title = as_text(schema.get("title"), getattr(made, "title", None))
    description = as_text(schema.get("description"), getattr(made, "description", None))
    return Told(f"labelled it {title!r} with the description {description!r}")


def refused(package: Target, case: Dict[str, Any]) -> Told:
    try:
        field_of(package, case)
    except Exception as exc:
        if type(exc).__name__ == "Unsupported":
            return Told("refused it (Unsupported)")
        raise
    return Told("made a field of it")


def secret(package: Target, case: Dict[str, Any]) -> Told:
    made = field_of(package, case)
    return Told("flagged it as asking for a secret" if getattr(made, "secret", None) is True
                else "did not flag it as a secret")


def show_field(case: Dict[str, Any]) -> str:
    return f"the property {case['name']!r} with schema {case['schema']!r:.180} (required {case['required']})"


def titles(st: Any) -> Any:
    # A server's title or description may be no string at all: a number, a list, true.
    return st.one_of(st.just(ABSENT), st.none(), st.just(""), st.text(PLAIN, max_size=12),
                     st.sampled_from([42, True, False, 0, ["Your note"], {"en": "Note"}, 10 ** 400]))


def with_text(schema: Any, title: Any, description: Any) -> Any:
    if not isinstance(schema, dict):
        return schema  # not a schema at all: nothing to label
    for key, value in (("title", title), ("description", description)):
        if value != ABSENT:
            schema[key] = value
    return schema


def simple_schemas(st: Any) -> Any:
    number = st.one_of(st.integers(-5, 500), st.floats(-10, 10, allow_nan=False))
    bounds = {"minimum": number, "maximum": number}
    lengths = {"minLength": st.integers(0, 50), "maxLength": st.integers(0, 500)}
    values = st.lists(st.text(PLAIN, min_size=1, max_size=6), min_size=1, max_size=4, unique=True)
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("string")}, optional={
            "format": st.sampled_from(["email", "uri", "date", "date-time"]), **lengths,
            "default": st.text(PLAIN, max_size=5)}),
        st.fixed_dictionaries({"type": st.sampled_from(["number", "integer"])},
                              optional={**bounds, "default": number}),
        st.fixed_dictionaries({"type": st.just("boolean")}, optional={"default": st.booleans()}),
        st.fixed_dictionaries({"type": st.just("string"), "enum": values}),
        st.builds(lambda vs: {"type": "string", "oneOf": [{"const": v, "title": v.upper()} for v in vs]}, values),
        st.builds(lambda vs: {"type": "array", "items": {"type": "string", "enum": vs}}, values),
        st.builds(lambda vs, key: {"type": "array", "items": {key: [{"const": v, "title": v.upper()} for v in vs]}},
                  values, st.sampled_from(["anyOf", "oneOf"])),
        # "required" belongs to the object around the property, never to the property itself
        st.builds(lambda schema, flag: {**schema, "required": flag},
                  st.fixed_dictionaries({"type": st.sampled_from(["string", "boolean"])}), st.booleans()))


def field_cases(st: Any, schemas: Any, names: Any = None, texts: Any = None) -> Any:
    label = texts if texts is not None else titles(st)
    schema = st.builds(with_text, schemas, label, label)
    return st.fixed_dictionaries({"name": names if names is not None else st.text(PLAIN, min_size=1, max_size=10),
                                  "schema": schema, "required": st.booleans()})


def odd_schemas(st: Any) -> Any:
    return st.one_of(
        json_values(st),
        st.builds(lambda vs: {"enum": vs}, st.lists(st.text(PLAIN, min_size=1, max_size=4), min_size=1, max_size=3)),
        st.fixed_dictionaries({"type": st.sampled_from(["object", "null", "str", "array", "string", "bool",
                                                        "Number", ""])},
                              optional={"format": st.sampled_from(["email", "password", "uuid", "", "EMAIL",
                                                                   "ipv4", "time", "hostname"]),
                                        "items": json_values(st), "properties": st.just({})}),
        st.builds(lambda t: {"type": t}, json_values(st)))


SECRET_NAMES = ["password", "api_key", "apiKey", "token", "pin", "PIN", "pin code", "pinned", "pine",
                "client secret", "ssn", "cvv", "passphrase", "name", "email", "note", "keyboard",
                "api", "private", "Key features", "code"]  # the last four: a secret only when run together


def field(name: str, schema: Any, required: bool = False) -> Dict[str, Any]:
    return {"name": name, "schema": schema, "required": required}


CONTRACTS = (
    Contract("E6", "settled", (
        Clause("E6.1", "must return the stored result for a completed task exactly as it is, an isError "
                       "result included (that is the tool's error, for the model), and raise "
                       "ProtocolViolation when a completed task has no result object",
               "MCP tasks: a completed task's result is the tool's result", ending, show_task,
               edges=(task("completed", result={"content": [], "isError": True}),
                      task("completed", result={"content": [{"type": "text", "text": "ok"}]}),
                      task("completed", result={}), task("completed", result=None),
                      task("completed", result=[1])),
               inputs=lambda st: snapshots(st, ["completed"]), count=40, raises=("ProtocolViolation",)),
        Clause("E6.2", "must return an error result (isError true) for a failed task that says it failed "
                       "and names the server's error code and message (whatever the error's data holds, and "
                       "whichever member is missing; a code that is no integer is none), or its statusMessage "
                       "when the server sent no error object (an error that is not an object is none: no code "
                       "to name); every word of the server's that it puts in the result (the task id, a code, a "
                       "message) cut and its control characters shown, as the module's shown() does",
               "MCP tasks: a failed task carries the JSON-RPC error; one that is not an object the lab reads "
               "as none (lab rule)", ending, show_task,
               edges=(task("failed", error={"code": -32603, "message": "disk full"}),
                      task("failed", message="ran out of time"), task("failed"),
                      task("failed", error={"message": "boom"}),
                      task("failed", error="disk full", message="export failed: disk full on /var"),
                      task("failed", error={"code": -32603}),
                      task("failed", error={"code": -32000, "message": "export failed", "data": {
                          "content": [{"type": "text", "text": "exported 0 rows"}]}}),
                      task("failed", error={"code": -32603, "message": LONG}), task("failed", message=LONG),
                      task("failed", error={"code": -32603, "message": "Internal error: archive store offline",
                                            "data": {"message": "retry later"}}),
                      task("failed", task=LONG_ID, error={"code": -32603, "message": "disk full"}),
                      task("failed", error={"code": ODD_CODES[1], "message": "disk full"}),
                      task("failed", error={"code": ODD_CODES[0], "message": "disk full"})),
               inputs=lambda st: snapshots(st, ["failed"]), count=40),
        Clause("E6.3", "must return an error result (isError true) for a cancelled task that says it was "
                       "cancelled, with the statusMessage (cut and shown, as for a failed one), whoever "
                       "cancelled it",
               "MCP tasks: cancelled is a terminal status, and a server may cancel on its own",
               ending, show_task, edges=(task("cancelled", message="stopped by an operator"), task("cancelled"),
                                         task("cancelled", message="cancelled by the server"),
                                         task("cancelled", message=LONG),
                                         task("cancelled", task=LONG_ID, message="stopped by an operator")),
               inputs=lambda st: snapshots(st, ["cancelled"]), count=30),
        Clause("E6.4", "must return None (keep waiting) while the task is working or input_required, "
                       "whatever else the snapshot carries",
               "MCP tasks: only completed, failed and cancelled are terminal", ending, show_task,
               edges=(task("working"), task("input_required"),
                      task("working", result={"content": []}, error={"code": 1, "message": "x"})),
               inputs=lambda st: snapshots(st, ["working", "input_required"]), count=30),
    )),
    Contract("E7", "field_from_schema", (
        Clause("E7.1", "must make the field's kind from the schema (text, number, integer, boolean, a "
                       "choice from enum or oneOf const, choices from an array of them) and keep its "
                       "format, bounds (minimum/maximum, or minLength/maxLength for text: numbers only, a "
                       "bound of another type is none), default and whether it is required",
               "MCP elicitation, form mode: the restricted schema kinds", kind, show_field,
               edges=(field("priority", {"type": "string", "enum": ["low", "high"]}, True),
                      field("note", {"type": "string", "maxLength": 200}),
                      field("count", {"type": "integer", "minimum": 0, "maximum": 0}),
                      field("when", {"type": "string", "format": "date"}),
                      field("ok", {"type": "boolean", "default": False}),
                      field("tags", {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}),
                      field("tags", {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}),
                      field("ok", {"type": "boolean", "required": True}),
                      field("count", {"type": "integer", "minimum": "5", "maximum": True}),
                      field("count", {"type": "integer", "minLength": 2, "maxLength": 5}),
                      field("size", {"type": "string", "enum": ["s", "s", "m"]}),
                      field("pair", {"type": "string", "enum": [[1, 2], [3]]}),
                      field("flag", {"type": "string", "enum": [1, True, 0, False]})),
               inputs=lambda st: field_cases(st, simple_schemas(st)), count=120),
        Clause("E7.2", "must label the field with the schema's title, or the property's name when the "
                       "title is missing or empty, and keep the description (\"\" when there is none), each as "
                       "text: a title or description that is not a string (42, true, a list) is none, or its str()",
               "lab rule: the specification leaves the label open; the name is what the server called it; "
               "a description that is not a string is none",
               labels, show_field,
               edges=(field("note", {"type": "string"}), field("note", {"type": "string", "title": ""}),
                      field("note", {"type": "string", "title": None, "description": None}),
                      field("note", {"type": "string", "title": "Your note", "description": "max 200"}),
                      field("age", {"type": "integer", "description": 42}),
                      field("note", {"type": "string", "title": 42}), field("note", {"type": "string", "title": True}),
                      field("note", {"type": "string", "title": ["Your note"], "description": {"en": "max 200"}})),
               inputs=lambda st: field_cases(st, simple_schemas(st)), count=60),
        Clause("E7.3", "must refuse with Unsupported, and nothing else, any schema a form cannot show: not "
                       "an object, no type or an unknown one, an object or null type, an unknown format, "
                       "an array without a fixed set of values",
               "MCP elicitation, form mode: only flat primitive fields", refused, show_field,
               edges=(field("x", {"type": "object", "properties": {}}), field("x", {}), field("x", None),
                      field("x", {"enum": ["a", "b"]}), field("x", {"type": "string", "format": "ipv4"}),
                      field("x", True), field("x", {"type": "string", "format": "Email"}),
                      field("x", {"type": "uuid"}), field("x", {"type": "string", "format": "password"}),
                      field("x", {"type": "array"}), field("x", {"type": "array", "items": {"type": "string"}}),
                      field("x", "string"), field("x", {"type": ["string", "null"]})),
               inputs=lambda st: field_cases(st, odd_schemas(st)), count=120),
        Clause("E7.4", "must flag a field whose name, title, description or format asks for a password, "
                       "token, key, PIN or other secret, and no other: each text on its own (the end of one "
                       "and the start of the next are no phrase), the name as SECRET_NAME reads it (\"pin\" "
                       "alone is a PIN there) and the others as SECRET_WORDS does (\"pin the version\" is none)",
               "MCP elicitation: form mode must not be used to ask for secrets; which words ask for one is "
               "a lab rule", secret, show_field,
               edges=(field("password", {"type": "string"}), field("pinned", {"type": "boolean"}),
                      field("note", {"type": "string", "title": "API key"}),
                      field("note", {"type": "string", "title": "Password"}),
                      field("note", {"type": "string", "description": "your token"}),
                      field("code", {"type": "string", "title": "Enter your PIN"}),
                      field("api", {"type": "string", "title": "Key features you want"}),
                      field("private", {"type": "string", "description": "key rotation schedule"}),
                      field("version", {"type": "string", "description": "pin the version to deploy"}),
                      field("api_key", {"type": "string"}), field("private_key", {"type": "string"}),
                      field("network", {"type": "string", "oneOf": [{"const": "tr", "title": "token ring"}]}),
                      field("pin", {"type": "string"}), field("note", {"type": "string", "title": "Pin code"}),
                      field("note", {"type": "string", "description": "Your PIN"}),
                      field("note", {"type": "string", "title": "pin"})),
               inputs=lambda st: field_cases(st, simple_schemas(st), st.sampled_from(SECRET_NAMES),
                                             st.one_of(titles(st), st.sampled_from(SECRET_NAMES))), count=100),
    )),
)
