"""A deterministic stand-in for a real model, for `MOCK=1` and the checks.

It sees only what a real model sees (the model-facing tool table and the
conversation): it picks the tool whose name and description share the most
words with the question, fills the required arguments from the question and
the schema, and after a tool result answers with that result's text. When a
result is an error that says how to fix the call (a date "in YYYY-MM-DD form",
"today is ..."), it corrects the argument from that text and tries once more,
as a real model does: the lesson of tool execution errors, made visible.
In code mode the reference's mock writes one script instead (code_mode/mock_code.py).
"""

from __future__ import annotations

import datetime
import re
from typing import List, Optional

from .model import Json, Message, ModelTurn, ToolCall, result_text

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_QUOTED = re.compile(r"[\"'“‘]([^\"'”’]+)[\"'”’]")
_STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "my", "me", "is", "are",
         "what", "which", "who", "how", "do", "does", "say", "says", "about", "please", "with",
         "from", "by", "can", "you", "it", "this", "that", "there", "any", "all", "i"}


def words(text: str) -> List[str]:
    return [w.lower() for w in _WORD.findall(text)]


class MockModel:
    name = "mock"
    api = "anthropic"  # it reads the same table shape as the Messages API

    async def next_turn(self, system: str, tools: List[Json], messages: List[Message]) -> ModelTurn:
        last = next(m for m in reversed(messages) if m.role != "note")  # news changes no plan of the mock's
        if last.role == "tool":
            call = next((c for m in reversed(messages) for c in m.tool_calls), None)
            retried = sum(1 for m in messages for c in m.tool_calls if call and c.name == call.name) > 1
            fixed = corrected(call.arguments, result_text(last.result)) if call and not retried and \
                (last.result or {}).get("isError") else None
            if call is not None and fixed is not None:
                return ModelTurn("The call failed; the error says how to fix it, so I try again.",
                                 [ToolCall(f"call-{len(messages)}", call.name, fixed)])
            used = call.name if call else "the tool"
            return ModelTurn(f"According to {used}: {result_text(last.result)}")
        question = next((m.text for m in messages if m.role == "user"), "")
        if not tools:  # no tools at all: a plain completion (a server's sampling request)
            return ModelTurn(f"(mock) A reply to: {' '.join(question.split())[:120]}")
        return self.first_call(question, tools, f"call-{len(messages)}")

    def first_call(self, question: str, tools: List[Json], call_id: str) -> ModelTurn:
        """The move a question starts with: the tool that fits it best, or none."""
        tool = pick_tool(question, tools)
        if tool is None:
            return ModelTurn("None of my tools fits that question.")
        return ModelTurn("", [ToolCall(call_id, str(tool["name"]), fill_arguments(question, tool))])


_DATE_RULE = re.compile(r"YYYY-MM-DD.*\(got '([^']*)'\).*today is (\d{4}-\d{2}-\d{2})", re.S)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def corrected(arguments: Json, error: str) -> Optional[Json]:
    """Arguments fixed by what a tool's error text says, or None when it says nothing usable.
    The one rule the mock knows: a date wanted as YYYY-MM-DD, with today's date given."""
    rule = _DATE_RULE.search(error)
    if rule is None:
        return None
    bad, today = rule.group(1), datetime.date.fromisoformat(rule.group(2))
    key = next((k for k, v in arguments.items() if v == bad), None)
    if key is None:
        return None
    named = next((i for i, day in enumerate(_WEEKDAYS) if day in bad.lower()), None)
    ahead = ((named - today.weekday()) % 7 or 7) if named is not None else 1
    return {**arguments, key: (today + datetime.timedelta(days=ahead)).isoformat()}


def pick_tool(question: str, tools: List[Json]) -> Optional[Json]:
    wanted = set(words(question)) - _STOP
    best, best_score = None, 0
    for tool in tools:
        name_words = set(re.split(r"[_.\-]+", str(tool["name"]).lower()))
        described = set(words(str(tool.get("description", ""))))
        score = 3 * len(wanted & name_words) + len(wanted & described)
        if score > best_score:
            best, best_score = tool, score
    return best


def fill_arguments(question: str, tool: Json) -> Json:
    schema = tool.get("input_schema") or tool.get("parameters") or {}
    properties = schema.get("properties", {})
    quoted = _QUOTED.findall(question)
    tokens = _WORD.findall(question)
    name_words = set(re.split(r"[_.\-]+", str(tool["name"]).lower()))
    keywords = " ".join(w for w in tokens if w.lower() not in _STOP | name_words)
    arguments: Json = {}
    for key in schema.get("required", []):
        spec = properties.get(key, {})
        kind = spec.get("type")
        if kind == "integer":
            numbers = [int(t) for t in tokens if t.isdigit()]
            arguments[key] = numbers[0] if numbers else 0
        elif kind == "boolean":
            arguments[key] = False
        elif "pattern" in spec:
            match = next((t for t in tokens if re.search(spec["pattern"], t)), None)
            arguments[key] = match or (quoted[0] if quoted else keywords)
        else:
            arguments[key] = quoted.pop(0) if quoted else keywords or question
    return arguments
