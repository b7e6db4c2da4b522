"""From an MCP tool to a model API's tool, and what stays behind.

The model sees a name, a description and an argument schema. The rest of the
MCP tool (`title`, `annotations`, `outputSchema`) has no place in a model API's
tool format, so it stays in the client's registry entry and is used there: the
title for display, annotations for the client's own decisions (they are
claims by the server, not facts), the output schema to check results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator

from .jsonrpc import Json

# Defaults when a server says nothing: assume the worst (MCP's own defaults).
CAUTIOUS_ANNOTATIONS: Json = {"readOnlyHint": False, "destructiveHint": True,
                              "idempotentHint": False, "openWorldHint": True}


@dataclass
class ToolEntry:
    """One tool in the registry: the model's name for it and where it really goes."""

    alias: str
    original_name: str
    model_name: str
    tool: Json  # the MCP tool exactly as the server listed it
    validator: Validator = field(repr=False)

    @property
    def title(self) -> str:
        annotations = self.tool.get("annotations")
        fallback = annotations.get("title") if isinstance(annotations, dict) else None
        return str(self.tool.get("title") or fallback or self.original_name)

    @property
    def annotations(self) -> Json:
        given = self.tool.get("annotations")
        return {**CAUTIOUS_ANNOTATIONS, **(given if isinstance(given, dict) else {})}

    @property
    def output_schema(self) -> Optional[Json]:
        schema = self.tool.get("outputSchema")
        return schema if isinstance(schema, dict) else None

    @property
    def input_schema(self) -> Json:
        schema = self.tool.get("inputSchema")
        return schema if isinstance(schema, dict) else {"type": "object"}

    @property
    def description(self) -> str:
        # Provenance first; the server's own words follow unchanged, since the
        # description is the server author's only lever on tool choice.
        own = self.tool.get("description")
        return f"[from {self.alias}] {own}" if own else f"[from {self.alias}] {self.title}"


def make_entry(alias: str, tool: Json, model_name: str) -> ToolEntry:
    """Build a registry entry, compiling its argument validator once, here."""
    schema = tool.get("inputSchema")
    validator = Draft202012Validator(schema if isinstance(schema, dict) else {"type": "object"})
    return ToolEntry(alias, str(tool["name"]), model_name, tool, validator)


def to_anthropic_tool(entry: ToolEntry) -> Dict[str, Any]:
    """Anthropic Messages API shape: `input_schema`."""
    return {"name": entry.model_name, "description": entry.description,
            "input_schema": entry.input_schema}


def to_openai_tool(entry: ToolEntry) -> Dict[str, Any]:
    """OpenAI-style chat completions shape: a function with `parameters`."""
    return {"type": "function",
            "function": {"name": entry.model_name, "description": entry.description,
                         "parameters": entry.input_schema}}


def argument_errors(entry: ToolEntry, arguments: Any) -> Optional[str]:
    """Why `arguments` do not fit the tool's input schema, or None if they do."""
    if not isinstance(arguments, dict):
        return "arguments must be a JSON object"
    error = next(iter(entry.validator.iter_errors(arguments)), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{error.message}" + (f" (at {where})" if where else "")
