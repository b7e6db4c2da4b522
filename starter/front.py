"""A front: the aggregator behind tools of another shape (the meta-tools of
E4, code mode's `run_script`). The agent loop sees a front exactly as it sees
the aggregator (agent.ToolProvider): the same offline table and connections,
its own tool table and calls."""

from __future__ import annotations

from typing import Any, Dict, Optional

from .aggregator import Aggregator
from .translate import ToolEntry


class Front:
    guidance = ""  # what the system prompt says about these tools; "" when their descriptions suffice

    def __init__(self, tools: Aggregator) -> None:
        self.tools = tools

    @property
    def offline(self) -> Dict[str, str]:
        return self.tools.offline

    @property
    def connections(self) -> Dict[str, Any]:
        return self.tools.connections

    def route(self, name: str, arguments: Any) -> Optional[ToolEntry]:
        """The table entry a call went to, if it went to one (None: it ran in the client)."""
        return None
