"""Servers connected only when the model looks for what they offer.

A server marked `"onDemand": true` in the config is not started by `refresh`.
Behind the meta-tools (meta_tools.py), a `search_tools` query that mentions
what such a server is for (its `description`, or its alias) attaches it first,
so its tools join the catalogue the search ranks; `release` lets go of every
server the run brought in, when the run is over.
"""

from __future__ import annotations

from typing import List

from ..jsonrpc import Json
from ..meta_tools import MetaTools, words
from .calling import ToolCalls
from .config import host_options


class OnDemandMetaTools(MetaTools):
    def __init__(self, tools: ToolCalls) -> None:
        super().__init__(tools)
        self.calls = tools
        self.attached: List[str] = []  # on-demand servers this run brought in

    async def search(self, query: str, limit: int = 5) -> Json:
        wanted = words(query)
        for spec in self.calls.config.servers:  # bring in on-demand servers the query is about
            options = host_options(spec)
            if options.on_demand and spec.alias not in self.calls.connections \
                    and wanted & (words(options.description) | {spec.alias.lower()}):
                if await self.calls.attach(spec.alias):
                    self.attached.append(spec.alias)
        return await super().search(query, limit)

    async def release(self) -> None:
        """Disconnect the on-demand servers this run brought in."""
        for alias in self.attached:
            await self.calls.detach(alias)
        self.attached = []
