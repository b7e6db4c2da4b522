"""The person at the terminal: a server's question as a form, and task status lines.

Everything here shows server words (messages, titles, descriptions, status
messages) with their control characters made visible and labelled with the
server's alias, so nothing a server sends can pass for the client's own text
or redraw the terminal. Parsing a typed answer (`read_value`) is pure, so it is
tested without a terminal.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, Callable, Dict, Optional, Tuple

import anyio

from ..elicitation import Elicitor, FormField, Question
from ..tasks import TaskState
from .terminal import Terminal
from ..untrusted import shown

DECLINE, CANCEL = "!decline", "!cancel"  # typed at any prompt
SHOWN_OPTIONS = 20  # choices listed by number; the rest are typed as values


def read_value(field: FormField, raw: str) -> Tuple[Any, Optional[str]]:
    """What a typed answer means for this field: (value, None), or (None, why not)."""
    text = raw.strip()
    if field.kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True, None
        if text.lower() in ("n", "no", "false", "0"):
            return False, None
        return None, "answer y or n"
    if field.kind in ("number", "integer"):
        try:
            value: Any = int(text) if field.kind == "integer" else float(text)
        except ValueError:
            return None, f"a{'n integer' if field.kind == 'integer' else ' number'} is needed"
        if (field.minimum is not None and value < field.minimum) or \
                (field.maximum is not None and value > field.maximum):
            return None, f"it must be between {field.minimum} and {field.maximum}"
        return value, None
    if field.kind in ("choice", "choices"):
        picked = []
        for part in (text.split(",") if field.kind == "choices" else [text]):
            part = part.strip()
            match = [v for i, (v, label) in enumerate(field.options, 1) if part in (str(i), str(v))]
            if not match:
                return None, f"pick one of 1-{len(field.options)}"
            picked.append(match[0])
        return (picked if field.kind == "choices" else picked[0]), None
    if (field.minimum is not None and len(text) < field.minimum) or \
            (field.maximum is not None and len(text) > field.maximum):
        return None, f"it must be {field.minimum or 0} to {field.maximum or 'any number of'} characters"
    return text, None


NO_DEFAULT = object()


def usable_default(field: FormField) -> Any:
    """The field's `default` when it is a value the field accepts (SEP-1034: Enter
    takes it), else NO_DEFAULT. The default is server text like the rest, so one
    of the wrong kind, out of range or not among the choices is ignored."""
    value = field.default
    if value is None or isinstance(value, float) and not math.isfinite(value):
        return NO_DEFAULT
    if field.kind == "boolean":
        return value if isinstance(value, bool) else NO_DEFAULT
    if field.kind in ("number", "integer"):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or (field.kind == "integer" and not float(value).is_integer()):
            return NO_DEFAULT
        fits = (field.minimum is None or value >= field.minimum) and (field.maximum is None or value <= field.maximum)
        return (int(value) if field.kind == "integer" else value) if fits else NO_DEFAULT
    allowed = [v for v, _ in field.options]
    if field.kind == "choice":
        return value if value in allowed else NO_DEFAULT
    if field.kind == "choices":
        return value if isinstance(value, list) and all(v in allowed for v in value) else NO_DEFAULT
    if not isinstance(value, str):
        return NO_DEFAULT
    _, problem = read_value(field, value)
    return value if problem is None and value.strip() == value else NO_DEFAULT


def default_shown(value: Any) -> str:
    if isinstance(value, bool):
        return "y" if value else "n"
    if isinstance(value, list):
        return ", ".join(shown(str(v), 30) for v in value[:SHOWN_OPTIONS])
    return shown(str(value), 60)


def describe(field: FormField) -> str:
    """The prompt line for one field: the server's label, then the client's own hints."""
    hints = [field.kind if not field.format else field.format]
    if field.kind in ("choice", "choices"):
        listed = field.options[:SHOWN_OPTIONS]  # a server may send 200,000: the screen is not its to fill
        hints = ["; ".join(f"{i}={shown(label, 40)}" for i, (_, label) in enumerate(listed, 1))]
        if len(field.options) > SHOWN_OPTIONS:
            hints[0] += f"; and {len(field.options) - SHOWN_OPTIONS:,} more: type the value itself"
    if field.pattern:
        hints.append(f"matching {shown(field.pattern, 80)}")
    if field.minimum is not None or field.maximum is not None:
        hints.append(f"{field.minimum if field.minimum is not None else ''}..{field.maximum if field.maximum is not None else ''}")
    default = usable_default(field)
    if default is not NO_DEFAULT:
        hints.append(f"Enter for {default_shown(default)}")
    else:
        hints.append("required" if field.required else "optional, Enter to skip")
    line = f"  {shown(field.title, 60)} ({', '.join(hints)})"
    if field.description:
        line += f"\n    {shown(field.description, 200)}"
    if field.secret:
        line += ("\n    warning: this looks like a password, token or key; servers must not ask for "
                 "those in a form. Type !decline unless you are sure.")
    return line + "\n  > "


def terminal_form(terminal: Terminal) -> Elicitor:
    """An elicitor that asks at the terminal, field by field, holding it for the
    whole form so no other question (consent, another server's form) can
    interleave its prompts or take its answers."""
    async def ask(question: Question) -> Dict[str, Any]:
        task = f" (task {shown(question.task_id, 20)})" if question.task_id else ""
        async with terminal.turn(f"server {question.alias}"):
            terminal.say(f"\nserver '{shown(question.alias, 40)}' asks{task}; its words follow, quoted:\n"
                         f"  \u201c{shown(question.message, 500)}\u201d\n"
                         f"(type {DECLINE} or {CANCEL} at any prompt)\n")
            content: Dict[str, Any] = {}
            for field in question.fields:
                while True:
                    raw = await terminal.read(describe(field))
                    if raw.strip() in (DECLINE, CANCEL):
                        return {"action": raw.strip()[1:]}
                    if not raw.strip():
                        default = usable_default(field)
                        if default is not NO_DEFAULT:
                            content[field.name] = default  # SEP-1034: Enter accepts the default
                            break
                        if not field.required:
                            break
                    value, problem = read_value(field, raw)
                    if problem is None:
                        content[field.name] = value
                        break
                    terminal.say(f"    {problem}\n")
            return {"action": "accept", "content": content}
    return ask


def terminal_elicitor(terminal: Terminal) -> Optional[Elicitor]:
    """A form at the terminal when there is one; None (nothing declared) otherwise."""
    stdin = sys.stdin
    if stdin is None or not stdin.isatty():
        return None
    return terminal_form(terminal)


class TaskLines:
    """A task's status as lines on the terminal (stderr): one when the status or its
    message changes, at most `per_second` a second (the last state is never lost
    for long: a change of status is always shown)."""

    def __init__(self, terminal: Optional[Terminal] = None, per_second: float = 2.0) -> None:
        self.terminal = terminal or Terminal()
        self.gap = 1.0 / per_second
        self.last: Dict[str, Tuple[str, str, float]] = {}

    def __call__(self, alias: str, state: TaskState) -> None:
        before = self.last.get(state.task_id)
        now = time.monotonic()
        if before is not None and before[:2] == (state.status, state.message):
            return
        if before is not None and before[0] == state.status and now - before[2] < self.gap:
            return
        self.last[state.task_id] = (state.status, state.message, now)
        message = f": {shown(state.message, 100)}" if state.message else ""
        # Through the terminal: never into an open form or consent prompt (it waits for the answer).
        self.terminal.note(state.task_id, f"  task {shown(state.task_id, 12)} on {alias}: {state.status}{message}\n")
