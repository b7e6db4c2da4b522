"""Whole lines out of a stream read in chunks: the runner's reading of the
worker's events and of the servers' accounts."""

from __future__ import annotations

from typing import List


class Lines:
    """Whole lines out of the chunks a pipe delivers, in linear time: only the
    new chunk is searched for a line's end, and a line is joined once, when it
    ends. A line longer than `cap` is dropped (and counted), never held whole."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.dropped = 0
        self._parts: List[bytes] = []
        self.held = 0  # bytes of the unfinished line kept so far
        self._dropping = False  # the unfinished line is over the cap

    def feed(self, data: bytes) -> List[bytes]:
        lines: List[bytes] = []
        start = 0
        end = data.find(b"\n")
        while end >= 0:
            self._keep(data[start:end])
            if self._dropping:
                self.dropped += 1
            else:
                lines.append(b"".join(self._parts))
            self._parts, self.held, self._dropping = [], 0, False
            start, end = end + 1, data.find(b"\n", end + 1)
        self._keep(data[start:])
        return lines

    def _keep(self, piece: bytes) -> None:
        if self._dropping or not piece:
            return
        if self.held + len(piece) > self.cap:
            self._parts, self.held, self._dropping = [], 0, True
        else:
            self._parts.append(piece)
            self.held += len(piece)
