"""Log messages a fixture sends its client (`notifications/message`), filtered by level.

The client chooses what it wants, differently in each era:

- 2025-11-25: `logging/setLevel {level}` once per session; from then on every
  message at or above that level goes out. Before it, none does: the spec lets
  a server choose, and a fixture that stays quiet makes "the level was honoured"
  something a check can see.
- 2026-07-28: per request, `_meta["io.modelcontextprotocol/logLevel"]`; the
  messages a request causes go out before its reply, and only for that request.

Either way the threshold is the one in force for the request being handled,
kept per thread: every request is answered on a thread of its own.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from servers.rpc import INVALID_PARAMS, Json, RpcError

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")  # RFC 5424, least first
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"


def checked_level(level: Any) -> str:
    if level not in LEVELS:
        raise RpcError(INVALID_PARAMS, f"Invalid params: level must be one of {', '.join(LEVELS)}, got {level!r}")
    return str(level)


def allows(threshold: Optional[str], level: str) -> bool:
    """Whether a message at `level` passes a client's `threshold` (None: nothing passes)."""
    return threshold is not None and LEVELS.index(level) >= LEVELS.index(threshold)


class LogGate:
    """The threshold for the request this thread is answering, and where messages go."""

    def __init__(self, logger: str) -> None:
        self.logger = logger
        self._local = threading.local()
        self.send: Callable[[Json], None] = lambda message: None  # set by the shell
        self.record: Callable[..., None] = lambda kind, **fields: None  # the journal, set by the shell

    def set(self, threshold: Optional[str]) -> None:
        self._local.threshold = threshold

    def threshold(self) -> Optional[str]:
        return getattr(self._local, "threshold", None)

    def log(self, level: str, data: Any) -> bool:
        """Send one message if the threshold lets it through; journal it either way."""
        passed = allows(self.threshold(), level)
        self.record("log", level=level, sent=passed, data=data)
        if passed:
            self.send({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": level, "logger": self.logger, "data": data}})
        return passed
