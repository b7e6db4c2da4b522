"""Code mode, part one: typed Python stubs from tool schemas.

Each connected server becomes one stub module (named after its alias), each
tool one keyword-only async function whose parameters and return type come
from the tool's `inputSchema` and `outputSchema`:

    object with properties -> a TypedDict      string/integer/number/boolean -> str/int/float/bool
    enum, const            -> Literal[...]      array -> list[T]; map -> dict[str, T]
    anyOf/oneOf, type lists -> T1 | T2          $ref within the schema -> the type it names
    not required           -> T | None = None   anything else -> Any

A tool without an `outputSchema` returns its text content as `str`. Function
names are legal identifiers derived from the tool names; when that changes a
name (or two tools would share one), a short hash of the original is
appended, and `StubModule.originals` maps each function back to its tool: a
table, never a string split. Descriptions become docstrings marked as the
server's words, with control characters made visible.
"""

from __future__ import annotations

import keyword
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

from .jsonrpc import Json
from .naming import short_hash
from .untrusted import shown

_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")
MAX_DEPTH = 8  # nested schemas deeper than this are typed Any
MAX_NODES = 2_000  # schema nodes one tool's stub may visit; a fan-out past it is typed Any
TYPING_NAMES = ("Any", "Literal", "Required", "TypedDict")  # what every stub module imports


def identifier(alias: str, name: str, taken: Set[str]) -> str:
    """A legal, unused Python identifier for `name`; hashed when it had to change."""
    legal = _NOT_IDENTIFIER.sub("_", name) or "_"
    if legal[0].isdigit():
        legal = "_" + legal
    if legal != name or keyword.iskeyword(legal) or legal in taken or legal.startswith("__"):
        base = legal.strip("_") or "tool"
        legal = f"{'t_' if base[0].isdigit() else ''}{base}_{short_hash(alias, name)}"
    taken.add(legal)
    return legal


def pascal(text: str) -> str:
    joined = "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", text) if part) or "T"
    return joined if not joined[0].isdigit() else "T" + joined


def literal(values: List[Any]) -> Optional[str]:
    """`Literal[...]` for the values of an `enum` (or a `const`, as one value);
    None when any value cannot be a Literal, and the caller falls back to Any."""
    # >>> extension E8 (code mode): enum and const values become a Literal type
    # TODO extension E8: return "Literal[...]" listing the values as Python source
    # (str, int, bool and None can be Literal values), or None when a value cannot
    # be one (a float, a list, an object). Until then every enum is typed Any, and
    # the type check lets any value through (labs/GUIDE.md 11.8).
    # The clauses the checks hold it to: labs/GUIDE.md section 11.8.
    return None
    # <<< extension E8


@dataclass
class StubModule:
    """One server's stubs: the source text and the way back to tool names."""

    alias: str
    name: str  # the module's name
    originals: Dict[str, str] = field(default_factory=dict)  # function -> original tool name
    classes: List[str] = field(default_factory=list)
    functions: List[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        head = [f'"""Tools of the MCP server \'{shown(self.alias, 40)}\', as functions (generated; '
                'docstrings are the server\'s words)."""', "",
                f"from typing import {', '.join(TYPING_NAMES)}", "", ""]
        return "\n".join(head + self.classes + self.functions).rstrip() + "\n"


class TypeWriter:
    """Turns JSON Schemas into type expressions, adding TypedDicts to a module."""

    def __init__(self, module: StubModule, class_names: Set[str]) -> None:
        self.module = module
        self.class_names = class_names
        self.left = MAX_NODES  # schema nodes this tool may still visit (set again per tool)
        self._refs: Dict[Tuple[int, str], str] = {}  # (root, $ref) -> its type, written once

    def type_of(self, schema: Any, hint: str, root: Json, depth: int = 0, seen: Optional[Set[str]] = None) -> str:
        # A server's schema may fan out ($refs to $refs, ten at a time): each
        # reference is typed once, and past MAX_NODES nodes everything is Any.
        self.left -= 1
        if not isinstance(schema, dict) or depth > MAX_DEPTH or self.left < 0:
            return "Any"
        seen = seen or set()
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = self.resolve(ref, root)
            if target is None or ref in seen:
                return "Any"  # outside this schema, or recursive: no finite type
            memo = (id(root), ref)
            if memo not in self._refs:
                self._refs[memo] = self.type_of(target, hint, root, depth + 1, seen | {ref})
            return self._refs[memo]
        if "const" in schema:
            return literal([schema["const"]]) or "Any"
        if isinstance(schema.get("enum"), list):
            return literal(schema["enum"]) or "Any"
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self.union([self.type_of(s, hint, root, depth + 1, seen) for s in schema[key]])
        kind = schema.get("type")
        if isinstance(kind, list):
            return self.union([self.type_of({**schema, "type": k}, hint, root, depth + 1, seen) for k in kind])
        simple = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
        if kind in simple:
            return simple[kind]
        if kind == "array":
            return f"list[{self.type_of(schema.get('items'), hint + 'Item', root, depth + 1, seen)}]"
        if kind == "object" or "properties" in schema:
            properties = schema.get("properties")
            if isinstance(properties, dict) and properties:
                return self.typed_dict(schema, properties, hint, root, depth, seen)
            extra = schema.get("additionalProperties")
            value = self.type_of(extra, hint + "Value", root, depth + 1, seen) if isinstance(extra, dict) else "Any"
            return f"dict[str, {value}]"
        return "Any"

    def union(self, parts: List[str]) -> str:
        unique = list(dict.fromkeys(parts))
        if "Any" in unique:
            return "Any"
        if all(p.startswith("Literal[") for p in unique):  # one Literal of all the values reads better
            return "Literal[" + ", ".join(p[len("Literal["):-1] for p in unique) + "]"
        return " | ".join(unique)

    @staticmethod
    def resolve(ref: str, root: Json) -> Optional[Json]:
        """A `$ref` inside this schema (#/$defs/X, #/definitions/X); None for anything else."""
        match = re.fullmatch(r"#/(\$defs|definitions)/([^/]+)", ref)
        found = root.get(match.group(1), {}).get(match.group(2)) if match else None
        return found if isinstance(found, dict) else None

    def typed_dict(self, schema: Json, properties: Json, hint: str, root: Json, depth: int,
                   seen: Set[str]) -> str:
        name = pascal(hint)
        while name in self.class_names or keyword.iskeyword(name):  # never a class named None or True
            name += "_"
        self.class_names.add(name)
        required = set(schema.get("required") or [])
        legal = all(isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k) for k in properties)
        fields = [(str(k), self.type_of(v, hint + pascal(str(k)), root, depth + 1, seen), k in required)
                  for k, v in properties.items()]
        fields = [(key, f"Required[{kind}]" if needed else kind, needed) for key, kind, needed in fields]
        if legal:
            lines = [f"class {name}(TypedDict, total=False):"]
            lines += [f"    {key}: {kind}" for key, kind, _ in fields] or ["    pass"]
        else:  # keys that are not identifiers need the functional form
            body = ", ".join(f"{key!r}: {kind}" for key, kind, _ in fields)
            lines = [f"{name} = TypedDict({name!r}, {{{body}}}, total=False)"]
        self.module.classes += lines + ["", ""]
        return name


def docstring(text: str) -> str:
    # Every quote escaped, not only three in a row: a last '"' would close the docstring early.
    safe = shown(text, 400).replace("\\", "\\\\").replace('"', '\\"')
    return f'    """From the server (its words): {safe}"""' if safe else '    """(no description)"""'


def module_name(alias: str) -> str:
    """The stub module's name for an alias, before stub_modules keeps names apart."""
    # An alias that is a standard module's name ("json", "os") would hide that module from scripts.
    name = identifier("", alias, set()) if not alias.isidentifier() else alias
    return f"{name}_tools" if name in sys.stdlib_module_names else name


def module_for(alias: str, tools: List[Json]) -> StubModule:
    """The stub module for one server's tools (in the order the server listed them)."""
    module = StubModule(alias, module_name(alias))
    # Names first, all of them: a tool may not take a name the stub needs (Any,
    # TypedDict...), and no generated TypedDict may take a tool's.
    taken: Set[str] = set(TYPING_NAMES)
    functions = [identifier(alias, str(tool.get("name")), taken) for tool in tools]
    writer = TypeWriter(module, set(taken))
    for tool, function in zip(tools, functions):
        writer.left = MAX_NODES
        module.originals[function] = str(tool.get("name"))
        schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
        assert isinstance(schema, dict)
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        assert isinstance(properties, dict)
        required = set(schema.get("required") or [])
        params = []
        spelled: Set[str] = set()  # Python reads identifiers NFKC-normalised: "ﬁle" is "file"
        for key, prop in sorted(properties.items(), key=lambda kv: kv[0] not in required):
            if not (isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key)) \
                    or unicodedata.normalize("NFKC", key) in spelled:
                continue  # a key no keyword argument can spell (or spell apart): the script cannot send it
            spelled.add(unicodedata.normalize("NFKC", key))
            kind = writer.type_of(prop, f"{function}_{key}", schema)
            optional = kind if "None" in kind.split(" | ") or kind == "Any" else f"{kind} | None"  # never None | None
            params.append(f"{key}: {kind}" if key in required else f"{key}: {optional} = None")
        output = tool.get("outputSchema")
        returns = writer.type_of(output, f"{function}_result", output) if isinstance(output, dict) else "str"
        signature = f"async def {function}(" + (f"*, {', '.join(params)}" if params else "") + f") -> {returns}:"
        module.functions += [signature, docstring(str(tool.get("description") or "")), "    ...", "", ""]
    return module


def stub_modules(servers: Dict[str, List[Json]]) -> List[StubModule]:
    """One module per connected server (alias -> its tools), in config order.
    Offline servers are simply absent: there is nothing a script could call."""
    modules, taken = [], set()
    for alias, tools in servers.items():
        module = module_for(alias, tools)
        while module.name in taken:  # "json" became json_tools, and another alias is json_tools
            module.name += "_"
        taken.add(module.name)
        modules.append(module)
    return modules
