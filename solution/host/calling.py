"""The reference client's tool calls, over the core aggregator's.

    result = await tools.call(model_name, arguments)   # never raises

Beyond the core's checks (unknown name, offline server, arguments that fail
the schema, consent): a tool may have a timeout of its own (`toolTimeouts`
in the config: a thirty-second report and a cache lookup should not share
one); a call may become a task, followed to its end (task_calls/); every
call, allowed or not, goes to the audit log (audit.py). Timeouts and lost
servers are counted per server; after `Breaker.threshold` in a row the server
is paused (offline, with the time it will be tried again) so the model stops
paying a timeout on every turn; the first call after the pause reconnects it.
A server lost under a task whose one reconnect failed is paused the same way,
and so is one whose reconnect after a pause fails. Servers marked on-demand
are attached when first needed (`attach`) and let go after (`detach`).
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Tuple

import anyio

from ..aggregator import Aggregator, Connection, not_sent
from ..config import Config, ServerSpec
from ..consent import fingerprint
from ..errors import RequestTimeout, ServerGone, error_result, reason
from ..jsonrpc import Json
from ..stdio_client import CLOSE_GRACE, DEFAULT_TIMEOUT, ProgressHandler
from ..task_calls.task_runner import StatusHandler, TaskBook, TaskPlan, TaskRecord, TaskServer, run_task
from ..task_calls.tool_call import call_with_tasks
from ..tasks import TaskState
from ..translate import ToolEntry
from ..untrusted import shown
from .audit import AuditFailed, AuditLog
from .breaker import Breaker
from .config import host_options
from .server_client import ServerClient

COSTLY = (RequestTimeout, ServerGone)  # failures that cost a timeout or leave the server unusable


class ToolCalls(Aggregator):
    def __init__(self, config: Config, *, request_timeout: float = DEFAULT_TIMEOUT,
                 discovery_timeout: Optional[float] = None, close_grace: float = CLOSE_GRACE) -> None:
        super().__init__(config, request_timeout=request_timeout, discovery_timeout=discovery_timeout,
                         close_grace=close_grace)
        self.breaker = Breaker()
        self.retired: Dict[str, str] = {}  # model name -> alias, for the tools of a paused server
        self.pauses: Dict[str, str] = {}  # alias -> why it is paused (for the refusals meanwhile)
        self.audit = AuditLog(None)
        self.task_book = TaskBook()  # tasks not finished yet, for a resume after a reconnect (a path keeps it)
        self.on_task_status: Optional[StatusHandler] = None  # where a task's status lines go (the CLI shows them)

    async def refresh(self) -> None:
        """(Re)discover every configured server (paused servers too: a refresh is the
        user asking to try again)."""
        self.breaker.reset()
        self.retired, self.pauses = {}, {}
        await super().refresh()

    def eager_servers(self) -> List[ServerSpec]:
        """The servers refresh() starts: all but those marked on-demand."""
        return [spec for spec in self.config.servers if not host_options(spec).on_demand]

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

    async def call(self, model_name: str, arguments: Any = None, *,
                   on_progress: Optional[ProgressHandler] = None, via: str = "model") -> Json:
        """Call a tool by its model-facing name. Never raises: every failure
        comes back as an `isError` result whose text the model can act on.
        Every call, allowed or not, goes to the audit log, with `via`: who
        made it ("model", "cli", or "run_script" for a code-mode script)."""
        began = time.perf_counter()
        decision = "no policy"
        entry = self.entries.get(model_name)
        try:
            decision, result = await self._call(model_name, {} if arguments is None else arguments, on_progress)
        except Exception as exc:
            result = error_result(f"Calling {model_name} failed: {reason(exc)}")
            if entry is not None and isinstance(exc, COSTLY) and self.breaker.failed(entry.alias):
                await self._pause(entry.alias, reason(exc))
        else:
            if entry is not None and decision != "not sent":
                self.breaker.succeeded(entry.alias)
        entry = entry or self.entries.get(model_name)
        try:
            self.audit.record(model_name=model_name, alias=entry.alias if entry else None,
                              tool=entry.original_name if entry else None, arguments=arguments, decision=decision,
                              outcome="error" if result.get("isError") else "ok",
                              duration_ms=round((time.perf_counter() - began) * 1000, 1),
                              fingerprint=fingerprint(entry.tool) if entry else None, via=via)
        except AuditFailed as exc:
            went = "was not sent" if decision in ("not sent", "no") else "went out to the server"
            raise AuditFailed(f"{exc}; the call to {shown(model_name, 80)} {went}") from None
        return result

    async def _call(self, model_name: str, arguments: Any,
                    on_progress: Optional[ProgressHandler]) -> Tuple[str, Json]:
        """A paused server's tool, once its pause is over, reconnects it first."""
        entry = self.entries.get(model_name)
        if entry is None and model_name in self.retired:
            alias = self.retired[model_name]
            left = self.breaker.paused_for(alias)
            if left is not None:
                return "not sent", not_sent("server paused", (
                    f"Server '{alias}' is paused {self.pauses.get(alias, '')}; "
                    f"it will be tried again in {left:.0f} s. Continue without it for now."))
            names = [name for name, holder in self.retired.items() if holder == alias]
            if not await self.attach(alias):  # the pause is over: reconnect, then call as usual
                self._retire(alias, names, f"after its reconnect failed ({self.offline[alias]})")
        return await super()._call(model_name, arguments, on_progress)

    async def send_call(self, connection: Connection, entry: ToolEntry, arguments: Any,
                        on_progress: Optional[ProgressHandler]) -> Json:
        spec = host_options(connection.client.spec)
        plan = TaskPlan(limit=spec.tool_timeouts.get(entry.original_name, spec.task_timeout),
                        server_capabilities=connection.info.capabilities, prefer=spec.prefer_tasks,
                        on_status=self.on_task_status, book=self.task_book,
                        reconnect=lambda: self._reconnect(entry.alias))
        return await call_with_tasks(connection.client, entry, arguments, on_progress=on_progress,
                                     timeout=spec.tool_timeouts.get(entry.original_name), tasks=plan)

    async def resume_task(self, record: TaskRecord) -> Json:
        """Ask about a task an earlier call left unfinished; its result, or why none."""
        connection = self.connections.get(record.alias)
        if connection is None:
            return not_sent("server offline", f"Server '{record.alias}' is offline; task {record.task_id} "
                                              "cannot be asked about now.")
        if connection.info.era != record.era:
            self.task_book.done(record.task_id)
            return error_result(f"Server '{record.alias}' now speaks another protocol era; "
                                f"task {record.task_id} cannot be followed there.")
        client = connection.client
        if not isinstance(client, ServerClient):
            return error_result(f"Server '{record.alias}' cannot follow tasks here.")
        plan = TaskPlan(limit=host_options(client.spec).task_timeout, on_status=self.on_task_status, book=self.task_book)
        return await run_task(client, TaskState(record.task_id, "working"), record.tool, plan)

    async def _reconnect(self, alias: str) -> Optional[TaskServer]:
        """The server went away while a task ran: start it again (once) so the
        task can be asked about; None if it does not come back, and then it is
        paused as the breaker pauses it, to be tried again after the cool-down."""
        names = self._names_of(alias)
        await self.detach(alias)
        if not await self.attach(alias):
            self._retire(alias, names, f"after it was lost under a task and could not be reconnected "
                                       f"({self.offline[alias]})")
            return None
        client = self.connections[alias].client
        return client if isinstance(client, ServerClient) else None

    async def _pause(self, alias: str, why: str) -> None:
        """Take a failing server out of the table until its cool-down is over."""
        names = self._names_of(alias)
        await self.detach(alias)
        self._retire(alias, names, f"after failing {self.breaker.threshold} times in a row (last: {why})")

    def _names_of(self, alias: str) -> List[str]:
        return [name for name, entry in self.entries.items() if entry.alias == alias]

    def _retire(self, alias: str, names: List[str], why: str) -> None:
        """Out of the table for the breaker's cool-down: its tools' names are kept, so
        the first call to one after the pause reconnects the server (`_call`)."""
        self.breaker.pause(alias)
        self.retired.update({name: alias for name in names})
        self.pauses[alias] = why
        retry = time.strftime("%H:%M:%S", time.localtime(time.time() + self.breaker.cool_down))
        self.offline[alias] = f"paused {why}; it will be tried again from {retry}"
