"""The fixtures the documents' tests share, a session's each (conftest.py
imports them): a directory to parse commands in, the words of the code, the
numbers' claims, and the documented runs (doc_runs.py).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Set, Tuple

import pytest

from checks.target import ROOT
from checks.tests import documents as docs
from checks.tests.doc_programs import Scratch

from checks.tests.doc_claims import learner_claims
from checks.tests.doc_claims_reference import reference_claims
from checks.tests.doc_runs import shared_runs


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Scratch:
    return Scratch(tmp_path_factory.mktemp("parse"))


@pytest.fixture(scope="session")
def source() -> Set[str]:
    """Every word and error code in the lab's code, tests included."""
    text_ = "\n".join(p.read_text(encoding="utf-8") for package in docs.PACKAGES
                      for p in (ROOT / package).rglob("*.py") if not docs.of_the_collector(p.name))
    words = set(re.findall(r"-?\w+", text_))
    return words | {w.lstrip("-") for w in words}


@pytest.fixture(scope="session")
def all_claims() -> List[Tuple[Any, ...]]:
    return learner_claims() + reference_claims()


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Dict[str, Any]:
    return shared_runs(tmp_path_factory, request)
