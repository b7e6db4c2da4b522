"""What the runner holds for one item beside its worker's word, in grading
mode (checks.grading): the servers' accounts (checks/accounts.py) and what the
item's region did on its contract's inputs, and how a verdict is weighed
against them. A pass stands only when both show what it rests on."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

from checks.accounts import Accounts, proven
from checks.contracts import compared, in_full
from checks.fixtures import Journal
from checks.harness import Fail, Item, Verdict, Where
from checks.outcome import Outcome
from checks.trace import trace_lines, wire_events


class Evidence:
    """What the runner holds for one item beside its worker's word: the servers'
    accounts, and the region's observations to compare with the reference's."""

    def __init__(self, accounts: Accounts, item: Item, region: Optional[str], shown: Path) -> None:
        self.accounts, self.item, self.region, self.shown = accounts, item, region, shown

    @property
    def received(self) -> int:
        return self.accounts.received

    def watch(self, selector: Any, tag: object) -> None:
        self.accounts.watch(selector, tag)

    def ready(self, fd: int) -> None:
        self.accounts.ready(fd)

    def pids(self) -> List[int]:
        return self.accounts.pids()

    def problems(self) -> List[str]:
        return [f"a process that is not one of the item's fixture servers tried to send the runner a server's "
                f"account: {why}" for why in self.accounts.refused]

    def close(self) -> None:
        self.accounts.close()

    def display(self, file: str) -> str:
        return str(self.shown / file)

    def weigh(self, verdict: Verdict, outcome: Outcome) -> None:
        """The verdict as the evidence has it: its wire from the servers'
        accounts; a pass only when they show what it rests on, no impostor spoke,
        and the region does on every recorded input what the reference did."""
        self.accounts.drain()
        held = self.accounts.journals_of(verdict.number)
        journals: List[Journal] = list(held)
        verdict.wire = wire_events(journals)
        verdict.trace = trace_lines(journals, events=verdict.wire)
        proven(verdict, held)
        if verdict.status == "pass" and self.accounts.refused:
            uncounted(verdict, "a process that is no fixture server sent the runner an account during this item")
        if verdict.status != "pass" or self.region is None:
            return
        seen = outcome.observed.get(self.region)
        if not in_full(self.region, seen) or not isinstance(seen, dict):
            uncounted(verdict, f"what region {self.region} did on the contract's inputs did not reach the runner "
                               "whole")
            return
        try:
            said = compared(self.region, seen, self.display)
        except Fail as failed:
            exercise = self.item.exercise
            verdict.status, verdict.message = "fail", str(failed)
            verdict.where = Where(self.display(self.item.where_file), self.item.where_function,
                                  exercise.number if exercise else None)
            return
        verdict.message = f"{verdict.message}; {said}"


def uncounted(verdict: Verdict, why: str) -> None:
    """A pass that does not count: ERROR, saying why."""
    verdict.status, verdict.message = "error", f"not counted: {why}"

