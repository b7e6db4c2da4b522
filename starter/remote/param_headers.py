"""Tool parameters mirrored into HTTP headers (`x-mcp-header`, Streamable HTTP).

A server may mark properties of a tool's `inputSchema` with `x-mcp-header:
NAME`; over HTTP the client must then send each such argument again as the
header `Mcp-Param-NAME`, so gateways can route on it without reading the
body. The marks are server text like the rest: a tool whose marks break the
rules (an empty or non-token name, two names equal but for case, a mark on a
`number`, an object or an array, or one reached through anything but a chain
of `properties`) is left out of the table, with the reason. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ..jsonrpc import Json

# An HTTP field-name token; `\Z`, not `$`, which also matches before a trailing newline.
TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
MIRRORED_TYPES = ("string", "integer", "boolean")
SAFE_INTEGER = 2 ** 53 - 1

Mirror = Tuple[Tuple[str, ...], str]  # (the chain of property names, the header's name part)


def mirrors(schema: Any) -> List[Mirror]:
    """The parameters `schema` mirrors into headers; ValueError says why the marks are unusable."""
    found: List[Mirror] = []

    def walk(node: Any, path: Tuple[str, ...], reachable: bool) -> None:
        if isinstance(node, list):
            for child in node:
                walk(child, path, False)
            return
        if not isinstance(node, dict):
            return
        if "x-mcp-header" in node:
            name = node["x-mcp-header"]
            where = "/".join(path) or "the schema root"
            if not reachable or not path:
                raise ValueError(f"x-mcp-header on {where} is not reached by properties alone")
            if not isinstance(name, str) or not TOKEN.match(name):
                raise ValueError(f"x-mcp-header on {where} is not a valid header name")
            if node.get("type") not in MIRRORED_TYPES:
                raise ValueError(f"x-mcp-header on {where}, whose type is not string, integer or boolean")
            found.append((path, name))
        for key, value in node.items():
            if key == "properties" and reachable and isinstance(value, dict):
                for prop, sub in value.items():
                    walk(sub, (*path, str(prop)), True)
            elif key != "x-mcp-header":
                walk(value, path, False)

    walk(schema, (), True)
    names = [name.lower() for _, name in found]
    if len(set(names)) != len(names):
        raise ValueError("two x-mcp-header names differ only in case")
    return found


def header_problem(tool: Json) -> Optional[str]:
    """Why a remote server's tool must be left out for its x-mcp-header marks, or None."""
    try:
        mirrors(tool.get("inputSchema"))
    except ValueError as exc:
        return str(exc)
    return None


def header_text(value: Any) -> Optional[str]:
    """An argument as a header value before encoding; None when there is none to send."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and -SAFE_INTEGER <= value <= SAFE_INTEGER:
        return str(value)
    if isinstance(value, str):
        return value
    return None  # null, absent, or not the kind the mark allows (the schema check refuses it first)


def param_headers(marks: List[Mirror], arguments: Json) -> Dict[str, str]:
    """`Mcp-Param-NAME` -> the argument's text (unencoded), for the marks with a value."""
    headers: Dict[str, str] = {}
    for path, name in marks:
        value: Any = arguments
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        text = header_text(value)
        if text is not None:
            headers[f"Mcp-Param-{name}"] = text
    return headers
