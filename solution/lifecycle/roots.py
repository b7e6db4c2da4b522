"""Roots: the directories a server may work in, as `file://` URIs.

The working directory by default, or each `--root DIR`. A URI is made from the
absolute path's bytes (`Path.as_uri`), so a space, `#`, `%`, `?` and every
non-ASCII letter are percent-encoded as UTF-8 and a server reads back exactly
the directory meant; a name that is not valid UTF-8 keeps its raw bytes.

Roots can change while servers are connected (`Aggregator.set_roots`, for a
library caller; the command line sets them once per run). A handshake-era
server is then told with `notifications/roots/list_changed`; 2026-07-28 removed
that notification, and its servers ask for roots inside each call (MRTR), so
they always get the current list.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, List, Tuple

from ..jsonrpc import Json


def file_uri(directory: "str | Path") -> str:
    """The `file://` URI of a directory, absolute, percent-encoded from its bytes."""
    return Path(os.path.abspath(directory)).as_uri()


def root_problem(directory: str) -> "str | None":
    """Why `directory` cannot be a root (one line), or None."""
    if not os.path.isdir(directory):
        return f"--root {directory}: not a directory"
    return None


class Roots:
    """The roots this client offers, in the order given, each once."""

    def __init__(self, directories: Iterable["str | Path"] = ()) -> None:
        self._roots: Tuple[Tuple[str, str], ...] = ()
        self.set(directories)

    def set(self, directories: Iterable["str | Path"]) -> bool:
        """Offer these instead; True when that changed the list."""
        found: List[Tuple[str, str]] = []
        for directory in directories:
            uri = file_uri(directory)
            if uri not in [u for u, _ in found]:
                found.append((uri, Path(os.path.abspath(directory)).name or "/"))
        changed = tuple(found) != self._roots
        self._roots = tuple(found)
        return changed

    @property
    def uris(self) -> List[str]:
        return [uri for uri, _ in self._roots]

    def result(self) -> Json:
        """The answer to `roots/list`."""
        return {"roots": [{"uri": uri, "name": name} for uri, name in self._roots]}
