"""A server's log messages (`notifications/message`): on stderr, for the person.

A line is shown when its level is at or above the run's threshold (`--log-level`),
with the server's alias, the level and the logger, every word of which is the
server's and so goes through `untrusted.shown` (one line, no terminal control,
no secret). Logs never reach stdout (that is the command's result) nor the
model's context (a server would have a channel into the conversation that no
tool result shows).

How a server is asked to log, only when the user gave `--log-level`: in the
handshake era `logging/setLevel` once after the handshake, to a server that
declares `logging`; in 2026-07-28 the envelope's `io.modelcontextprotocol/logLevel`
on each request after discovery (an opt-in any server may honour: the SDK's do
without declaring the deprecated capability). Without the option nothing is
asked, and what a handshake-era server sends anyway is shown from `warning` up.

A server that floods is cut off: after `MAX_LINES` lines one more says the rest
are not shown.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ..untrusted import json_text, shown

LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"  # in a 2026-07-28 request's _meta: opts it in to `notifications/message`
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DEFAULT_THRESHOLD = "warning"
MAX_LINES = 200  # per server and run
MAX_CHARS = 500  # of one message's data


def rank(level: Any) -> int:
    """A level's place in LEVELS; an unknown one counts as `info` (a server's word, not ours)."""
    return LEVELS.index(level) if level in LEVELS else LEVELS.index("info")


def log_line(alias: str, params: Any, threshold: str) -> Optional[str]:
    """The line to show for one notification, or None when it is below the threshold."""
    if not isinstance(params, dict):
        return None
    level = params.get("level")
    if rank(level) < rank(threshold):
        return None
    data = params.get("data")
    text = data if isinstance(data, str) else json_text(data)
    logger = params.get("logger")
    source = f" {shown(logger, 60)}" if isinstance(logger, str) and logger else ""
    named = shown(level, 20) if isinstance(level, str) else "?"
    return f"[{alias} log {named}{source}] {shown(text, MAX_CHARS)}\n"


class ServerLog:
    """Where every server's log lines go (`write`, stderr through the terminal), bounded per server."""

    def __init__(self, write: Callable[[str, str], None], threshold: str = DEFAULT_THRESHOLD,
                 requested: bool = False, limit: int = MAX_LINES) -> None:
        self.write = write  # (key, line): the terminal's `note`, so a line never lands in a prompt
        self.threshold = threshold
        self.requested = requested  # the user asked for a level: servers are told it
        self.limit = limit
        self.shown: Dict[str, int] = {}

    def __call__(self, alias: str, params: Any) -> None:
        line = log_line(alias, params, self.threshold)
        if line is None:
            return
        count = self.shown.get(alias, 0) + 1
        self.shown[alias] = count
        if count <= self.limit:
            self.write(f"log-{alias}-{count}", line)
        elif count == self.limit + 1:
            self.write(f"log-{alias}-{count}", f"[{alias} log] {self.limit} lines shown; the rest are not\n")
