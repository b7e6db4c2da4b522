"""Consent: which calls run without asking.

Annotations are claims an untrusted server makes about its own tools, so they
shape *when to ask*, never *what is allowed*: read-only tools from servers the
user configured (and did not mark untrusted) run without asking; everything
else asks, showing where the call goes and with which arguments. Approvals can
cover one call or one tool for this session, and die with the session. An
approval covers the tool as the user saw it (a fingerprint of its name,
description, schemas and annotations): if the server changes the tool, the
next call asks again and says what changed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, Optional, Tuple

from .translate import ToolEntry
from .untrusted import json_text, shown, utf8

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
    changed: Tuple[str, ...] = ()  # what the server changed since the user approved this tool

    def describe(self) -> str:
        """The question, every server-chosen word made visible and none able to move the cursor.
        The alias is the user's own (from the config)."""
        trust = "" if self.trusted else " (server marked untrusted)"
        args = shown(json_text(self.arguments), 400)
        again = (f"\n  CHANGED since you allowed it for the session: {', '.join(self.changed)}"
                 if self.changed else "")
        return (f"{self.alias}{trust} wants to run {shown(self.original_name, 80)} "
                f"(titled {shown(self.title, 80)!s}) with {args}{again}")


Asker = Callable[[ConsentRequest], Awaitable[str]]


def runs_without_asking(entry: ToolEntry, trusted: bool) -> bool:
    """Whether a call may go out without asking anyone."""
    # >>> extension E1 (consent): annotations shape when to ask, never what is allowed
    # TODO extension E1: every call runs without asking. Let only read-only
    # tools (readOnlyHint true) from trusted servers through; everything else asks.
    # The clauses the checks hold it to: labs/GUIDE.md section 11.1.
    return True
    # <<< extension E1


FINGERPRINTED = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def fingerprint(tool: Dict[str, Any]) -> str:
    """A short digest of what the user sees and approves of a tool."""
    seen = {key: tool.get(key) for key in FINGERPRINTED}
    return hashlib.sha256(utf8(json.dumps(seen, sort_keys=True, default=str))).hexdigest()[:16]


def what_changed(before: Dict[str, Any], after: Dict[str, Any]) -> Tuple[str, ...]:
    return tuple(key for key in FINGERPRINTED if before.get(key) != after.get(key))


@dataclass
class Consent:
    ask: Asker
    trusted: Dict[str, bool] = field(default_factory=dict)  # alias -> trusted (default: yes)
    # (alias, tool) -> the tool definition the user approved for this session
    _approved: Dict[Tuple[str, str], Dict[str, Any]] = field(default_factory=dict)

    async def decide(self, entry: ToolEntry, arguments: Any) -> str:
        """'policy', 'session' (approved earlier, for this very definition), 'once' or 'no'."""
        trusted = self.trusted.get(entry.alias, True)
        if runs_without_asking(entry, trusted):
            return "policy"
        key = (entry.alias, entry.original_name)
        approved = self._approved.get(key)
        if approved is not None and fingerprint(approved) == fingerprint(entry.tool):
            return SESSION
        changed = what_changed(approved, entry.tool) if approved is not None else ()
        answer = await self.ask(ConsentRequest(entry.alias, entry.original_name, entry.title, arguments,
                                               entry.annotations, trusted, changed))
        if answer == SESSION:
            self._approved[key] = dict(entry.tool)
        else:
            self._approved.pop(key, None)  # a changed tool, declined or allowed once, asks next time
        return answer if answer in (ONCE, SESSION) else NO


def always(answer: str) -> Asker:
    """An asker for scripts: `--yes` (once) or `--no`."""
    async def ask(request: ConsentRequest) -> str:
        return answer
    return ask
