"""How the runner writes to a terminal: colour only where it is wanted.

Policy, in order: `NO_COLOR` (non-empty) turns colour off; `FORCE_COLOR`
(non-empty, not "0") turns it on; otherwise colour follows whether the stream
is a terminal. Words (PASS, FAIL) carry the meaning; colour only decorates.
Live progress lines are drawn only on a terminal, with a carriage return and
no escape codes, so they survive NO_COLOR too.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, TextIO

CODES = {"green": "32", "red": "31", "yellow": "33", "dim": "2", "bold": "1", "cyan": "36"}


def colour_wanted(stream: TextIO, env: Optional[Mapping[str, str]] = None) -> bool:
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    force = env.get("FORCE_COLOR")
    if force and force != "0":
        return True
    return is_terminal(stream)


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Style:
    def __init__(self, stream: TextIO, env: Optional[Mapping[str, str]] = None) -> None:
        self.colour = colour_wanted(stream, env)
        self.live = is_terminal(stream)  # progress lines: terminals only

    def paint(self, text: str, *styles: str) -> str:
        if not self.colour or not styles:
            return text
        codes = ";".join(CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"
