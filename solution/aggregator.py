"""The aggregator: several servers behind one tool table for the model.

    async with Aggregator(config) as tools:
        await tools.refresh()             # discover every server, concurrently
        tools.model_tools()               # what the model sees
        await tools.call(name, arguments) # never raises

Prefixes come from the aliases in the config. The reverse table (`entries`)
maps each model-facing name to its server alias and original tool name; calls
go out under the original name. A server that fails discovery lands in the
`offline` table with its reason and the others carry on.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Dict, List, Optional, Type

import anyio
from anyio.abc import TaskGroup

from .config import Config, ServerSpec
from .host.breaker import Breaker
from .errors import ServerGone
from .lifecycle.features import Features, Relists
from .consent import AuditLog, Consent
from .host.connector import Connection, Connector
from .discovery import list_all_tools
from .errors import reason
from .naming import model_tool_name
from .elicitation import Elicitor
from .lifecycle.roots import Roots
from .lifecycle.sampling import Sampler
from .stdio_client import CLOSE_GRACE, DEFAULT_TIMEOUT, StdioClient
from .task_calls.task_runner import StatusHandler, TaskBook
from .remote.param_headers import header_problem
from .tasks import unusable
from .translate import ToolEntry, make_entry, to_anthropic_tool, to_openai_tool

DISCOVERY_TIMEOUT = 10.0  # the least a whole discovery may take; more when request timeouts are longer
DISCOVERY_REQUESTS = 3  # a discovery is about this many requests long (probe or handshake, pages, listen)


class Aggregator(Features):
    def __init__(self, config: Config, *, request_timeout: float = DEFAULT_TIMEOUT,
                 discovery_timeout: Optional[float] = None, close_grace: float = CLOSE_GRACE) -> None:
        self.config = config
        self.close_grace = close_grace
        self.request_timeout = request_timeout
        # Each server's discovery as a whole is bounded too; by default generously
        # enough that a server given a long timeout (a first `npx` download) gets it.
        longest = max([request_timeout, *(s.timeout for s in config.servers if s.timeout)])
        self.discovery_timeout = discovery_timeout if discovery_timeout is not None \
            else max(DISCOVERY_TIMEOUT, DISCOVERY_REQUESTS * longest)
        self.connector = Connector(self.list_changed, request_timeout=request_timeout, close_grace=close_grace)
        self.breaker = Breaker()
        self.retired: Dict[str, str] = {}  # model name -> alias, for the tools of a paused server
        self.pauses: Dict[str, str] = {}  # alias -> why it is paused
        self.connections: Dict[str, Connection] = {}
        self.offline: Dict[str, str] = {}  # alias -> why it is not available
        self.entries: Dict[str, ToolEntry] = {}  # model-facing name -> entry
        self.dropped: List[str] = []  # tools left out of the table, with why
        self.consent: Optional[Consent] = None  # None: every call goes out (library default)
        self.audit = AuditLog(None)
        self.task_book = TaskBook()  # a path makes it outlive the run (the CLI's resume)
        self.on_task_status: Optional[StatusHandler] = None
        self.version = 0  # goes up each time the table is rebuilt
        self._changed = anyio.Event()
        self._clients: List[StdioClient] = []
        self._task_group: Optional[TaskGroup] = None
        self._relists = Relists()
        self._start_features()
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
        """The roots offered to servers (roots.py); None: none, and the capability is not declared."""
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

    async def __aenter__(self) -> "Aggregator":
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> Optional[bool]:
        await self.aclose()  # ends every reader task, so the group below exits at once
        assert self._task_group is not None
        # The body's own exception is not handed to the task group: it would
        # come back wrapped in an ExceptionGroup. Returning None re-raises it as is.
        await self._task_group.__aexit__(None, None, None)
        return None

    async def aclose(self) -> None:
        """Close every server this aggregator started, all at once."""
        clients, self._clients = self._clients, []
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as group:
                for client in clients:
                    group.start_soon(client.aclose)
        self.connections = {}

    # -- discovery -------------------------------------------------------------

    async def connect(self, spec: ServerSpec) -> Connection:
        """Start one server, discover it and list all its tools."""
        if self._task_group is None:
            raise RuntimeError("use the Aggregator inside 'async with'")
        return await self.connector.connect(spec, self._task_group, self._clients)

    def eager_servers(self) -> List[ServerSpec]:
        """The servers refresh() starts: all but those marked on-demand."""
        return [spec for spec in self.config.servers if not spec.on_demand]

    def list_changed(self, alias: str) -> None:
        """A server said its tool list changed (a notification; must not block)."""
        # >>> extension E2 (list changes): re-list that server, rebuild the table
        if self._task_group is not None and alias in self.connections:
            self._task_group.start_soon(self._relist, alias)
        # <<< extension E2

    async def _relist(self, alias: str) -> None:
        """Re-list `alias`, coalesced: a change that comes while it runs is another re-list after."""
        if not self._relists.begin(alias):
            return
        try:
            await self._relist_once(alias)
            while self._relists.again(alias):
                await self._relist_once(alias)
        finally:
            self._relists.end(alias)

    async def _relist_once(self, alias: str) -> None:
        connection = self.connections.get(alias)
        if connection is None:
            return
        try:
            connection.tools = await list_all_tools(connection.client)
        except Exception as exc:  # the server broke while re-listing: it goes offline
            self.connections.pop(alias, None)
            self.offline[alias] = reason(exc)
        # Names are a pure function of (alias, tool name), so the tools that
        # remain keep their names; new ones get theirs the same way.
        self._rebuild(dict(self.connections), dict(self.offline))

    async def wait_for_change(self, since: int, timeout: float) -> bool:
        """Wait (bounded) until the table's version passes `since`."""
        with anyio.move_on_after(timeout):
            while self.version <= since:
                await self._changed.wait()
        return self.version > since

    async def attach(self, alias: str) -> bool:
        """Connect an on-demand server now; False (with a reason in offline) if it fails."""
        if alias in self.connections:
            return True
        spec = next((s for s in self.config.servers if s.alias == alias), None)
        if spec is None:
            return False
        try:
            with anyio.fail_after(self.discovery_timeout):
                self.connections[alias] = await self.connect(spec)
            self.offline.pop(alias, None)
        except Exception as exc:
            self.offline[alias] = reason(exc)
        self._rebuild(dict(self.connections), dict(self.offline))
        return alias in self.connections

    async def detach(self, alias: str) -> None:
        """Disconnect a server (an on-demand one that is no longer needed)."""
        connection = self.connections.pop(alias, None)
        if connection is not None:
            self._clients.remove(connection.client)
            await connection.client.aclose()
            self._rebuild(dict(self.connections), dict(self.offline))

    async def refresh(self) -> None:
        """(Re)discover every configured server and rebuild the tool table
        (paused servers too: a refresh is the user asking to try again)."""
        await self.aclose()
        self.listed, self.subscribed = {}, {}  # the servers are started anew: nothing they said is kept
        self.breaker.reset()
        self.retired, self.pauses = {}, {}
        found: Dict[str, Connection] = {}
        offline: Dict[str, str] = {}
        # >>> exercise 4 (item 8): one broken server must not sink the others
        async def connect_one(spec: ServerSpec) -> None:
            try:
                with anyio.fail_after(self.discovery_timeout):
                    found[spec.alias] = await self.connect(spec)
            except Exception as exc:  # any failure: record why, keep the rest
                offline[spec.alias] = reason(exc)

        async with anyio.create_task_group() as group:
            for spec in self.eager_servers():
                group.start_soon(connect_one, spec)
        # <<< exercise 4
        for alias, why in offline.items():
            if why == reason(TimeoutError()):  # the limit on the whole discovery: say which step
                offline[alias] = (f"discovery did not finish within {self.discovery_timeout:g} s (it was "
                                  f"waiting for {self.connector.steps.get(alias, 'the server')})")
        self._rebuild(found, offline)

    def _rebuild(self, found: Dict[str, Connection], offline: Dict[str, str]) -> None:
        entries: Dict[str, ToolEntry] = {}
        dropped: List[str] = []
        for spec in self.config.servers:  # config order decides who keeps a name
            connection = found.get(spec.alias)
            if connection is None:
                continue
            for tool in connection.tools:
                lost = unusable(tool, connection.info.era, connection.info.capabilities)
                if lost is None and spec.url is not None:  # over HTTP a tool's header marks must hold
                    lost = header_problem(tool)
                if lost is not None:  # offered to the model, it could only ever fail
                    dropped.append(f"{spec.alias}/{tool['name']}: {lost}")
                    continue
                name = model_tool_name(spec.alias, tool["name"])
                holder = entries.get(name)
                if holder is not None:
                    # Two tools, one model-facing name: a call could not know
                    # where to go, so the later one is left out, visibly.
                    dropped.append(f"{spec.alias}/{tool['name']}: model name {name!r} is already "
                                   f"taken by {holder.alias}/{holder.original_name}")
                    continue
                try:
                    entries[name] = make_entry(spec.alias, tool, name)
                except ValueError as exc:  # a schema no model API (or validator) could use
                    dropped.append(f"{spec.alias}/{tool['name']}: {exc}")
        # In the config's order, not the order discovery happened to finish in.
        self.connections = {spec.alias: found[spec.alias] for spec in self.config.servers if spec.alias in found}
        self.offline = {spec.alias: offline[spec.alias]
                        for spec in self.config.servers if spec.alias in offline}
        self.entries = entries
        self.dropped = dropped
        self.version += 1
        self._changed.set()
        self._changed = anyio.Event()

    # -- the table -------------------------------------------------------------

    def model_tools(self, api: str = "anthropic") -> List[Dict[str, Any]]:
        """The tool table in a model API's shape ("anthropic" or "openai")."""
        convert = to_openai_tool if api == "openai" else to_anthropic_tool
        return [convert(entry) for entry in self.entries.values()] + self.resource_tools(api)

    def find(self, alias: str, original_name: str) -> Optional[ToolEntry]:
        """The entry for a server's tool, looked up by where it comes from."""
        for entry in self.entries.values():
            if entry.alias == alias and entry.original_name == original_name:
                return entry
        return None
