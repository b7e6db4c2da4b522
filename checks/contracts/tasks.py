"""E6 and E7: when a task's snapshot ends the wait (`settled`), and one
property of a server's requested schema as a form field (`field_from_schema`).
"""

from __future__ import annotations

import itertools
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
    shown = package.module("untrusted").shown  # the lab's, outside the region: how a word looks shown
    facts = ["isError true" if out.get("isError") is True else "no isError true"]
    facts += named(case, text, shown)
    if case["status"] == "cancelled":
        facts.append("saying it was cancelled" if "cancel" in text.lower() else "not saying it was cancelled")
    if case["status"] == "failed":
        facts.append("saying it failed" if "fail" in text.lower() else "not saying it failed")
    # A server's words are cut and shown, never taken whole (tasks.py: ID_CHARS, REASON_CHARS).
    facts.append(f"{'within' if len(text) <= TEXT_BOUND else 'past'} {TEXT_BOUND} characters")
    facts += [f"the {word} shown past its {limit} characters" for word, limit in overgrown(case, text, shown)]
    facts.append("control characters shown, not sent" if not CONTROL.search(text) else "a raw control character in it")
    return Told("returned an error result with " + ", ".join(facts))


def named(case: Dict[str, Any], text: str, shown: Any) -> List[str]:
    """Which of the server's words a failed or cancelled task's text names. A word is
    named when the start of it, shown, is in the text: a long one is cut, wherever the
    cut falls (the code and message cut as one text or each on its own)."""
    def shows(word: str) -> bool:
        return str(shown(word))[:START] in text

    def said(word: str, what: str) -> str:
        return ("naming " if shows(word) else "not naming ") + what

    error, facts = case.get("error"), []
    if case["status"] == "failed" and isinstance(error, dict):
        code = error.get("code")
        if isinstance(code, int) and not isinstance(code, bool):
            facts.append(said(str(code), "the error's code"))
        elif code is not None and shows(str(code)):  # true, 1.5, "E401": no code to name
            facts.append("naming a code that is no integer")
        # A code too long to be one may fill the cut and leave the message out (one text cut at
        # REASON_CHARS does): the message is judged beside a code of ordinary size only.
        ordinary = not isinstance(code, int) or isinstance(code, bool) or len(str(code)) <= START
        if isinstance(error.get("message"), str) and error["message"] and ordinary:
            facts.append(said(error["message"], "its message"))
    elif case.get("message"):
        facts.append(said(case["message"], "the statusMessage"))
    return facts


def overgrown(case: Dict[str, Any], text: str, shown: Any) -> List[Any]:
    """Each word made of one control character (FLOODS) that the text shows more of
    than its cut allows: cut before shown(), each character grows to 4 or 6."""
    error: Dict[str, Any] = case["error"] if isinstance(case.get("error"), dict) else {}
    words = {"task id": case["task"], "statusMessage": case.get("message"),
             "error's code": error.get("code"), "error's message": error.get("message")}
    found = []
    for word, (char, limit) in FLOODS.items():
        value = words[word]
        if isinstance(value, str) and value and value == char * len(value):
            if text.count(shown(char)) * len(shown(char)) > limit:
                found.append((word, limit))
    return found


ID_CHARS, REASON_CHARS = 40, 300  # tasks.py's cuts: a task id; a code, a message
START = 40  # a named word's start, shown, that any cut of it keeps
TEXT_BOUND = 800  # the most an error result's words run to: an id, a code and a message each cut, and ours
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
LONG = "Disk full \x1b]52;c;cGF3bmVk\x07 " * 40  # 1,200 characters, an escape sequence in each line
# A task id is the server's word too: of any length, with what a terminal obeys (OSC 52 writes the clipboard).
LONG_ID = "t-\x1b]52;c;cGF3bmVk\x07" + "x" * 2000
# Each word of the server's as one control character, 300 times: a different one for each word, and
# one no other drawn text holds, so the text shows how much of each it kept (shown, a C1 control is 4
# characters, a right-to-left override 6: cut before shown(), 300 of them are 1,200 or more).
FLOODS = {"task id": ("\u202e", ID_CHARS), "error's code": ("\x9b", REASON_CHARS),
          "error's message": ("\x9d", REASON_CHARS), "statusMessage": ("\x90", REASON_CHARS)}
FLOOD_ID, FLOOD_CODE, FLOOD_MESSAGE, FLOOD_STATUS = (char * 300 for char, _ in FLOODS.values())
# An error's code as a server may send it: past a float, a string that carries an escape, no number.
ODD_CODES = [10 ** 600, "-32603\x1b]52;c;cGF3bmVk\x07", "E" * 600, 1.5, True, None, FLOOD_CODE]
# What an error's data may hold beside the code and message: a long one must not push them out.
LONG_DATA = ["see the log " * 40, {"trace": ["at export (line 1)"] * 30}]


def said_briefly(value: Any) -> Any:
    """A case's value as shown: a long text by its size and start."""
    if isinstance(value, str) and len(value) > 40:
        return f"<a {len(value):,}-character text {value[:12]!r}…>"
    if isinstance(value, dict):
        return {k: said_briefly(v) for k, v in value.items()}
    return value


def show_task(case: Dict[str, Any]) -> str:
    shown = {k: said_briefly(v) for k, v in case.items() if k != "task"}
    task_id = case["task"]
    which = f"task id {task_id!r}" if len(task_id) <= 40 else f"a {len(task_id):,}-character task id {task_id[:24]!r}…"
    return brief(f"a task snapshot ({which}) {shown!r}")[:300]


def snapshots(st: Any, statuses: List[str]) -> Any:
    def words(flood: str) -> Any:
        return st.one_of(st.text(PLAIN, max_size=24), st.text(PLAIN, max_size=24),
                         st.sampled_from([LONG, "stopped \x1b[2J\r by the operator", flood]))

    code = st.one_of(st.integers(-33000, 40000), st.integers(-33000, 40000), st.sampled_from(ODD_CODES))
    data = st.one_of(json_values(st), st.sampled_from(LONG_DATA))
    error = st.one_of(st.none(), st.fixed_dictionaries({"code": code, "message": words(FLOOD_MESSAGE)},
                                                       optional={"data": data}),
                      st.sampled_from(["disk full", 42, [], True]))  # no error object at all
    result = st.one_of(st.fixed_dictionaries({"content": st.just([{"type": "text", "text": "done"}])},
                                             optional={"isError": st.booleans(),
                                                       "structuredContent": json_values(st)}),
                       st.just({}))
    task_id = st.one_of(st.just("t-1"), st.text(max_size=12),
                        st.sampled_from([LONG_ID, "t-\x1b[2J", "t" * 300, FLOOD_ID]))
    return st.fixed_dictionaries({"task": task_id, "status": st.sampled_from(statuses),
                                  "message": words(FLOOD_STATUS), "result": result, "error": error})


def task(status: str, **fields: Any) -> Dict[str, Any]:
    return {"task": "t-1", "status": status, "message": "", "result": None, "error": None, **fields}


# -- E7: field_from_schema ----------------------------------------------------------


def field_of(package: Target, case: Dict[str, Any]) -> Any:
    """The field made, or Told that the server's schema was changed in reading it (the
    client keeps that schema, and checks the person's answer against it)."""
    given = json.dumps(case["schema"], sort_keys=True)
    made = package.elicitation.field_from_schema(case["name"], case["schema"], case["required"])
    if json.dumps(case["schema"], sort_keys=True) != given:
        return Told("changed the server's schema in reading it (the answer is checked against that schema)")
    return made


def kind(package: Target, case: Dict[str, Any]) -> Told:
    made = field_of(package, case)
    if isinstance(made, Told):
        return made
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
    if isinstance(made, Told):
        return made
    schema = case["schema"] if isinstance(case["schema"], dict) else {}
    title = as_text(schema.get("title"), getattr(made, "title", None))
    description = as_text(schema.get("description"), getattr(made, "description", None))
    return Told(f"labelled it {title!r} with the description {description!r}")


def refused(package: Target, case: Dict[str, Any]) -> Told:
    try:
        made = field_of(package, case)
    except Exception as exc:
        if type(exc).__name__ == "Unsupported":
            return Told("refused it (Unsupported)")
        raise
    return made if isinstance(made, Told) else Told("made a field of it")


def secret(package: Target, case: Dict[str, Any]) -> Told:
    made = field_of(package, case)
    if isinstance(made, Told):
        return made
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
    lengths = {"minLength": st.integers(0, 50), "maxLength": st.integers(0, 500)}
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("string")}, optional={
            "format": st.sampled_from(["email", "uri", "date", "date-time"]), **lengths,
            "default": st.text(PLAIN, max_size=5)}),
        other_schemas(st))


def other_schemas(st: Any) -> Any:
    """The kinds that are not text: a format on one of them is no text format (nothing
    refuses it), but it is still one of the field's texts."""
    number = st.one_of(st.integers(-5, 500), st.floats(-10, 10, allow_nan=False))
    bounds = {"minimum": number, "maximum": number}
    values = st.lists(st.text(PLAIN, min_size=1, max_size=6), min_size=1, max_size=4, unique=True)
    return st.one_of(
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


def formatted(st: Any) -> Any:
    """A field of a kind other than text with a format the server chose: searched too."""
    return st.builds(lambda schema, fmt: {**schema, "format": fmt}, other_schemas(st),
                     st.sampled_from([*SECRET_NAMES, "pin code", "int32", "currency"]))


# Texts that make a secret phrase only when the end of one runs into the start of the next.
HALVES = (("Public API", "key count"), ("the private", "key ring size"))


def run_together(first: str, then: str, halves: Any) -> Dict[str, Any]:
    """A number field (any format is one of its texts) whose text `first` ends as
    a phrase begins, and whose text `then` ends it: no secret, read each on its own."""
    return field("count", {"type": "number", first: halves[0], then: halves[1]})


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
                       "whichever member is missing; a code that is no integer is none; the two cut as one text "
                       "or each on its own, so a code too long to be one may leave no room for the message), or "
                       "its statusMessage when the server sent no error object (an error that is not an object is "
                       "none: no code to name; beside an error object, naming the statusMessage too is allowed); "
                       "every word of the server's that it puts in the result cut and its control characters "
                       "shown by the module's shown(text, limit), the cut made by shown() itself, never before it "
                       "(shown, a control character grows to 4 or 6 characters): the task id to ID_CHARS, a code "
                       "or a message to REASON_CHARS",
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
                      task("failed", error={"code": ODD_CODES[0], "message": "disk full"}),
                      task("failed", error={"code": True, "message": "disk full"}),  # a bool is no code
                      # what data holds must not push the code and message out of the cut
                      *(task("failed", error={"code": -32603, "message": "disk full", "data": data})
                        for data in LONG_DATA),
                      # each word made of a control character: cut by shown(), not before it
                      task("failed", error={"code": -32603, "message": FLOOD_MESSAGE}),
                      task("failed", message=FLOOD_STATUS),
                      task("failed", task=FLOOD_ID, error={"code": -32603, "message": "disk full"}),
                      task("failed", task=FLOOD_ID, message=FLOOD_STATUS),
                      task("failed", error={"code": FLOOD_CODE, "message": "disk full"}),
                      task("failed", task=FLOOD_ID, message=FLOOD_STATUS,
                           error={"code": -32603, "message": FLOOD_MESSAGE}),
                      # an error object without a message: its code is named, the statusMessage allowed beside it
                      task("failed", error={"code": -32603}, message="ran out of disk")),
               inputs=lambda st: snapshots(st, ["failed"]), count=40),
        Clause("E6.3", "must return an error result (isError true) for a cancelled task that says it was "
                       "cancelled, with the statusMessage, whoever cancelled it (the statusMessage, and the task id "
                       "if it is named, cut by shown() as for a failed one)",
               "MCP tasks: cancelled is a terminal status, and a server may cancel on its own",
               ending, show_task, edges=(task("cancelled", message="stopped by an operator"), task("cancelled"),
                                         task("cancelled", message="cancelled by the server"),
                                         task("cancelled", message=LONG),
                                         task("cancelled", task=LONG_ID, message="stopped by an operator"),
                                         task("cancelled", message=FLOOD_STATUS),
                                         task("cancelled", task=FLOOD_ID, message=FLOOD_STATUS)),
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
                       "bound of another type is none), default and whether it is required, and leave the server's "
                       "schema as it came (the client keeps it, and checks the answer against it)",
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
                       "token, key, PIN or other secret, and no other: the schema's format whatever the field's "
                       "kind (a number's or a choice's too), each text on its own (the end of one and the start "
                       "of the next, in any order, are no phrase), the name as SECRET_NAME reads it (\"pin\" "
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
                      field("note", {"type": "string", "title": "pin"}),
                      # each text on its own: every pair of them, in either order, run together makes one
                      field("note", {"type": "string", "title": "Your API", "description": "key features, listed"}),
                      *(run_together(first, then, HALVES[n % 2]) for n, (first, then) in enumerate(
                          itertools.permutations(("title", "description", "format"), 2))),
                      # the format is searched whatever the kind: nothing else refuses it there
                      field("count", {"type": "number", "format": "pin code"}),
                      field("level", {"type": "string", "enum": ["a", "b"], "format": "password"}),
                      field("ok", {"type": "boolean", "format": "token"}),
                      field("tags", {"type": "array", "items": {"type": "string", "enum": ["a"]}, "format": "API key"}),
                      field("count", {"type": "integer", "format": "int32"})),
               inputs=lambda st: field_cases(st, st.one_of(simple_schemas(st), formatted(st)),
                                             st.sampled_from(SECRET_NAMES),
                                             st.one_of(titles(st), st.sampled_from(SECRET_NAMES))), count=100),
    )),
)
