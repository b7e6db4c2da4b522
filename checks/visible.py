"""Text from code under test, made safe to show on a terminal.

Escape sequences, carriage returns and other control characters are shown as
`\\x1b`-style escapes instead of acting on the terminal, so nothing printed by
the learner's code (or a server) can move the cursor, clear the screen, set
the window title or pass for the runner's own lines.
"""

from __future__ import annotations

import re
from typing import List

# C0 controls but tab, DEL, C1 controls, bidirectional overrides, and the
# Unicode line and paragraph separators (which some terminals honour).
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` on one line, every control character shown as an escape."""
    return _UNSAFE.sub(lambda m: repr(m.group(0))[1:-1] if m.group(0) != "\n" else "\\n", text)


def visible_lines(text: str, limit: int = 20, width: int = 200) -> List[str]:
    """`text` split into at most `limit` safe lines of at most `width` characters."""
    lines = text.splitlines() or ([text] if text else [])
    shown = [visible(line)[:width] for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"... ({len(lines) - limit} more lines)")
    return shown
