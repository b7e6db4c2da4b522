"""A circuit breaker per server: stop paying a timeout on every turn.

After `threshold` consecutive failures of the kind that cost time or mean the
server is unusable (a timeout, the server gone), the server is paused for
`cool_down` seconds; calls during the pause fail at once with a result that
says when it will be tried again. Any success resets the count. The clock is
injected, so the rules are tested without waiting.
"""

from __future__ import annotations

import time
from typing import Callable, Dict, Optional

THRESHOLD = 3  # consecutive failures that open the breaker
COOL_DOWN = 30.0  # seconds a paused server is left alone


class Breaker:
    def __init__(self, threshold: int = THRESHOLD, cool_down: float = COOL_DOWN,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.threshold = threshold
        self.cool_down = cool_down
        self.clock = clock
        self._failures: Dict[str, int] = {}
        self._until: Dict[str, float] = {}

    def succeeded(self, alias: str) -> None:
        self._failures.pop(alias, None)

    def failed(self, alias: str) -> bool:
        """Count a failure; True when this one opened the breaker."""
        count = self._failures.get(alias, 0) + 1
        if count < self.threshold:
            self._failures[alias] = count
            return False
        self.pause(alias)
        return True

    def pause(self, alias: str) -> None:
        """Open the breaker now, for the cool-down (a server lost beyond a reconnect)."""
        self._failures.pop(alias, None)
        self._until[alias] = self.clock() + self.cool_down

    def paused_for(self, alias: str) -> Optional[float]:
        """Seconds of the pause still to run, or None when the server may be tried."""
        until = self._until.get(alias)
        if until is None:
            return None
        left = until - self.clock()
        if left > 0:
            return left
        del self._until[alias]  # the pause is over: the next call reconnects
        return None

    def reset(self) -> None:
        self._failures.clear()
        self._until.clear()
