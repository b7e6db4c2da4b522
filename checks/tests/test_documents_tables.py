"""The documents' tables and lists are the code's: the switches against
servers/switches.py, the hostile scenarios against the fault suite, the layout
against the files, CI's sentence against .ci/run, the exercises and extensions
against checks/exercises.py, the config keys against solution/config.py, the
recorded mutation run against today's regions and catalogue.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple
from unittest import mock

import pytest

from checks.target import ROOT
from checks.tests import doc_commands as cmds
from checks.tests import doc_programs as progs
from checks.tests import documents as docs
from checks.tests.documents import DOCUMENTS, folded, spoken, table_after


# -- tables against the code --------------------------------------------------------------

def test_the_hostile_table_has_a_row_for_each_hostile_scenario_named_as_the_suite_names_it() -> None:
    from checks.dev.faults import SCENARIOS
    from checks.dev.hostile import HOSTILE_SCENARIOS
    rows = [row[0] for row in table_after("labs/MAINTAINERS.md", "against hostile servers and inputs")]
    names = [s.name.removeprefix("hostile: ") for s in SCENARIOS]
    assert [r for r in rows if r not in names] == [], "rows that name no scenario of checks/dev/faults.py"
    assert [s.name.removeprefix("hostile: ") for s in HOSTILE_SCENARIOS if s.name.removeprefix("hostile: ")
            not in rows] == [], "scenarios of checks/dev/hostile.py with no row"
    said = re.search(r"The (\w+) scenarios against hostile servers and inputs \((\w+) of them in "
                     r"checks/dev/hostile\.py, .*?; the other (\w+) in checks/dev/faults\.py\)",
                     folded("labs/MAINTAINERS.md"))
    counts = (len(rows), len(HOSTILE_SCENARIOS), len(rows) - len(HOSTILE_SCENARIOS))
    assert said is not None and said.groups() == tuple(spoken(n) for n in counts), said


def switches() -> Dict[str, Any]:
    from servers.switches import parse_options
    import argparse
    parser = progs.parser_of("servers.notes")
    return {a.option_strings[0]: a for a in parser._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction)}


def switch_rows() -> List[Tuple[List[str], List[str]]]:
    """(the switches a row names, with their values; the environment variables it names)."""
    return [(re.findall(r"`([^`]+)`", row[0]), re.findall(r"`(MCP_LAB_[A-Z_]+)`", row[1]))
            for row in table_after("servers/README.md", "## Switches")]


def test_the_switches_table_names_every_switch_and_every_choice_of_the_servers() -> None:
    named = [switch for written, _ in switch_rows() for w in written for switch in cmds.variants(w)]
    missing = []
    for option, action in switches().items():
        if not any(w.split(" ")[0] == option for w in named):
            missing.append(option)
        for choice in action.choices or ():
            if choice != action.default and f"{option} {choice}" not in named:
                missing.append(f"{option} {choice}")
    assert missing == [], f"servers/README.md: the switches table lacks {', '.join(missing)} (servers/switches.py)"


def test_the_switches_table_gives_each_switch_the_variable_its_help_names_and_the_server_reads_it() -> None:
    from servers.switches import parse_options
    helps = {option: re.findall(r"MCP_LAB_[A-Z_]+", action.help or "") for option, action in switches().items()}
    by_row: Dict[str, List[str]] = {}
    for written, variables in switch_rows():
        for switch in written:
            by_row.setdefault(switch.split(" ")[0], []).extend(variables)
    wrong = [f"{o}: the table says {sorted(set(by_row.get(o, [])))}, its help {h}" for o, h in helps.items()
             if sorted(set(by_row.get(o, []))) != h]
    assert wrong == [], "servers/README.md: " + "; ".join(wrong)
    defaults = vars(parse_options("notes", []))
    samples = {"MCP_LAB_ERA": "legacy", "MCP_LAB_FAIL": "garbage", "MCP_LAB_LATENCY": "search=1"}
    for option, variables in helps.items():
        for variable in variables:
            with mock.patch.dict(os.environ, {variable: samples.get(variable, "1")}):
                read = vars(parse_options("notes", []))
            assert read != defaults, f"{option}'s help names {variable}, but the server does not read it"


def test_the_servers_help_says_which_switches_read_the_environment() -> None:
    parser = progs.parser_of("servers.notes")
    named = [bool(re.search(r"MCP_LAB_", a.help or "")) for a in switches().values()]
    assert ("every switch" in (parser.epilog or "").lower()) == all(named), parser.epilog


LAYOUT_SECTIONS = ("labs/", "starter/", "solution/", "servers/", "checks/", "checks/dev/", ".ci/run")


def layout() -> Dict[str, str]:
    """MAINTAINERS' layout block, by the folder each paragraph starts with."""
    found: Dict[str, str] = {}
    current = ""
    for line in docs.block_after("labs/MAINTAINERS.md", "## Layout").text.splitlines():
        head = line.split(" ")[0]
        if head in LAYOUT_SECTIONS:
            current, line = head, line[len(head):]
        found[current] = found.get(current, "") + " " + line
    return found


def files_of(folder: str) -> List[Path]:
    skip = {"tests", "__pycache__", "corpus"}
    return sorted(p for p in (ROOT / folder).rglob("*") if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
                  and p.name not in ("__init__.py", "__main__.py") and not p.name.endswith(".pyc")
                  and not (folder == "checks/" and "dev" in p.relative_to(ROOT / folder).parts))


def unnamed(folder: str) -> List[str]:
    """The files of `folder` that the layout names nowhere in its paragraph (starter/ is
    built from solution/: solution/'s names count for it)."""
    text_ = layout()[folder] + (layout()["solution/"] if folder == "starter/" else "")
    return [str(p.relative_to(ROOT)) for p in files_of(folder)
            if not re.search(rf"(?<![\w.]){re.escape(p.stem)}\b", text_)]


@pytest.mark.parametrize("folder", ["labs/", "starter/", "solution/", "servers/", "checks/", "checks/dev/"])
def test_the_layout_names_every_file_of_each_folder(folder: str) -> None:
    missing = unnamed(folder)
    paragraph = "solution/" if folder == "starter/" else folder  # starter/ is a build of solution/
    assert missing == [], "".join(
        f"\nlabs/MAINTAINERS.md, Layout: no paragraph names {Path(path).stem} ({path}): add it to the "
        f"{paragraph} paragraph, with a few words on what it does" for path in missing)


@pytest.mark.parametrize("folder", ["labs/", "servers/", "checks/", "checks/dev/"])
def test_every_file_the_layout_names_exists(folder: str) -> None:
    files = r"(?<![\w/.-])(?:[\w.-]+/)*[\w.-]+\.(?:py|md|json|txt|yml|png)\b"
    folders = r"(?<![\w/.-])(?:[\w.-]+/)+(?!\w)"
    names = re.findall(f"{files}|{folders}", layout()[folder])
    under = [str(p.relative_to(ROOT / folder)) for p in (ROOT / folder).rglob("*")]
    missing = [n for n in names if n not in LAYOUT_SECTIONS
               and not any(u == n.rstrip("/") or u.endswith("/" + n.rstrip("/")) for u in under)
               and not (n.startswith(LAYOUT_SECTIONS) and (ROOT / n).exists())]
    assert missing == [], f"labs/MAINTAINERS.md, Layout: no {', '.join(missing)} under {folder}"


def ci_script() -> str:
    return (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def ci_steps() -> List[str]:
    """What .ci/run runs, as `MODULE ARGS...` lines (its comments, redirections and
    status bookkeeping left out)."""
    lines = ci_script().replace("\\\n", " ").splitlines()
    steps = [" ".join(line.split('"$PY" -m ', 1)[1].split("#")[0].split()) for line in lines
             if '"$PY" -m ' in line and not line.strip().startswith("echo")]
    return [re.split(r" (?:>|\|\||&&)", step)[0] for step in steps]


def test_maintainers_says_what_ci_runs() -> None:
    """The sentence at the top of MAINTAINERS names every step of .ci/run with the
    options CI gives it, counts its self-checks, and names nothing CI does not run."""
    steps = ci_steps()
    said = re.search(r"CI \(\.ci/run\) (.*?)\. ", folded("labs/MAINTAINERS.md"))
    assert said is not None, "labs/MAINTAINERS.md: the sentence saying what CI runs is gone"
    sentence = said.group(1)
    self_checks = [s for s in steps if s.split(" ")[0] == "checks"]
    # each other step as its program and the options CI gives it (`mypy --strict`)
    others = [" ".join(w for w in s.split(" ") if w == s.split(" ")[0] or w.startswith("-")) for s in steps
              if s.split(" ")[0] not in ("checks", "pip")]
    missing = [s for s in others if not re.search(rf"(?<![\w.-]){re.escape(s)}(?![\w.-])", sentence)]
    assert missing == [], f"labs/MAINTAINERS.md: CI runs {missing}, which its sentence does not say: {sentence}"
    named = set(re.findall(r"(?<![\w.])checks\.dev\.\w+", sentence))
    assert named <= {s.split(" ")[0] for s in others}, f"CI does not run {named - {s.split(' ')[0] for s in others}}"
    counts = re.search(r"(\w+) self-checks \((.*?)\)", sentence)
    assert counts is not None and counts.group(1) == spoken(len(self_checks)), (sentence, self_checks)
    options = [w for s in self_checks for w in s.split(" ") if w.startswith("--") and w != "--json"]
    assert [o for o in options if o not in counts.group(2)] == [], (counts.group(2), self_checks)
    extra = re.search(r"pip install .*?-e '\.\[(\w+)\]'", ci_script())
    assert extra is not None and f"installs the {extra.group(1)} extra" in sentence, sentence
    assert ("Chromium" in sentence) == ("apt-get install -y -q chromium" in ci_script()), sentence
    assert ("fixture server of the checkout is left running" in sentence) == ("pgrep" in ci_script()), sentence


def test_the_walkthroughs_exercise_table_is_the_exercises_of_the_checks() -> None:
    from checks.exercises import EXERCISES
    rows = table_after("labs/GUIDE.md", "Work like this, one exercise at a time")
    found = {int(r[0]): (r[1], r[2]) for r in rows}
    wanted = {n: (f"`starter/{e.file}`, `{e.function}`",
                  f"item {e.items[0]}" if len(e.items) == 1 else f"items {' and '.join(map(str, e.items))}")
              for n, e in EXERCISES.items()}
    assert found == wanted


def test_each_extension_section_names_the_file_and_function_the_checks_judge() -> None:
    from checks.exercises import EXTENSIONS
    headings = dict(re.findall(r"^### (11\.\d+) .*?\((E\d+): ", docs.text("labs/GUIDE.md"), re.M))
    for name, extension in EXTENSIONS.items():
        heading = re.search(rf"^### (11\.\d+) .*\({name}: `starter/([\w.]+)`, `([\w.]+)`\)$",
                            docs.text("labs/GUIDE.md"), re.M)
        assert heading is not None, f"labs/GUIDE.md: no section heading for {name}"
        assert (f"section {heading.group(1)}", heading.group(2), heading.group(3)) == \
               (extension.guide.split(" (")[0], extension.file, extension.function), heading.group(0)
    assert sorted(headings.values()) == sorted(EXTENSIONS)


def test_the_readmes_json_fields_are_in_the_reports_schema() -> None:
    schema = json.loads((ROOT / "checks" / "report.schema.json").read_text())
    row = next(r for r in table_after("README.md", "| command | what it does |") if "--json" in r[0])
    named = re.findall(r"(\w+)", row[1].split("(", 1)[1].split("), described")[0])
    fields = set(schema["properties"]) | set(schema["properties"]["items"]["items"]["properties"])
    words = {"the", "with", "when", "code", "printed", "and", "for", "run"}
    assert [n for n in named if n not in fields and n not in words] == [], row[1]


REMOTE_KEYS = {"url", "headers", "type", "oauth"}  # a remote server's: CLIENT's "Remote servers" names them


def test_clients_list_of_server_keys_is_the_configs() -> None:
    from solution.host.config import SERVER_KEYS
    from solution.remote.config import OAUTH_KEYS
    client = docs.text("labs/CLIENT.md")
    said = re.search(r"Each server entry takes (.*?):\n", client, re.S)
    assert said is not None, "labs/CLIENT.md: the list of a server entry's keys is gone"
    named = {k for k in re.findall(r"`(\w+)`", said.group(1)) if k not in ("false",)}
    assert named == SERVER_KEYS - REMOTE_KEYS, ("labs/CLIENT.md: the keys of a server entry (solution/config.py's "
                                               "SERVER_KEYS) differ by", named ^ (SERVER_KEYS - REMOTE_KEYS))
    section = client.split("### Remote servers", 1)[1].split("\n### Code mode", 1)[0]
    quoted = set(re.findall(r'"(\w+)"(?=[:`])', section))
    assert REMOTE_KEYS - quoted == set(), f"labs/CLIENT.md, Remote servers: no word on {REMOTE_KEYS - quoted}"
    assert OAUTH_KEYS - quoted == set(), (f"labs/CLIENT.md, Signing in: the \"oauth\" keys {OAUTH_KEYS - quoted} "
                                          "(solution/config.py's OAUTH_KEYS) are not described")


def test_the_recorded_mutation_run_is_of_todays_regions_catalogue_and_equivalents() -> None:
    """result.txt is of today's regions and equivalents, adds up, and is what
    INSTRUCTORS reports; the catalogue it says ran in pytest is today's."""
    from checks.dev.mutants.catalogue import CATALOGUE
    from checks.dev.mutants.equivalents import read_equivalents
    from checks.dev.mutants.regions import REGIONS
    result = (ROOT / "checks" / "dev" / "mutants" / "result.txt").read_text(encoding="utf-8")
    lines = result.splitlines()
    rows = [line.split() for line in lines if re.match(r"^(\d|E\d+)\s", line)]
    assert [r[0] for r in rows] == list(REGIONS), "result.txt: not a run of today's regions"
    made, killed, equivalent = (sum(int(r[column]) for r in rows) for column in (1, 2, 3))
    assert equivalent == len(read_equivalents().reasons), "result.txt: not a run with today's equivalent.txt"
    total = re.match(r"(\d+) of (\d+) non-equivalent generated mutants killed \((\d+) equivalent\);.*?(\d+) s with",
                     lines[-1])
    assert total is not None and total.groups()[:3] == (str(killed), str(made - equivalent), str(equivalent)), \
        f"result.txt: its last line is not the sum of its rows ({killed} killed of {made - equivalent}): {lines[-1]}"
    ran = re.search(r"the (\d+) catalogue entries ran in pytest", result)
    assert ran is not None and int(ran.group(1)) == len(CATALOGUE), f"the catalogue has {len(CATALOGUE)} entries"
    said = re.search(r"Last run, on 2 CPUs: (\d+) of (\d+) non-equivalent generated mutants killed in all (\w+) "
                     r"regions \((\d+) equivalent\), in about (\w+) minutes .*? and (\d+) of (\d+) catalogue "
                     r"mutants red for their reason \(in pytest", folded("labs/INSTRUCTORS.md"))
    minutes = str(round(int(total.group(4)) / 60))
    assert said is not None and said.groups() == (
        str(killed), str(made - equivalent), spoken(len(REGIONS)), str(equivalent), minutes,
        str(len(CATALOGUE)), str(len(CATALOGUE))), (said, lines[-1])


def test_every_config_in_the_documents_is_one_the_client_takes_as_it_stands() -> None:
    """Each JSON block with "mcpServers" parses with the client's own config reader,
    without a warning, its ${VARIABLES} set; CLIENT's default-config sample is
    the default config's own entries."""
    from solution.host.config import parse_host_config as parse_config  # the documents configure the reference
    configs = [(doc, b) for doc in DOCUMENTS for b in docs.blocks(doc) if b.lang == "json" and "mcpServers" in b.text]
    assert configs, "no config samples found (the reader is broken)"
    for doc, block in configs:
        environ = {name: "x" for name in re.findall(r"\$\{(\w+)", block.text)}
        config = parse_config(block.text, f"{doc}:{block.line}", environ=environ)
        assert config.warnings == (), (doc, block.line, config.warnings)
    default = json.loads((ROOT / "labs" / "servers.json").read_text())["mcpServers"]
    sample = json.loads(docs.block_after("labs/CLIENT.md", "config is `labs/servers.json`, in the usual shape").text)
    assert all(default.get(alias) == entry for alias, entry in sample["mcpServers"].items()), sample


# How README names each package the test extra brings (the extras it includes resolved).
TEST_PACKAGES = {"pytest": "pytest", "pytest-timeout": "pytest-timeout", "pytest-xdist": "pytest-xdist",
                 "mypy": "mypy", "types-jsonschema": "type stubs", "types-regex": "type stubs",
                 "mcp": "the official SDK", "pydantic-monty": "the code-mode sandbox", "cosmic-ray": "cosmic-ray",
                 "PyJWT": "PyJWT", "hypothesis": "Hypothesis", "trio": "trio", "PyYAML": "PyYAML",
                 "setuptools": "a setuptools that builds wheels itself"}


def test_the_readme_names_every_package_the_test_extra_brings() -> None:
    text_ = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = text_.split("[project.optional-dependencies]")[1]
    extras = dict(re.findall(r"^([\w-]+) = \[(.*?)\]\n", block, re.S | re.M))
    wanted, packages = ["test"], []
    while wanted:
        for requirement in re.findall(r'"([^"]+)"', extras[wanted.pop()]):
            inner = re.fullmatch(r"mcp-client-lab\[([\w-]+)\]", requirement)
            if inner:
                wanted.append(inner.group(1))
            else:
                packages.append(re.split(r"[\[<>=!~ ]", requirement)[0])
    said = re.search(r"the test extra adds (.*?)\):", folded("README.md"))
    assert said is not None, "README.md: the sentence on what the test extra adds is gone"
    unnamed = [p for p in packages if p not in TEST_PACKAGES or TEST_PACKAGES[p] not in said.group(1)]
    assert unnamed == [], f"README.md: the test extra brings {unnamed}; its sentence (or TEST_PACKAGES) names none"
    stubs = re.search(r"with (\w+) packages of type stubs", said.group(1))
    assert stubs is not None and stubs.group(1) == spoken(sum(p.startswith("types-") for p in packages)), said.group(1)
