"""The audit log: every call, as JSON lines, whether it went out or not.

Each line holds the call's arguments, the decision (consent's, or why it was
not sent), the outcome, how long it took, and the fingerprint of the tool
definition the decision was about (consent.fingerprint), so a later reader
can tell which version of a tool a person approved. One object per line
whatever the arguments hold (U+2028 and lone surrogates are escaped), secrets
hidden. A log that cannot be written stops the run (`AuditFailed`), saying
whether the call went out.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..errors import ClientError, ConfigError
from ..untrusted import loggable, redacted
from . import safe_files


class AuditFailed(ClientError):
    """The audit log could not be written: the run stops, saying whether the call went out."""


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
