"""The documents cannot drift: every command in README.md, labs/*.md and
servers/README.md is parsed by its own program's parser, every sample output
is made again by the code and compared, and every number that describes the
code is read from the code, so a change that makes a document false fails here.

Why a collector of our own, not Sybil or pytest-examples: neither is
installed, and neither fits what these documents hold. Both run examples
(doctest sessions, Python blocks with their printed output); ours are shell
commands, usage lines (`[--write | --guide] [REGION ...]`) and options in
table cells, which must be *parsed* by the lab's own argparse parsers, not run
(most start servers, some install Node or run for minutes), and prose numbers,
which only a table of (document, statement, code) can hold. The reader needs
only the standard library, and each failure names the document, the statement
and what the code says instead.

The collector: documents.py reads the documents, doc_commands.py finds their
commands, doc_programs.py parses each with its program's parser, doc_runs.py
runs the few that can run here, doc_claims*.py tie each number to the code.
The tests: here the commands and names; test_documents_samples.py the sample
outputs, test_documents_tables.py the tables, test_documents_numbers.py the
numbers, test_documents_fail.py each kind of check failing on a wrong line.
Their shared fixtures (doc_fixtures.py) are the session's, through conftest.py.

The kinds of check, each shown failing on a wrong line by
test_each_kind_of_check_fails_on_a_wrong_line:
- commands: each one (shell blocks, inline code, the autograding JSON) parsed
  by its program: `checks.cli.parse`, the clients' `commands.options.parse`, the
  servers' `parse_options`, and every other program's `main`, stopped at its
  own `parse_args`; an option named alone must be one some program takes, and
  every option of every program must be named in some document;
- names: the environment variables a document sets or names are read by the
  code; the paths it names exist; the identifiers in its inline code exist in
  the code, and so do its error codes;
- samples: the documented commands that can run here (the guide's `--trace`
  of item 2, the code-mode demo, the agent loop, the meta-tools note, and every
  command of the client and the fixture servers in every document, against the
  fixtures, unless its comment says it needs an API key, a browser or a remote
  server) run once a session, at the same time, and their output is compared
  (each client command must exit 0 and do what its comment promises); what the bench's
  rows 7 to 9 count is counted meanwhile; the fault suite's, the interop run's
  and the bench's output is printed by their real `main` with the document's
  own measurements put in, so what the code decides (counts, ratios, targets,
  verdicts, layout) is what is compared; the bill line is the transcript's and
  the HTTP captures' headers the client's;
- tables: the switches against `servers/switches.py`, the hostile scenarios
  against the fault suite, the layout against the files, CI's sentence against
  `.ci/run`, the exercises and extensions against `checks/exercises.py`, the
  config keys and samples against `solution/config.py`, the test extra against
  pyproject.toml, the recorded mutation run against today's regions and catalogue;
- numbers: `learner_claims()` and `reference_claims()`, one pattern per statement, its numbers as groups, and
  the code that decides them.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import sys
from typing import Set, Tuple

import pytest

from checks.target import ROOT
from checks.tests import doc_commands as cmds
from checks.tests import doc_programs as progs
from checks.tests import documents as docs
from checks.tests.doc_programs import Scratch
from checks.tests.documents import DOCUMENTS, folded


# -- commands and names ----------------------------------------------------------------

@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_command_in_the_document_is_one_its_program_accepts(doc: str, scratch: Scratch) -> None:
    found = cmds.commands(doc)
    assert found, f"{doc}: no commands found (the reader is broken)"
    wrong = [f"{c.where}\n    {why}" for c in found for why in [progs.problem(c, scratch)] if why]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_option_the_document_names_alone_is_one_a_program_takes(doc: str, scratch: Scratch) -> None:
    wrong = [f"{s.doc}:{s.line}: `{s.text}`: {why}" for s in cmds.options_in(doc)
             for why in [progs.fragment_problem(s, scratch)] if why]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(progs.BASES))
def test_every_option_of_the_labs_programs_is_in_a_document(module: str) -> None:
    """An option added to a program and to no document is one no reader can find."""
    everything = " ".join(folded(doc) for doc in DOCUMENTS)
    options = sorted(o for o in progs.options_of(module) if o.startswith("--") and o != "--help")
    unnamed = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", everything)]
    assert unnamed == [], f"python -m {module} takes {', '.join(unnamed)}, which no document names ({DOCUMENTS})"


ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+|MOCK|QUESTION|HOME|PATH|TERM|USER|LANG|SHELL|LOGNAME|TMPDIR")
NOT_ENVIRONMENT = {"PR_SET_PDEATHSIG", "SO_PEERCRED"}  # the kernel's names, quoted as such


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_environment_variable_the_document_names_is_read_by_the_code(doc: str) -> None:
    named = {(s.line, m.group(0)) for s in docs.spans(doc) for m in [ENV_NAME.fullmatch(s.text.split("=")[0])]
             if m and m.group(0) not in NOT_ENVIRONMENT}
    wrong = [f"{doc}:{line}: no code reads {name}" for line, name in sorted(named) if not progs.read_by_the_code(name)]
    assert not wrong, "\n".join(wrong)


TOP = ("starter/", "solution/", "servers/", "checks/", "labs/", ".ci/")
MADE_AT_RUN_TIME = {".interop/", "report.json", ".mcp.json", "~/.cache/mcp-client-lab", ".github/workflows/",
                    ".github/classroom/autograding.json",
                    "my_script.py"}  # the reader's own (CLIENT.md shows one, and doc_runs.py writes it)


NOT_THE_LABS = {"__pycache__", "build", ".git", ".interop", ".venv", "node_modules"}  # made by tools, not ours


@functools.lru_cache(maxsize=None)
def tracked() -> Tuple[str, ...]:
    """The checkout's files, without what tools made in it (a virtual environment holds thousands)."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [d for d in subfolders if d not in NOT_THE_LABS and not d.endswith(".egg-info")]
        found += [os.path.relpath(os.path.join(folder, f), ROOT) for f in files]
    return tuple(found)


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_path_the_document_names_exists(doc: str) -> None:
    files = tracked()
    wrong = []
    for span in docs.spans(doc):
        path = span.text.split(" ")[0].split("#")[0]
        if path in MADE_AT_RUN_TIME or not re.fullmatch(r"[\w./~-]+", path):
            continue
        if path.startswith(TOP) or path in ("README.md", "pyproject.toml"):
            ok = (ROOT / path).exists()
        elif re.fullmatch(r"[\w./-]+\.(py|md|toml|yml|png|txt)", path):
            ok = any(f == path or f.endswith("/" + path) for f in files)
        else:
            continue
        if not ok:
            wrong.append(f"{doc}:{span.line}: no such file: {path}")
    assert not wrong, "\n".join(wrong)


IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?")
OUTSIDE_NAMES = {"gc", "ptrace", "Date", "tools_call", "resource_metadata", "client_secret_basic",
                 "client_secret_post", "offline_access", "insufficient_scope"}  # Python's, HTTP's, OAuth's


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_name_in_inline_code_is_in_the_code(doc: str, source: Set[str]) -> None:
    wrong = []
    for span in docs.spans(doc):
        if (not IDENTIFIER.fullmatch(span.text) or span.text in OUTSIDE_NAMES
                or re.search(r"\.(py|md|json)$", span.text)):
            continue
        missing = [part for part in span.text.rstrip("()").split(".") if part not in source]
        if missing:
            wrong.append(f"{doc}:{span.line}: `{span.text}`: no {', '.join(missing)} in the code")
    assert not wrong, "\n".join(wrong)


def test_every_error_code_the_documents_name_is_one_the_code_uses(source: Set[str]) -> None:
    wrong = [f"{s.doc}:{s.line}: {s.text}" for doc in DOCUMENTS for s in docs.spans(doc)
             if re.fullmatch(r"-32\d{3}", s.text) and s.text not in source]
    assert not wrong, "\n".join(wrong)


def test_the_programs_taken_to_read_no_arguments_read_none() -> None:
    """doc_programs.py parses their commands with an empty parser: true only while they have none."""
    for module in progs.TAKE_NO_ARGUMENTS:
        tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        reads = [node.lineno for node in ast.walk(tree)  # the code's, not a child script's text
                 if isinstance(node, ast.Attribute) and node.attr == "argv" and isinstance(node.value, ast.Name)
                 and node.value.id == "sys"
                 or isinstance(node, (ast.Import, ast.ImportFrom)) and "argparse" in ast.dump(node)]
        assert reads == [], f"{module} reads arguments now (lines {reads}): take it out of TAKE_NO_ARGUMENTS"
