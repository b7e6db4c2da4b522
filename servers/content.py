"""What a fixture serves besides tools: resources, resource templates and prompts,
and completion of their arguments. Pure: the answers to `resources/list`,
`resources/templates/list`, `resources/read`, `prompts/list`, `prompts/get` and
`completion/complete` without the envelope (core.py and legacy.py add each
era's), so tests drive them without a process.

Strict like the rest: an unknown URI, prompt or argument is an error, never an
empty success, so a client's slip shows in the journal.
"""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Callable, Dict, List, Optional

from servers.rpc import INVALID_PARAMS, Json, RpcError

Words = Callable[[], List[str]]  # the values an argument can take, for completion

RESOURCE_NOT_FOUND = -32002  # 2025-11-25's code; 2026-07-28 folds it into -32602
COMPLETION_LIMIT = 100  # the spec's most values in one completion result


def described(listed: Json, title: Optional[str], description: Optional[str]) -> Json:
    """A listing with the optional display fields it has (absent, not null, when it has none)."""
    if title is not None:
        listed["title"] = title
    if description is not None:
        listed["description"] = description
    return listed


@dataclass
class Resource:
    """One readable thing: `read()` gives its `text` or base64 `blob`."""

    uri: str
    name: str
    mime_type: str
    read: Callable[[], Json]
    _: KW_ONLY
    title: Optional[str] = None
    description: Optional[str] = None

    def to_json(self) -> Json:
        return described({"uri": self.uri, "name": self.name, "mimeType": self.mime_type}, self.title, self.description)

    def contents(self) -> Json:
        return {"uri": self.uri, "mimeType": self.mime_type, **self.read()}


@dataclass
class Template:
    """A family of URIs, `{name}` standing for one path segment (RFC 6570 level 1).
    `read` serves a URI no listed resource has (None: the family is only listed)."""

    uri_template: str
    name: str
    mime_type: str
    _: KW_ONLY
    title: Optional[str] = None
    description: Optional[str] = None
    completions: Dict[str, Words] = field(default_factory=dict)
    read: Optional[Callable[[Dict[str, str]], Optional[Json]]] = None

    def __post_init__(self) -> None:
        pattern = "".join(f"(?P<{part[1:-1]}>[^/?#]+)" if part.startswith("{") else re.escape(part)
                          for part in re.split(r"(\{[A-Za-z_][A-Za-z0-9_]*\})", self.uri_template) if part)
        self._pattern = re.compile(pattern + r"\Z")

    def match(self, uri: str) -> Optional[Dict[str, str]]:
        found = self._pattern.match(uri)
        return found.groupdict() if found else None

    def to_json(self) -> Json:
        return described({"uriTemplate": self.uri_template, "name": self.name, "mimeType": self.mime_type},
                         self.title, self.description)


@dataclass
class Prompt:
    """A prompt: `render(arguments)` gives its messages; `arguments` as the spec lists them."""

    name: str
    description: str
    render: Callable[[Dict[str, str]], List[Json]]
    _: KW_ONLY
    title: Optional[str] = None
    arguments: List[Json] = field(default_factory=list)
    completions: Dict[str, Words] = field(default_factory=dict)

    def to_json(self) -> Json:
        listed: Json = {"name": self.name, "description": self.description, "arguments": self.arguments}
        if self.title is not None:
            listed["title"] = self.title
        return listed


def resource_not_found(uri: Any, *, legacy: bool) -> RpcError:
    return RpcError(RESOURCE_NOT_FOUND if legacy else INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})


def completed(words: List[str], value: str) -> Json:
    """The values starting with what was typed (case aside), in order, at most the spec's 100."""
    hits = sorted(w for w in words if w.lower().startswith(value.lower()))
    return {"completion": {"values": hits[:COMPLETION_LIMIT], "total": len(hits),
                           "hasMore": len(hits) > COMPLETION_LIMIT}}


@dataclass
class Content:
    """A fixture's resources (a function: the list may grow), templates and prompts."""

    resources: Callable[[], List[Resource]]
    templates: List[Template]
    prompts: List[Prompt]

    def find(self, uri: Any) -> Optional[Resource]:
        return next((r for r in self.resources() if r.uri == uri), None)

    def accepts(self, uri: Any) -> bool:
        """A URI a client may watch: a listed resource, or one of a template's family
        (a note that does not exist yet may be added; a subscriber hears of it)."""
        return isinstance(uri, str) and (self.find(uri) is not None or
                                         any(t.match(uri) is not None for t in self.templates))

    def read(self, params: Json, *, legacy: bool) -> Json:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, "Invalid params: resources/read needs a string 'uri'")
        resource = self.find(uri)
        if resource is not None:
            return {"contents": [resource.contents()]}
        for template in self.templates:
            variables = template.match(uri)
            served = template.read(variables) if variables is not None and template.read else None
            if served is not None:
                return {"contents": [{"uri": uri, "mimeType": template.mime_type, **served}]}
        raise resource_not_found(uri, legacy=legacy)

    def prompt_named(self, name: Any) -> Prompt:
        prompt = next((p for p in self.prompts if p.name == name), None)
        if prompt is None:
            raise RpcError(INVALID_PARAMS, f"Invalid params: unknown prompt {name!r}")
        return prompt

    def get_prompt(self, params: Json) -> Json:
        prompt = self.prompt_named(params.get("name"))
        given = params.get("arguments", {})
        if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
            raise RpcError(INVALID_PARAMS, "Invalid params: prompt arguments must be an object of strings")
        for argument in prompt.arguments:
            if argument.get("required") and argument["name"] not in given:
                raise RpcError(INVALID_PARAMS, f"Invalid params: prompt {prompt.name} needs the argument "
                                               f"'{argument['name']}'")
        known = {a["name"] for a in prompt.arguments}
        unknown = sorted(set(given) - known)
        if unknown:
            raise RpcError(INVALID_PARAMS, f"Invalid params: prompt {prompt.name} takes no argument '{unknown[0]}'")
        return {"description": prompt.description, "messages": prompt.render(dict(given))}

    def complete(self, params: Json) -> Json:
        ref, argument = params.get("ref"), params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict) or \
                not isinstance(argument.get("name"), str) or not isinstance(argument.get("value"), str):
            raise RpcError(INVALID_PARAMS, "Invalid params: completion/complete needs 'ref' and an 'argument' "
                                           "with a string name and value")
        if ref.get("type") == "ref/prompt":
            completions = self.prompt_named(ref.get("name")).completions
        elif ref.get("type") == "ref/resource":
            template = next((t for t in self.templates if t.uri_template == ref.get("uri")), None)
            if template is None:
                raise RpcError(INVALID_PARAMS, f"Invalid params: no resource template {ref.get('uri')!r}")
            completions = template.completions
        else:
            raise RpcError(INVALID_PARAMS, f"Invalid params: unknown ref type {ref.get('type')!r}")
        words = completions.get(argument["name"])
        if words is None:
            raise RpcError(INVALID_PARAMS, f"Invalid params: no completion for the argument {argument['name']!r}")
        return completed(words(), argument["value"])
