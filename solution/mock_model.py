"""A deterministic stand-in for a real model, for `MOCK=1` and the checks.

It sees only what a real model sees (the model-facing tool table and the
conversation): it picks the tool whose name and description share the most
words with the question, fills the required arguments from the question and
the schema, and after a tool result answers with that result's text.
"""

from __future__ import annotations

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
        last = messages[-1]
        if last.role == "tool":
            used = next((c.name for m in reversed(messages) for c in m.tool_calls), "the tool")
            return ModelTurn(f"According to {used}: {result_text(last.result)}")
        question = next((m.text for m in messages if m.role == "user"), "")
        tool = pick_tool(question, tools)
        if tool is None:
            return ModelTurn("None of my tools fits that question.")
        arguments = fill_arguments(question, tool)
        return ModelTurn("", [ToolCall(f"call-{len(messages)}", str(tool["name"]), arguments)])


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
