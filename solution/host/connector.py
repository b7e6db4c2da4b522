"""Starting one server and learning what it offers, the way real servers need it.

- The era is remembered per server for the session, or pinned in the config
  (`"protocolVersion": "2025-11-25"` or `"2026-07-28"`), so a server is probed
  at most once.
- A server that exits while it is being probed (Python SDK servers up to
  mcp 1.8.1 reject the unknown `server/discover` and quit) is started again
  and spoken to with the handshake first.
- Each server's current step is kept, so a discovery that runs out of time
  can say what it was waiting for.
- A `tools/list` page still fresh by its `ttlMs` is reused when the same server
  is connected again in this process (list_cache.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, List, Optional

from anyio.abc import TaskGroup

from ..aggregator import Connection, listen_for_changes
from ..config import ServerSpec
from ..discovery import LEGACY_VERSION, PROTOCOL_VERSION, ServerInfo, discover, handshake, list_all_tools
from ..elicitation import Elicitor
from ..errors import ClientError, ServerGone
from ..jsonrpc import Json
from ..lifecycle.roots import Roots
from ..sampler import Sampler
from ..stdio_client import CLOSE_GRACE, DEFAULT_TIMEOUT, StdioClient
from .config import host_options
from .list_cache import CachedLister, Key, ListCache, list_key
from .server_client import ServerClient

if TYPE_CHECKING:  # a config without remote servers never loads the OAuth parts either
    from ..remote.oauth import OAuthSettings

ERAS = {PROTOCOL_VERSION: "current", LEGACY_VERSION: "legacy"}
NOTICES = ("notifications/message", "notifications/resources/list_changed", "notifications/resources/updated",
           "notifications/prompts/list_changed")


def client_for(spec: ServerSpec, *, request_timeout: float, close_grace: float,
               oauth: "Optional[OAuthSettings]" = None) -> ServerClient:
    """The client for a server's transport: a process over stdio, or a URL over HTTP
    (signing in as `oauth` allows, when the server asks)."""
    if host_options(spec).url is not None:
        from ..remote.http_client import HttpClient  # only a config with remote servers loads h11
        return HttpClient(spec, request_timeout=request_timeout, close_grace=close_grace, oauth=oauth)
    return ServerClient(spec, request_timeout=request_timeout, close_grace=close_grace)


class Connector:
    def __init__(self, on_list_changed: Callable[[str], None], *, request_timeout: float = DEFAULT_TIMEOUT,
                 close_grace: float = CLOSE_GRACE) -> None:
        self.on_list_changed = on_list_changed
        self.request_timeout = request_timeout
        self.close_grace = close_grace
        self.eras: Dict[str, str] = {}  # alias -> the era it answered in, this session
        self.steps: Dict[str, str] = {}  # alias -> what its discovery is doing (or last did)
        self.elicitor: Optional[Elicitor] = None  # given to every client made from here on
        self.lists = ListCache()  # tools/list pages still fresh (ttlMs), for the next connect
        self.oauth: "Optional[OAuthSettings]" = None  # how remote servers may be signed in to (None: never)
        self.sampler: Optional[Sampler] = None  # given to every client made from here on, like the elicitor
        self.roots: Optional[Roots] = None
        self.log_level: Optional[str] = None  # asked of servers that declare logging (None: nothing asked)
        self.on_notice: Optional[Callable[[str, str, Json], None]] = None  # logs, resource changes

    async def connect(self, spec: ServerSpec, task_group: TaskGroup, clients: List[StdioClient]) -> Connection:
        """Start one server, discover it and list all its tools. Every client
        made is appended to `clients`, so whoever owns that list can end it."""
        era = ERAS.get(host_options(spec).protocol_version or "") or self.eras.get(spec.alias)
        try:
            return await self._attempt(spec, task_group, clients, era)
        except ServerGone:
            if era is not None or self.steps.get(spec.alias) != "server/discover":
                raise
        # It died on the probe: an older server that cannot bear an unknown method.
        return await self._attempt(spec, task_group, clients, "legacy")

    async def _attempt(self, spec: ServerSpec, task_group: TaskGroup, clients: List[StdioClient],
                       era: Optional[str]) -> Connection:
        timeout = spec.timeout or self.request_timeout  # a server's own timeout wins
        client = client_for(spec, request_timeout=timeout, close_grace=self.close_grace, oauth=self.oauth)
        client.elicitor, client.sampler, client.roots = self.elicitor, self.sampler, self.roots
        clients.append(client)  # from here on, its owner's close will end it
        alias = spec.alias
        try:
            self.steps[alias] = "the process to start"
            await client.start(task_group)
            if era == "legacy":
                self.steps[alias] = "initialize"
                info = await handshake(client)
            else:
                self.steps[alias] = "server/discover"
                info = await discover(client, fallback=era is None)
            self.eras[alias] = info.era
            for method in NOTICES:  # whatever the era, they arrive as notifications
                client.notification_handlers[method] = self._noticer(alias, method)
            await self._ask_for_logs(client, info)
            # Changes are announced unsolicited in the handshake era, on a
            # listen stream in the current one; both land in on_list_changed.
            key = list_key(spec, self.elicitor is not None)
            client.notification_handlers["notifications/tools/list_changed"] = \
                lambda params: self._list_changed(alias, key)
            self.steps[alias] = "tools/list"
            tools = await list_all_tools(CachedLister(client, self.lists, key))
            await listen_for_changes(client, info, self.steps)
        except BaseException:
            await client.aclose()
            raise
        return Connection(alias, client, info, tools)

    async def _ask_for_logs(self, client: ServerClient, info: ServerInfo) -> None:
        """The user's --log-level: in 2026-07-28 on every request (an opt-in any server may
        honour; the SDK's servers do without declaring `logging`, which is deprecated), in
        the handshake era once by `logging/setLevel`, to a server that declares logging."""
        if self.log_level is None:
            return
        if info.era == "current":
            client.log_level = self.log_level
            return
        if "logging" not in info.capabilities:
            return
        self.steps[client.alias] = "logging/setLevel"
        try:
            await client.request("logging/setLevel", {"level": self.log_level})
        except ClientError:
            pass  # a server that will not set its level still works, and logs as it will

    def _noticer(self, alias: str, method: str) -> Callable[[Json], None]:
        def notice(params: Json) -> None:
            if self.on_notice is not None:
                self.on_notice(alias, method, params)
        return notice

    def _list_changed(self, alias: str, key: Key) -> None:
        self.lists.drop(key)  # before anyone lists again
        self.on_list_changed(alias)
