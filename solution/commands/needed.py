"""Which servers a command needs: `call` only the one its name points at, and
`script` only those it imports. Starting fourteen servers for one call costs
seconds each time; the model-facing name already says where it goes.

Pure: from the config and the command's own words, no process is touched.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Optional, Set

from ..config import Config
from ..stubs import module_name


def alias_of(model_name: str) -> Optional[str]:
    """The alias in `mcp__<alias>__<tool>` (hashed and cut names keep the prefix).
    An alias never holds "__" (config.check_alias), so the first one ends it."""
    if not model_name.startswith("mcp__"):
        return None
    alias, sep, _ = model_name[len("mcp__"):].partition("__")
    return alias if sep and alias else None


def imported(source: str) -> Optional[Set[str]]:
    """The top-level module names a script imports; None when it cannot be read
    (the sandbox will say why, with every server there to name)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def module_names(alias: str) -> Set[str]:
    """Every name the stubs may give this alias's module (stubs.stub_modules)."""
    base = module_name(alias)
    return {base, base + "_", base + "__"}  # stub_modules appends "_" to keep two apart


def servers_needed(config: Config, command: Optional[str], name: str = "", source: str = "") -> Config:
    """The config cut down to the servers the command will use; the whole
    config when it cannot tell (a name without the prefix, an unreadable script)."""
    wanted: Optional[Set[str]] = None
    if command == "call":
        alias = alias_of(name)
        wanted = {alias} if alias else None
    elif command == "script":
        modules = imported(source)
        wanted = {s.alias for s in config.servers if modules and module_names(s.alias) & modules} \
            if modules is not None else None
    if not wanted or not any(s.alias in wanted for s in config.servers):
        return config
    return dataclasses.replace(config, servers=tuple(s for s in config.servers if s.alias in wanted))
