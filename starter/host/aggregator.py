"""The reference client's aggregator: the core's, with every layer plugged in.

    async with Aggregator(load_host_config(path)) as tools:
        tools.elicitor = terminal_forms        # who answers servers' questions (before refresh)
        await tools.refresh()
        await tools.call(name, arguments)      # never raises; audited; may become a task

The core aggregator (aggregator.py) is the day's: discovery, the offline table,
names, calls that never raise. Built on it, in order: calls (calling.py:
per-tool timeouts, tasks, the breaker, on-demand servers, the audit log), then
the lifecycle's features (lifecycle/features.py: resources, prompts, logs,
read_resource), and here what connects a server (connector.py: remote servers
over HTTP, eras remembered and pinned, cached lists, questions answered, logs
asked for) and which tools can never be called and so are not offered.
"""

from __future__ import annotations

from typing import List, Optional

from ..aggregator import Connection
from ..config import Config, ServerSpec
from ..elicitation import Elicitor
from ..errors import ServerGone
from ..jsonrpc import Json
from ..lifecycle.features import Features
from ..lifecycle.roots import Roots
from ..remote.param_headers import header_problem
from ..sampler import Sampler
from ..stdio_client import CLOSE_GRACE, DEFAULT_TIMEOUT
from ..task_calls.support import unusable
from .config import host_options
from .connector import Connector
from .patterns import BoundedToolEntry


class Aggregator(Features):
    entry_kind = BoundedToolEntry  # a server's schema costs a bounded check, whatever it holds

    def __init__(self, config: Config, *, request_timeout: float = DEFAULT_TIMEOUT,
                 discovery_timeout: Optional[float] = None, close_grace: float = CLOSE_GRACE) -> None:
        super().__init__(config, request_timeout=request_timeout, discovery_timeout=discovery_timeout,
                         close_grace=close_grace)
        self.connector = Connector(self.list_changed, request_timeout=request_timeout, close_grace=close_grace)
        self.connector.steps = self.steps  # one account of what each discovery is waiting for
        self.connector.on_notice = self.server_notice

    @property
    def elicitor(self) -> Optional[Elicitor]:
        """Who answers servers' questions. Set it before `refresh`: the
        capability is declared when a server is connected, and only if set."""
        return self.connector.elicitor

    @elicitor.setter
    def elicitor(self, value: Optional[Elicitor]) -> None:
        self.connector.elicitor = value

    @property
    def sampler(self) -> Optional[Sampler]:
        """Who answers servers' sampling requests (sampler.py); set before `refresh`, like the elicitor."""
        return self.connector.sampler

    @sampler.setter
    def sampler(self, value: Optional[Sampler]) -> None:
        self.connector.sampler = value

    @property
    def roots(self) -> Optional[Roots]:
        """The roots offered to servers (lifecycle/roots.py); None: none, and the capability is not declared."""
        return self.connector.roots

    @roots.setter
    def roots(self, value: Optional[Roots]) -> None:
        self.connector.roots = value

    async def set_roots(self, directories: List[str]) -> None:
        """Offer other roots while connected: a handshake-era server is told (2026-07-28
        servers ask within each call, so they always get the current list)."""
        if self.roots is None or not self.roots.set(directories):
            return
        for connection in list(self.connections.values()):
            if connection.info.era == "legacy":
                try:
                    await connection.client.notify("notifications/roots/list_changed")
                except ServerGone:
                    pass  # it is gone; its next connection gets the new list

    async def connect(self, spec: ServerSpec) -> Connection:
        """Start one server, discover it and list all its tools (connector.py)."""
        if self._task_group is None:
            raise RuntimeError("use the Aggregator inside 'async with'")
        return await self.connector.connect(spec, self._task_group, self._clients)

    def unusable(self, spec: ServerSpec, connection: Connection, tool: Json) -> Optional[str]:
        """A task-only tool the era cannot run, or over HTTP a tool whose header marks break the rules."""
        lost = unusable(tool, connection.info.era, connection.info.capabilities)
        if lost is None and host_options(spec).url is not None:
            lost = header_problem(tool)
        return lost
