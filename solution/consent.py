"""Consent: which calls run without asking, and a record of every call.

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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, Optional, Tuple

from .host import safe_files
from .errors import AuditFailed, ConfigError
from .redact import redacted
from .translate import ToolEntry
from .untrusted import json_text, loggable, shown, utf8

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
    # Missing annotations read as the cautious defaults (entry.annotations fills them),
    # and an untrusted server's claims count for nothing.
    return trusted and entry.annotations.get("readOnlyHint") is True
    # <<< extension E1


FINGERPRINTED = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def fingerprint(tool: Dict[str, Any]) -> str:
    """A short digest of what the user sees and approves of a tool."""
    seen = {key: tool.get(key) for key in FINGERPRINTED}
    return hashlib.sha256(utf8(json.dumps(seen, sort_keys=True, default=str))).hexdigest()[:16]


def what_changed(before: Dict[str, Any], after: Dict[str, Any]) -> Tuple[str, ...]:
    return tuple(key for key in FINGERPRINTED if before.get(key) != after.get(key))


@dataclass
class AuditLog:
    """Every call, as JSON lines: arguments, decision, outcome, duration, and the
    fingerprint of the tool definition the decision was about. One object per
    line whatever the arguments hold (U+2028 and lone surrogates are escaped)."""

    path: Optional[Path]

    def check_writable(self) -> None:
        """Raise ConfigError now, before any call is sent, if the log cannot be
        written: a link, a FIFO or a device is refused (safe_files), never followed."""
        if self.path is None:
            return
        try:
            safe_files.check(self.path)
            safe_files.append(self.path, b"")
        except OSError as exc:
            raise ConfigError(f"cannot write the audit log: {exc}") from None

    def record(self, **fields: Any) -> None:
        """One line per call; AuditFailed (one line, for the caller to end the run
        with) when the log cannot take it, a full disk say."""
        if self.path is None:
            return
        entry = loggable({"time": time.time(), **fields})
        line = redacted(json.dumps(entry, ensure_ascii=True, default=str, allow_nan=False)) + "\n"
        try:
            safe_files.append(self.path, line.encode("ascii"))
        except OSError as exc:
            raise AuditFailed(f"cannot write the audit log: {exc}") from None


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
