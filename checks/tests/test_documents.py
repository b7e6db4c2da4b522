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
which only a table of (document, statement, code) can hold. The reader,
checks/tests/documents.py, needs only the standard library, and each failure
names the document, the statement and what the code says instead.

The kinds of check:
- commands: each one (shell blocks, inline code, the autograding JSON) parsed
  by its program: `checks.cli.parse`, the clients' `cli_options.parse`, the
  servers' `parse_options`, and every other program's `main`, stopped at its
  own `parse_args`; an option named alone must be one some program takes;
- names: the environment variables a document sets or names are read by the
  code; the paths it names exist; the identifiers in its inline code exist in
  the code, and so do its error codes.
"""

from __future__ import annotations

import json
import re
from typing import List, Set

import pytest

from checks.target import ROOT
from checks.tests import documents as docs
from checks.tests.documents import DOCUMENTS, Scratch



# -- commands and names ----------------------------------------------------------------

@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Scratch:
    return Scratch(tmp_path_factory.mktemp("parse"))


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_command_in_the_document_is_one_its_program_accepts(doc: str, scratch: Scratch) -> None:
    found = docs.commands(doc)
    assert found, f"{doc}: no commands found (the reader is broken)"
    wrong = [f"{c.where}\n    {why}" for c in found for why in [docs.problem(c, scratch)] if why]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_option_the_document_names_alone_is_one_a_program_takes(doc: str, scratch: Scratch) -> None:
    wrong = [f"{s.doc}:{s.line}: `{s.text}`: {why}" for s in docs.options_in(doc)
             for why in [docs.fragment_problem(s, scratch)] if why]
    assert not wrong, "\n".join(wrong)


ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+|MOCK|QUESTION|HOME|PATH|TERM|USER|LANG|SHELL|LOGNAME|TMPDIR")
NOT_ENVIRONMENT = {"PR_SET_PDEATHSIG", "SO_PEERCRED"}  # the kernel's names, quoted as such


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_environment_variable_the_document_names_is_read_by_the_code(doc: str) -> None:
    named = {(s.line, m.group(0)) for s in docs.spans(doc) for m in [ENV_NAME.fullmatch(s.text.split("=")[0])]
             if m and m.group(0) not in NOT_ENVIRONMENT}
    wrong = [f"{doc}:{line}: no code reads {name}" for line, name in sorted(named) if not docs.read_by_the_code(name)]
    assert not wrong, "\n".join(wrong)


TOP = ("starter/", "solution/", "servers/", "checks/", "labs/", ".ci/")
MADE_AT_RUN_TIME = {".interop/", "report.json", ".mcp.json", "~/.cache/mcp-client-lab", ".github/workflows/",
                    ".github/classroom/autograding.json"}


def tracked() -> List[str]:
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
            and not {"__pycache__", "build", ".git", ".interop"} & set(p.relative_to(ROOT).parts)
            and ".egg-info" not in str(p)]


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


@pytest.fixture(scope="module")
def source() -> Set[str]:
    """Every word and error code in the lab's code, tests included."""
    text_ = "\n".join(p.read_text(encoding="utf-8") for package in docs.PACKAGES
                      for p in (ROOT / package).rglob("*.py") if p.name not in ("test_documents.py", "documents.py"))
    words = set(re.findall(r"-?\w+", text_))
    return words | {w.lstrip("-") for w in words}


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
