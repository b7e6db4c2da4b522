"""Code mode's stubs: every fixture tool becomes a typed function that type-checks,
names are legal and mapped back by table, and server text stays inert."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from solution.host.aggregator import Aggregator
from solution.config import config_of
from solution.stubs import module_for, stub_modules

ODD: List[Dict[str, Any]] = [
    {"name": "class", "inputSchema": {"type": "object", "properties": {"from": {"type": "string"},
                                                                       "n": {"type": "integer"}},
                                      "required": ["n"]}},
    {"name": "2fa.reset", "inputSchema": {"type": "object"}},
    {"name": "tree", "inputSchema": {"type": "object", "properties": {"root": {"$ref": "#/$defs/node"}},
                                     "$defs": {"node": {"type": "object", "properties": {
                                         "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}},
     "outputSchema": {"type": "object", "properties": {"a-b": {"type": ["string", "null"]},
                                                       "size": {"enum": [1.5, 2]}}}},
    {"name": "evil", "description": 'ends here """ \x1b[2J import os', "inputSchema": {
        "type": "object", "properties": {"mode": {"oneOf": [{"const": "a"}, {"const": "b"}]}}}},
]


def test_names_are_legal_unique_and_mapped_back_by_table() -> None:
    module = module_for("odd", ODD)
    assert set(module.originals.values()) == {"class", "2fa.reset", "tree", "evil"}
    assert all(name.isidentifier() for name in module.originals)
    assert module.originals["evil"] == "evil" and "class" not in module.originals


def test_a_tool_cannot_take_a_name_the_stub_itself_needs(tmp_path: Path) -> None:
    hostile = [{"name": "Any", "inputSchema": {"type": "object"}},
               {"name": "SearchResult", "inputSchema": {"type": "object"}},
               {"name": "search", "inputSchema": {"type": "object"},
                "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]
    module = module_for("odd", hostile)
    assert "Any" not in module.originals  # the tool steps aside for typing's Any...
    assert module.originals["SearchResult"] == "SearchResult" and "class SearchResult_(" in module.source  # ...a class for a tool
    assert set(module.originals.values()) == {"Any", "SearchResult", "search"}
    (tmp_path / "odd.pyi").write_text(module.source)
    checked = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "odd.pyi"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert checked.returncode == 0, checked.stdout


def test_an_alias_that_names_a_standard_module_does_not_hide_it() -> None:
    assert module_for("json", ODD).name == "json_tools" and module_for("notes", ODD).name == "notes"


def test_server_text_cannot_end_the_docstring_or_reach_the_terminal() -> None:
    source = module_for("odd", ODD).source
    compile(source, "odd.pyi", "exec")  # still one docstring: the server's quotes are escaped
    assert "\x1b" not in source and 'ends here \\"\\"\\"' in source


def test_schema_constructs_become_types() -> None:
    source = module_for("odd", ODD).source
    assert "n: int, from" not in source  # a keyword cannot be a parameter: left to the arguments
    assert "mode: Literal['a', 'b'] | None = None" in source
    assert "list[Any]" in source  # the recursive $ref stops at Any
    assert "TypedDict('TreeResult', {'a-b': str | None, 'size': Any}, total=False)" in source


@pytest.mark.anyio
async def test_every_fixture_tools_stub_type_checks(fixture: Any, tmp_path: Path) -> None:
    async with Aggregator(config_of([fixture("notes").spec, fixture("tickets").spec])) as tools:
        await tools.refresh()
        servers: Dict[str, List[Any]] = {}
        for entry in tools.entries.values():
            servers.setdefault(entry.alias, []).append(entry.tool)
    modules = stub_modules({**servers, "odd": ODD})
    assert sum(len(m.originals) for m in modules) == len(tools.entries) + len(ODD)
    for module in modules:
        (tmp_path / f"{module.name}.pyi").write_text(module.source)
    # A script a model might write against them, misusing nothing.
    (tmp_path / "script.py").write_text(
        "import notes, tickets\n\n\n"
        "async def main() -> None:\n"
        "    found = await notes.search(query='paging')\n"
        "    for hit in found['results']:\n"
        "        print(hit['id'], hit['title'])\n"
        "    export = await tickets.export_tickets(format='csv')\n"
        "    print(len(export['tickets']))\n")
    (tmp_path / "wrong.py").write_text(
        "import tickets\n\n\nasync def main() -> None:\n    await tickets.export_tickets(format='xml')\n")
    checked = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "script.py",
                              *[f"{m.name}.pyi" for m in modules]],
                             capture_output=True, text=True, cwd=tmp_path, timeout=240)
    assert checked.returncode == 0, checked.stdout
    wrong = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "wrong.py"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=240)
    assert wrong.returncode == 1 and "wrong.py:5" in wrong.stdout and "Literal['xml']" in wrong.stdout


def test_a_schema_that_fans_out_is_typed_once_per_reference_and_capped() -> None:
    defs: Dict[str, Any] = {f"d{n}": {"anyOf": [{"$ref": f"#/$defs/d{n + 1}"}] * 10} for n in range(6)}
    defs["d6"] = {"type": "object", "properties": {"leaf": {"type": "string"}}}
    wide = {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}}
    many = {"type": "object", "properties": {f"p{i}": {"type": "object", "properties": {
        f"q{j}": {"type": "string"} for j in range(60)}} for i in range(60)}}
    module = module_for("fan", [{"name": "wide", "inputSchema": wide}, {"name": "many", "inputSchema": many}])
    compile(module.source, "fan.py", "exec")  # still Python
    assert module.source.count("class ") < 70  # the 3,600 nodes of 'many' stopped at the cap
    assert "async def wide(" in module.source and "async def many(" in module.source


def test_stubs_stay_python_whatever_the_server_names_and_says() -> None:
    tools: List[Dict[str, Any]] = [
        {"name": "quoted", "description": 'ends with a quote"', "inputSchema": {"type": "object"}},
        {"name": "twins", "inputSchema": {"type": "object", "properties": {
            "file": {"type": "string"}, "\ufb01le": {"type": "string"}}}},  # NFKC makes them one identifier
        {"name": "none", "inputSchema": {"type": "object", "properties": {"x": {"type": "object", "properties": {
            "y": {"type": "string"}}}}}},
    ]
    hint_none = module_for("s", [{"name": "n", "inputSchema": {"type": "object", "properties": {
        "one": {"type": "object", "properties": {"y": {"type": "string"}}}}}}])
    hint_none.classes.clear()
    from solution.stubs import TypeWriter
    writer = TypeWriter(hint_none, set())
    assert writer.typed_dict({}, {"y": {"type": "string"}}, "none", {}, 0, set()) != "None"
    module = module_for("s", tools)
    compile(module.source, "s.py", "exec")  # a SyntaxError here would refuse every script
    assert module.source.count("le: str") == 1


def test_two_aliases_never_share_a_stub_module() -> None:
    names = [m.name for m in stub_modules({"json": [{"name": "a"}], "json_tools": [{"name": "b"}]})]
    assert len(set(names)) == 2 and names[0] == "json_tools", names


def test_an_optional_parameter_that_may_be_null_says_none_once() -> None:
    source = module_for("s", [{"name": "t", "inputSchema": {"type": "object", "properties": {
        "note": {"type": ["string", "null"]}, "any": {}}}}]).source
    assert "note: str | None = None" in source and "None | None" not in source and "any: Any = None" in source
