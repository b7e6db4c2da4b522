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
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

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
    output_validator: Optional[Validator] = field(default=None, repr=False)

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


def compile_schema(schema: Json, what: str) -> Validator:
    """A validator for `schema`, in the JSON Schema draft its `$schema` names
    (2020-12 when it names none). Raises ValueError for a broken schema."""
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"its {what} is not a valid JSON Schema: {exc.message}") from None
    validator: Validator = cls(schema)
    return validator


def make_entry(alias: str, tool: Json, model_name: str) -> ToolEntry:
    """Build a registry entry, compiling its validators once, here, never per call.
    Raises ValueError when the tool's schemas cannot be used."""
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError("its inputSchema is not an object schema")
    output = tool.get("outputSchema")
    return ToolEntry(alias, str(tool["name"]), model_name, tool, compile_schema(schema, "inputSchema"),
                     compile_schema(output, "outputSchema") if isinstance(output, dict) else None)


def to_anthropic_tool(entry: ToolEntry) -> Dict[str, Any]:
    """Anthropic Messages API shape: `input_schema`."""
    return {"name": entry.model_name, "description": entry.description,
            "input_schema": entry.input_schema}


def to_openai_tool(entry: ToolEntry) -> Dict[str, Any]:
    """OpenAI-style chat completions shape: a function with `parameters`."""
    return {"type": "function",
            "function": {"name": entry.model_name, "description": entry.description,
                         "parameters": entry.input_schema}}


def first_problem(validator: Validator, instance: Any) -> Optional[str]:
    """The first way `instance` breaks the schema, saying where; None if it fits."""
    error = next(iter(validator.iter_errors(instance)), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{error.message}" + (f" (at {where})" if where else "")


def argument_errors(entry: ToolEntry, arguments: Any) -> Optional[str]:
    """Why `arguments` do not fit the tool's input schema, or None if they do."""
    if not isinstance(arguments, dict):
        return "arguments must be a JSON object"
    return first_problem(entry.validator, arguments)
