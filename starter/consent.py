"""Consent: which calls run without asking, and a record of every call.

Annotations are claims an untrusted server makes about its own tools, so they
shape *when to ask*, never *what is allowed*: read-only tools from servers the
user configured (and did not mark untrusted) run without asking; everything
else asks, showing where the call goes and with which arguments. Approvals can
cover one call or one tool for this session, and die with the session.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, Optional, Set, Tuple

from .translate import ToolEntry

ONCE, SESSION, NO = "once", "session", "no"


@dataclass(frozen=True)
class ConsentRequest:
    """What the person deciding is shown."""

    alias: str
    original_name: str
    title: str
    arguments: Any
    annotations: Dict[str, Any]
    trusted: bool

    def describe(self) -> str:
        trust = "" if self.trusted else " (server marked untrusted)"
        args = json.dumps(self.arguments, ensure_ascii=False)
        return f"{self.alias}{trust} wants to run {self.original_name} ({self.title}) with {args}"


Asker = Callable[[ConsentRequest], Awaitable[str]]


def runs_without_asking(entry: ToolEntry, trusted: bool) -> bool:
    """Whether a call may go out without asking anyone."""
    # >>> extension E1 (consent): annotations shape when to ask, never what is allowed
    # TODO extension E1: every call runs without asking. Let only read-only
    # tools (readOnlyHint true) from trusted servers through; everything else asks.
    return True
    # <<< extension E1


@dataclass
class AuditLog:
    """Every call, as JSON lines: arguments, decision, outcome, duration."""

    path: Optional[Path]

    def record(self, **fields: Any) -> None:
        if self.path is None:
            return
        entry = {"time": time.time(), **fields}
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")


@dataclass
class Consent:
    ask: Asker
    trusted: Dict[str, bool] = field(default_factory=dict)  # alias -> trusted (default: yes)
    _approved: Set[Tuple[str, str]] = field(default_factory=set)  # (alias, tool) for this session

    async def decide(self, entry: ToolEntry, arguments: Any) -> str:
        """'policy', 'session' (approved earlier), 'once' or 'no'."""
        trusted = self.trusted.get(entry.alias, True)
        if runs_without_asking(entry, trusted):
            return "policy"
        key = (entry.alias, entry.original_name)
        if key in self._approved:
            return SESSION
        answer = await self.ask(ConsentRequest(entry.alias, entry.original_name, entry.title, arguments,
                                               entry.annotations, trusted))
        if answer == SESSION:
            self._approved.add(key)
        return answer if answer in (ONCE, SESSION) else NO


def always(answer: str) -> Asker:
    """An asker for scripts: `--yes` (once) or `--no`."""
    async def ask(request: ConsentRequest) -> str:
        return answer
    return ask
