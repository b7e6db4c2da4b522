"""What the command line shows besides a run's transcript: the tool table (as a
table or JSON) and progress as one bar. Every server word goes through
`untrusted.shown`: plain text, never markup, never a terminal control.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Dict, TextIO

from ..host.aggregator import Aggregator
from ..untrusted import shown


class ProgressBar:
    """Progress as one bar: redrawn in place on a terminal at most `per_second`
    times a second, and in a pipe a line only when it has moved by a tenth;
    the server's message is shown with its control characters made visible."""

    def __init__(self, stream: TextIO = sys.stdout, per_second: float = 10.0) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.gap = 1.0 / per_second
        self.last_draw = float("-inf")
        self.last_tenth = -1

    def __call__(self, progress: float, total: "float | None", message: str) -> None:
        now = time.monotonic()
        tenth = int(10 * min(progress / total, 1.0)) if total else -1
        finished = bool(total) and progress >= (total or 0)
        if self.live and now - self.last_draw < self.gap and not finished:
            return
        if not self.live and tenth == self.last_tenth and not finished:
            return
        self.last_draw, self.last_tenth = now, tenth
        if total:
            done = int(20 * min(progress / total, 1.0))
            line = f"  progress [{'#' * done}{'.' * (20 - done)}] {progress:g}/{total:g} {shown(message, 60)}"
        else:
            line = f"  progress {progress:g} {shown(message, 60)}"
        if self.live:
            self.stream.write("\r" + line[:100].ljust(100) + ("\n" if finished else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def table_json(tools: Aggregator) -> Dict[str, Any]:
    return {
        "servers": {alias: {"era": c.info.era, "protocol_version": c.info.protocol_version,
                            "name": c.info.name, "version": c.info.version}
                    for alias, c in tools.connections.items()},
        "tools": [{"model_name": e.model_name, "alias": e.alias, "original_name": e.original_name,
                   "title": e.title, "annotations": e.annotations} for e in tools.entries.values()],
        "offline": tools.offline,
        "dropped": tools.dropped,
    }


def print_table(tools: Aggregator) -> None:
    from rich.console import Console
    from rich.table import Table

    from rich.text import Text

    def cell(value: Any) -> Text:  # server words: plain text (no markup), controls made visible
        return Text(shown(value))

    # In a pipe, lines may run long rather than cut an identifier in two (copy and paste them).
    console = Console() if sys.stdout.isatty() else Console(width=1000)
    servers = Table(title="Servers")
    for column in ("alias", "era", "protocol", "server says it is"):
        servers.add_column(column)
    for alias, c in tools.connections.items():
        servers.add_row(cell(alias), cell(c.info.era), cell(c.info.protocol_version),
                        cell(f"{c.info.name} {c.info.version}"))
    console.print(servers)
    table = Table(title="Tools the model sees")
    for column in ("model name", "alias", "original name"):
        table.add_column(column, no_wrap=True)  # identifiers: never cut mid-word
    table.add_column("title", overflow="fold")
    for e in tools.entries.values():
        table.add_row(cell(e.model_name), cell(e.alias), cell(e.original_name), cell(e.title))
    console.print(table)
    if tools.offline:
        offline = Table(title="Offline servers")
        offline.add_column("alias")
        offline.add_column("reason", overflow="fold")
        for alias, why in tools.offline.items():
            offline.add_row(cell(alias), cell(why))
        console.print(offline)
    for line in tools.dropped:
        console.print(Text(f"left out: {shown(line)}"))
