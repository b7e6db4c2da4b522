"""Elicitation, form mode: a server's question to the user, made into a form.

A server may ask the person a question in the middle of a call: a message and
a `requestedSchema`, a flat object whose properties are simple fields
(strings, possibly with a format; numbers with bounds; booleans; a choice of
values). This module turns the schema into fields (E7: `field_from_schema`);
anything it cannot show as a field is declined with a reason, never guessed
at. The reference client asks the person, checks the answer against the
schema and replies `accept`, `decline` or `cancel` (lifecycle/forms.py).

The question comes from the server: its message and every label are shown as
that server's words (see `untrusted`), and a field that asks for a password,
a token or a key is flagged, since form mode must never be used for secrets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, List, Optional, Tuple

from .jsonrpc import Json

FORMATS = ("email", "uri", "date", "date-time")
# Words that ask for a secret, in any one of a field's texts (its title, description or
# format), each searched on its own. "pin" alone is an everyday word ("pin the version"):
# a PIN is one in capitals, a pin code or a pin number.
SECRET_WORDS = re.compile(r"pass(word|phrase|code)?\b|secret|token|api[\s_-]?key|private[\s_-]?key|"
                          r"credential|(?-i:\bPIN\b)|\bpin[\s_-]?(code|number)\b|\bcvv\b|\bssn\b", re.I)
# The same for the field's name, an identifier: there "pin" alone is a PIN too ("pin", "pin-code").
SECRET_NAME = re.compile(SECRET_WORDS.pattern + r"|^pin\b", re.I)


class Unsupported(Exception):
    """A requested field this client cannot show as a form field."""


@dataclass
class FormField:
    """One field of the form, in the client's own terms."""

    name: str
    kind: str  # "text", "number", "integer", "boolean", "choice" or "choices"
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    options: List[Tuple[Any, str]] = field(default_factory=list)  # (value, label) for choices
    format: str = ""  # for text: email, uri, date, date-time
    minimum: Optional[float] = None  # numbers: the value; text: the length
    maximum: Optional[float] = None
    secret: bool = False  # it looks like it asks for a credential
    pattern: str = ""  # for text: the pattern the answer must match (shown, so the person can)


@dataclass
class Question:
    """What a server asked, ready to show: whose question it is and the form."""

    alias: str
    message: str
    fields: List[FormField]
    schema: Json
    task_id: Optional[str] = None  # the task that asked, if any


Elicitor = Callable[[Question], Awaitable[Json]]  # -> {"action": ..., "content"?: ...}


def bound(schema: Json, key: str) -> Optional[float]:
    """A bound of the schema's (minimum, maxLength...): a number, or none. A server's
    "5" or true kept as one would break the form at the person's first answer."""
    value = schema.get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _options(schema: Json) -> List[Tuple[Any, str]]:
    """The choices of an enum field, in any of the spellings the spec has used."""
    if isinstance(schema.get("enum"), list):
        names = schema.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(schema["enum"]) else schema["enum"]
        return [(value, str(label)) for value, label in zip(schema["enum"], labels)]
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list):
            found = [(o["const"], str(o.get("title", o["const"])))
                     for o in schema[key] if isinstance(o, dict) and "const" in o]
            if len(found) == len(schema[key]) and found:
                return found
    return []


def field_from_schema(name: str, schema: Any, required: bool) -> FormField:
    """One property of a requestedSchema as a form field; Unsupported if it is
    not one of the simple kinds form mode allows."""
    # >>> extension E7 (elicitation): from a property's schema to a form field
    # TODO extension E7: turn one property of the requested schema into a FormField:
    # a string (with a known format, or a choice when it lists values), a number or
    # integer (with its bounds), a boolean, or an array of choices, labelled with its
    # title as text (the property's name when it has none). Anything else: raise
    # Unsupported with the reason (labs/GUIDE.md 11.7). Flag it secret when
    # SECRET_NAME matches the name or SECRET_WORDS matches its title, description
    # or the schema's format (whatever the kind), each text on its own, as the
    # patterns are given. Read the schema; never write into it.
    # The clauses the checks hold it to: labs/GUIDE.md section 11.7.
    raise Unsupported(f"extension E7 is not done yet: field {name!r} cannot be shown")
    # <<< extension E7


def form_fields(requested: Any) -> List[FormField]:
    """Every field of a requestedSchema; Unsupported if any cannot be shown."""
    if not isinstance(requested, dict) or requested.get("type") != "object":
        raise Unsupported("the requested schema is not a flat object")
    properties = requested.get("properties")
    required = requested.get("required")
    if not isinstance(properties, dict):
        raise Unsupported("the requested schema has no properties")
    wanted = set(required) if isinstance(required, list) else set()
    fields = [field_from_schema(str(name), schema, name in wanted) for name, schema in properties.items()]
    for made, schema in zip(fields, properties.values()):
        pattern = schema.get("pattern") if isinstance(schema, dict) else None
        made.pattern = pattern if made.kind == "text" and isinstance(pattern, str) else ""
    return fields


def question_from(alias: str, params: Any, task_id: Optional[str] = None) -> Question:
    """The question in an `elicitation/create` request's params; Unsupported if
    it is not a form this client can show."""
    if not isinstance(params, dict):
        raise Unsupported("the request has no params")
    mode = params.get("mode", "form")
    if mode != "form":
        raise Unsupported(f"mode {mode!r} is not supported (this client answers forms only)")
    message = params.get("message")
    schema = params.get("requestedSchema")
    fields = form_fields(schema)
    assert isinstance(schema, dict)  # form_fields proved it
    return Question(alias, message if isinstance(message, str) else "", fields, schema, task_id)
