"""Right answers written another way stay green: a learner's correct region body
that differs from the reference's (each one a body a newcomer wrote from the
guide and the hints, and the checks once judged red) holds its region's
contract. The other half of "green means right": red only for wrong code."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import List

import anyio
import pytest

from checks.contracts import hold
from checks.dev.mutants.regions import REGIONS
from checks.harness import run_items
from checks.items import EXTENSION_ITEMS, ITEMS, label
from checks.target import ROOT, load_target


@dataclass(frozen=True)
class RightAnswer:
    name: str  # what the learner wrote differently, in a few words (its items and contract stay green)
    region: str
    old: str  # in the reference's region
    new: str


RIGHT_ANSWERS: List[RightAnswer] = [
    RightAnswer("the first page asked for with no params at all (None, as hint 3 reads: no cursor)", "2",
                "        params: Json = {} if cursor is None else {\"cursor\": cursor}\n"
                "        page = await server.request(\"tools/list\", params)\n",
                "        page = await server.request(\"tools/list\", None if cursor is None else {\"cursor\": cursor})\n"),
    RightAnswer("progress and total handed on as the server sent them (3, not 3.0: the same number)", "E3",
                "        handler(float(progress), float(total) if is_number(total) else None,\n",
                "        handler(progress, total if is_number(total) else None,\n"),
    RightAnswer("a description that is not a string read as none, not as its str()", "E7",
                "    made = FormField(name, \"\", str(schema.get(\"title\") or name), str(schema.get(\"description\") or \"\"),\n",
                "    text = schema.get(\"description\")\n"
                "    made = FormField(name, \"\", str(schema.get(\"title\") or name), text if isinstance(text, str) else \"\",\n"),
    # Round 6: the server's words in a failed task's text, as the clause allows them.
    RightAnswer("the code and the message each cut on its own (a 601-digit code leaves the message named)", "E6",
                "        why = f\"error {error.code}: {error.message}\" if error else (state.message or \"no reason given\")\n"
                "        return error_result(f\"The task failed on the server ({shown(why, REASON_CHARS)}).\")\n",
                "        why = f\"error {shown(error.code, REASON_CHARS)}: {shown(error.message, REASON_CHARS)}\" if error \\\n"
                "            else shown(state.message or \"no reason given\", REASON_CHARS)\n"
                "        return error_result(f\"The task failed on the server ({why}).\")\n"),
    RightAnswer("the task id named, through shown(text, ID_CHARS) as the TODO says", "E6",
                "        return error_result(f\"The task failed on the server ({shown(why, REASON_CHARS)}).\")\n",
                "        return error_result(f\"Task {shown(state.task_id, ID_CHARS)} failed on the server \"\n"
                "                            f\"({shown(why, REASON_CHARS)}).\")\n"),
    RightAnswer("an error object without a message named with its statusMessage beside the code", "E6",
                "        why = f\"error {error.code}: {error.message}\" if error else (state.message or \"no reason given\")\n",
                "        said = state.error.get(\"message\") if error and isinstance(state.error.get(\"message\"), str) \\\n"
                "            else state.message\n"
                "        why = f\"error {error.code}: {said}\" if error else (state.message or \"no reason given\")\n"),
]


@pytest.mark.parametrize("answer", RIGHT_ANSWERS, ids=lambda a: f"{a.region}: {a.name}")
def test_a_right_answer_written_another_way_holds_its_regions_contract(tmp_path: Path, answer: RightAnswer) -> None:
    package = tmp_path / "right"
    shutil.copytree(ROOT / "solution", package, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    source = package / REGIONS[answer.region].file
    text = source.read_text(encoding="utf-8")
    assert text.count(answer.old) == 1, f"{answer.name}: not once in {source.name}"
    source.write_text(text.replace(answer.old, answer.new), encoding="utf-8")
    target = load_target(str(package))
    assert "clauses held over" in anyio.run(hold, target, answer.region)
    owned = [item for item in ITEMS + EXTENSION_ITEMS if label(item.number) in REGIONS[answer.region].items]
    verdicts = run_items(owned, target)
    assert [v.status for v in verdicts] == ["pass"] * len(owned), [v.message for v in verdicts]
