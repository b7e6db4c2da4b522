"""The aggregator's resources, prompts and server notices, beside its tool calls.

    await tools.listing("notes", "resources/list")   # every page, kept until the server says it changed
    await tools.read_resource("notes", "note://n-1")
    await tools.subscribe("notes", "note://n-1")      # updates go to on_resource_update
    await tools.get_prompt("notes", "summarise", {"topic": "paging"})
    await tools.complete_argument("notes", "summarise", "topic", "pa")

Lists are asked for when first wanted, not at start-up (a run that uses only
tools sends no more requests than before), and kept until a
`notifications/*/list_changed` from that server; a list already fetched is then
fetched again, coalesced as tool re-lists are (`Relists`, here for both), and
`on_list_change` hears of it.

`read_resource` is the model's tool for resource links (resource_links.py says
why): `call` routes it here, through consent and the audit log like any call.
Log messages go to `server_log` (server_log.py), never to the model.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..aggregator import Relists, not_sent
from ..config import Config
from ..errors import ClientError, error_result, reason
from ..host.calling import ToolCalls
from ..jsonrpc import Json
from ..resource_links import READ_RESOURCE, Offers
from ..stdio_client import CLOSE_GRACE, DEFAULT_TIMEOUT, ProgressHandler
from ..translate import ToolEntry
from ..untrusted import shown
from .read_resource import links_in, read_entry, read_result, read_tool
from .resources import complete, get_prompt, list_all, read, subscribe
from .server_log import ServerLog

Notice = Callable[[str, str], None]  # (alias, what: a list's method, or a resource's URI)
CHANGED = {"notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
           "notifications/prompts/list_changed": ("prompts/list",)}


class FeatureError(ClientError):
    """A resource or prompt request that cannot be made (no such server, not offered)."""


class Features(ToolCalls):
    def __init__(self, config: Config, *, request_timeout: float = DEFAULT_TIMEOUT,
                 discovery_timeout: Optional[float] = None, close_grace: float = CLOSE_GRACE) -> None:
        super().__init__(config, request_timeout=request_timeout, discovery_timeout=discovery_timeout,
                         close_grace=close_grace)
        self.offers = Offers()
        self.listed: Dict[Tuple[str, str], List[Json]] = {}  # (alias, method) -> the whole list
        self.server_log: Optional[ServerLog] = None
        self.on_resource_update: Optional[Notice] = None
        self.on_list_change: Optional[Notice] = None
        self.subscribed: Dict[str, List[str]] = {}  # alias -> URIs, in the order subscribed
        self._subscription_streams: Dict[str, str] = {}  # alias -> the listen stream carrying its subscriptions
        self._feature_relists = Relists()

    async def refresh(self) -> None:
        self.listed, self.subscribed = {}, {}  # the servers are started anew: nothing they said is kept
        await super().refresh()

    def model_tools(self, api: str = "anthropic") -> List[Dict[str, Any]]:
        return super().model_tools(api) + self.resource_tools(api)

    # -- notices from servers (must not block) -----------------------------------

    def server_notice(self, alias: str, method: str, params: Json) -> None:
        if method == "notifications/message":
            if self.server_log is not None:
                self.server_log(alias, params)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str) and self.on_resource_update is not None:
                self.on_resource_update(alias, uri)
        for listed in CHANGED.get(method, ()):
            if (alias, listed) in self.listed and self._task_group is not None:
                self._task_group.start_soon(self._relist_feature, alias, listed)

    async def _relist_feature(self, alias: str, method: str) -> None:
        """Fetch a changed list again; changes during that are one more fetch after it."""
        key = f"{alias}\0{method}"  # apart from the tools' re-lists, which are keyed by alias alone
        if not self._feature_relists.begin(key):
            return
        try:
            await self._fetch_again(alias, method)
            while self._feature_relists.again(key):
                await self._fetch_again(alias, method)
        finally:
            self._feature_relists.end(key)

    async def _fetch_again(self, alias: str, method: str) -> None:
        self.listed.pop((alias, method), None)
        try:
            await self.listing(alias, method)
        except Exception:  # noqa: BLE001 - the next use asks again, and says why then
            pass
        if self.on_list_change is not None:
            self.on_list_change(alias, method)

    # -- requests ------------------------------------------------------------------

    def offering(self, alias: str, capability: str) -> Any:
        """The connected server `alias`, when it declares `capability`; FeatureError otherwise."""
        connection = self.connections.get(alias)
        if connection is None:
            why = self.offline.get(alias)
            raise FeatureError(f"server '{alias}' is " + (f"offline: {why}" if why else "not in the config"))
        if capability not in connection.info.capabilities:
            raise FeatureError(f"server '{alias}' does not offer {capability}")
        return connection.client

    async def listing(self, alias: str, method: str) -> List[Json]:
        key = (alias, method)
        if key not in self.listed:
            client = self.offering(alias, method.split("/")[0])
            self.listed[key] = await list_all(client, method)
            if method == "resources/list":
                self.offers.offer(alias, [r["uri"] for r in self.listed[key]])
        return self.listed[key]

    async def read_resource(self, alias: str, uri: str) -> List[Json]:
        return await read(self.offering(alias, "resources"), uri)

    async def get_prompt(self, alias: str, name: str, arguments: Dict[str, str]) -> Json:
        return await get_prompt(self.offering(alias, "prompts"), name, arguments)

    async def complete_argument(self, alias: str, prompt: str, argument: str, value: str,
                                context: Optional[Dict[str, str]] = None) -> List[str]:
        """Values for a prompt's argument; [] when the server offers no completions."""
        connection = self.connections.get(alias)
        if connection is None or "completions" not in connection.info.capabilities:
            return []
        return await complete(connection.client, {"type": "ref/prompt", "name": prompt}, argument, value, context)

    async def subscribe(self, alias: str, uri: str) -> None:
        """Hear `notifications/resources/updated` for `uri` (on_resource_update)."""
        client = self.offering(alias, "resources")
        section = self.connections[alias].info.capabilities.get("resources")
        if not (isinstance(section, dict) and section.get("subscribe")):
            raise FeatureError(f"server '{alias}' does not offer resource subscriptions")
        uris = self.subscribed.setdefault(alias, [])
        if uri in uris:
            return
        if client.era == "legacy":
            await subscribe(client, uri)
            uris.append(uri)
            return
        uris.append(uri)  # one stream names them all; the one it replaces ends once it is open
        stream, old = await client.listen({"resourceSubscriptions": list(uris)}), self._subscription_streams.get(alias)
        self._subscription_streams[alias] = stream
        if old is not None:
            await client.unlisten(old)

    # -- the model's read_resource ---------------------------------------------------

    def resource_tools(self, api: str) -> List[Json]:
        """read_resource, once a server has offered something to read in this run (a link in
        a result, or a listing): before that the model knows no URI to ask for, and the
        tool would only cost every request its tokens. It then goes after the tools the
        model has seen, so the cached prefix of the table survives its arrival."""
        return [read_tool(api)] if len(self.offers) else []

    async def call(self, model_name: str, arguments: Any = None, *,
                   on_progress: Optional[ProgressHandler] = None, via: str = "model") -> Json:
        if model_name == READ_RESOURCE:
            return await self._read_for_model(arguments, via)
        entry = self.entries.get(model_name)
        result = await super().call(model_name, arguments, on_progress=on_progress, via=via)
        if entry is not None:
            self.offers.offer(entry.alias, links_in(result))
        return result

    def route(self, model_name: str, arguments: Any) -> Optional[ToolEntry]:
        if model_name == READ_RESOURCE and isinstance(arguments, dict):
            alias, _ = self.offers.resolve(arguments.get("uri"), arguments.get("server"))
            return read_entry(alias) if alias else None
        return super().route(model_name, arguments)

    async def _resolve(self, uri: Any, server: Any) -> Tuple[Optional[str], str]:
        """Which server to read from: offered in a result, else in a listing (fetched now, once)."""
        alias, why = self.offers.resolve(uri, server)
        if alias is None and isinstance(uri, str) and uri not in self.offers:
            for name, connection in list(self.connections.items()):
                if "resources" in connection.info.capabilities and (name, "resources/list") not in self.listed:
                    try:
                        await self.listing(name, "resources/list")
                    except Exception:  # noqa: BLE001 - a server that cannot list offers nothing
                        pass
            alias, why = self.offers.resolve(uri, server)
        return alias, why

    async def _read_for_model(self, arguments: Any, via: str) -> Json:
        began = time.perf_counter()
        given = arguments if isinstance(arguments, dict) else {}
        uri, server = given.get("uri"), given.get("server")
        alias, why = await self._resolve(uri, server)
        decision = "not sent"
        if alias is None:
            result = not_sent("unknown resource", why)
        else:
            entry = read_entry(alias)
            decision = await self.consent.decide(entry, {"uri": uri}) if self.consent else "no policy"
            if decision == "no":
                result = not_sent("declined", f"The user declined reading {shown(uri, 200)!r} from {alias}. "
                                              "Do not retry it; continue without it.")
            else:
                try:
                    result = read_result(alias, str(uri), await self.read_resource(alias, str(uri)))
                except Exception as exc:  # like any call: the model reads why
                    result = error_result(f"Reading {shown(uri, 200)!r} from {alias} failed: {reason(exc)}")
        self.audit.record(model_name=READ_RESOURCE, alias=alias, tool="resources/read", arguments=arguments,
                          decision=decision, outcome="error" if result.get("isError") else "ok",
                          duration_ms=round((time.perf_counter() - began) * 1000, 1), fingerprint=None, via=via)
        return result
