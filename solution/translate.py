"""From an MCP tool to a model API's tool, and what stays behind.

The model sees a name, a description and an argument schema. The rest of the
MCP tool (`title`, `annotations`, `outputSchema`) has no place in a model API's
tool format, so it stays in the client's registry entry and is used there: the
title for display, annotations for the client's own decisions (they are
claims by the server, not facts), the output schema to check results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, Optional, Type

from .jsonrpc import Json

if TYPE_CHECKING:  # jsonschema itself is imported at the first check: most tools are never called
    from jsonschema.protocols import Validator

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
    checked: Optional[str] = field(default=None, repr=False)  # None: schemas not checked yet
    _validators: Dict[str, Optional[Validator]] = field(default_factory=dict, repr=False)

    # Validators are made on first use and kept: a table of thousands of tools
    # costs nothing for the tools never called, and no call builds one twice.
    @property
    def validator(self) -> Validator:
        found = self._validators.get("input")
        if found is None:
            found = self._validators["input"] = self.compile(self.input_schema)
        return found

    @property
    def output_validator(self) -> Optional[Validator]:
        if "output" not in self._validators:
            schema = self.output_schema
            self._validators["output"] = self.compile(schema) if schema is not None else None
        return self._validators["output"]

    def compile(self, schema: Json) -> Validator:
        """A validator for one of this tool's schemas. (The reference bounds what a
        check may cost, since a schema is the server's: host/patterns.py.)"""
        return compile_schema(schema)

    def problem(self, validator: Validator, instance: Any) -> Optional[str]:
        """The first way `instance` breaks `validator`'s schema, or None."""
        return first_problem(validator, instance)

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


def compile_schema(schema: Json) -> Validator:
    """A validator for `schema`, in the JSON Schema draft its `$schema` names
    (2020-12 when it names none). Cheap: the schema itself is checked later."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for
    validator: Validator = validator_for(schema, default=Draft202012Validator)(schema)
    return validator


def shape_problem(schema: Any) -> Optional[str]:
    """What makes `schema` unusable as a tool's inputSchema at a glance, or None.

    The full check against the draft's metaschema costs about a millisecond per
    schema, so it waits for the tool's first call (`schema_problem`); this
    quick one runs for every tool when the table is built."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return "its inputSchema is not an object schema"
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or not all(isinstance(p, (dict, bool)) for p in properties.values()):
        return "its inputSchema has malformed 'properties'"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return "its inputSchema has malformed 'required'"
    return None


def make_entry(alias: str, tool: Json, model_name: str, kind: Type[ToolEntry] = ToolEntry) -> ToolEntry:
    """Build a registry entry (of `kind`: the reference's bounds its checks). Raises
    ValueError when the input schema cannot be used at all."""
    schema = tool.get("inputSchema")
    problem = shape_problem(schema)
    if problem is not None:
        raise ValueError(problem)
    return kind(alias, str(tool["name"]), model_name, tool)


def schema_problem(entry: ToolEntry) -> Optional[str]:
    """Whether the tool's schemas pass their metaschema; checked once, then remembered."""
    if entry.checked is None:
        from jsonschema.exceptions import SchemaError
        entry.checked = ""
        for what, validator in (("inputSchema", entry.validator), ("outputSchema", entry.output_validator)):
            if validator is None:
                continue
            try:
                validator.check_schema(dict(validator.schema))  # type: ignore[arg-type]
            except SchemaError as exc:
                entry.checked = f"its {what} is not a valid JSON Schema: {exc.message}"
                break
    return entry.checked or None


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
    broken = schema_problem(entry)
    if broken is not None:
        return f"they cannot be checked: {broken}"
    return entry.problem(entry.validator, arguments)
