"""Verdicts about the machine or the options, not the code: "not judged"
(exit 2), pointing at no file, never a FAIL with an edit: line."""

from __future__ import annotations

from checks.harness import run_items
from checks.items import EXTENSION_ITEMS, ITEMS
from checks.target import ROOT, load_target
from checks.tests.conftest import Variant


def test_a_limit_below_what_an_item_needs_is_not_judged_rather_than_failed() -> None:
    item = next(i for i in ITEMS if i.number == 8)
    verdict = run_items([item], load_target(str(ROOT / "solution")), limit=item.floor / 10)[0]
    assert verdict.status == "error" and verdict.where is None, verdict
    assert verdict.message.startswith(f"not judged: --limit {item.floor / 10:g} s is less than")
    assert f"--limit {item.floor:g} or more" in verdict.message and "edit:" not in verdict.message


def test_every_item_is_judged_under_the_default_limit() -> None:
    from checks.harness import ITEM_LIMIT
    assert all(item.floor <= ITEM_LIMIT / 2 for item in ITEMS + EXTENSION_ITEMS)


def test_code_mode_without_its_sandbox_is_not_judged_and_blames_no_file(variant: Variant) -> None:
    old = "def missing() -> Optional[str]:\n    \"\"\"None when the sandbox can run; otherwise how to make it so.\"\"\"\n"
    directory = variant("solution", edits={"code_mode/sandbox.py": (old, old + "    return \"the sandbox is not here\"\n")})
    item = next(i for i in EXTENSION_ITEMS if i.id.startswith("E8"))
    verdict = run_items([item], load_target(str(directory)))[0]
    assert verdict.status == "error" and verdict.where is None, verdict
    assert verdict.message == "not judged: code mode cannot run a script here: the sandbox is not here"
