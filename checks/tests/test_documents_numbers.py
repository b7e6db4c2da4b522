"""Every number that describes the code is the code's: each statement of
doc_claims*.py found in its document, its numbers those the code gives.
"""

from __future__ import annotations

import re
from typing import Any, List, Sequence, Tuple

import pytest

from checks.tests.documents import DOCUMENTS, folded


def claim_problems(doc: str, text_: str, claims_: Sequence[Tuple[Any, ...]]) -> List[str]:
    """What the document says that the code does not (each statement of CLAIMS)."""
    wrong = []
    for where, pattern, value, *optional in claims_:
        if where != doc:
            continue
        found = list(re.finditer(pattern, text_, re.I))
        if not found and not optional:
            wrong.append(f"{doc}: no longer says anything like {pattern!r} (reworded? reword its claim too)")
        want = value()
        want = tuple(want) if isinstance(want, tuple) else (want,)
        for match in found:
            said = tuple(x for x in match.groups() if x is not None)
            if [s.lower() for s in said] != [str(w).lower() for w in want]:
                wrong.append(f"{doc}: \"{match.group(0)}\": the code says {', '.join(map(str, want))}")
    return wrong


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_number_the_document_states_is_the_one_the_code_has(doc: str, all_claims: List[Tuple[Any, ...]]) -> None:
    wrong = claim_problems(doc, folded(doc), all_claims)
    assert not wrong, "\n".join(wrong)
