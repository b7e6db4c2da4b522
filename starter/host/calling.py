"""The calling half of the aggregator: one tool call by its model-facing name.

    result = await tools.call(model_name, arguments)   # never raises

Every failure becomes an `isError` result the model can read: an unknown
name, an offline or paused server, arguments that fail the schema, a declined
consent, a timeout, a server that went away. A tool may have a timeout of its
own (`toolTimeouts` in the config: a thirty-second report and a cache lookup
should not share one). Timeouts and lost servers are counted per server; after
`Breaker.threshold` in a row the server is paused (offline, with the time it
will be tried again) so the model stops paying a timeout on every turn; the
first call after the pause reconnects it. A server lost under a task whose one
reconnect failed is paused the same way, and so is one whose reconnect after
a pause fails.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional

from .breaker import Breaker
from ..config import Config
from .connector import Connection
from ..consent import AuditLog, Consent, fingerprint
from ..errors import AuditFailed, RequestTimeout, ServerGone
from ..errors import error_result, reason
from ..jsonrpc import Json
from ..stdio_client import ProgressHandler, StdioClient
from ..task_calls.task_runner import StatusHandler, TaskBook, TaskPlan, TaskRecord, run_task
from ..tasks import TaskState
from ..tool_calls import call_tool
from ..translate import ToolEntry, argument_errors
from ..untrusted import not_json, shown

COSTLY = (RequestTimeout, ServerGone)  # failures that cost a timeout or leave the server unusable
NOT_SENT = "io.mcp-client-lab/notSent"  # in a result's _meta: why the call never left the client


def not_sent(why: str, text: str) -> Json:
    """An isError result for a call that never reached a server, saying why (for transcripts)."""
    result = error_result(text)
    result["_meta"] = {NOT_SENT: why}
    return result


class ToolCalls:
    # Provided by the Aggregator.
    config: Config
    connections: Dict[str, Connection]
    offline: Dict[str, str]
    entries: Dict[str, ToolEntry]
    consent: Optional[Consent]
    audit: AuditLog
    breaker: Breaker
    retired: Dict[str, str]
    pauses: Dict[str, str]  # alias -> why it is paused, to follow "paused" (for the refusals meanwhile)
    task_book: TaskBook  # tasks not finished yet, for a resume after a reconnect
    on_task_status: Optional[StatusHandler]  # where a task's status lines go (the CLI shows them)
    guidance = ""  # the plain table needs no explaining (agent.ToolProvider)

    async def attach(self, alias: str) -> bool:
        raise NotImplementedError  # the Aggregator's: connect a server now

    async def detach(self, alias: str) -> None:
        raise NotImplementedError  # the Aggregator's: disconnect a server

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
                    on_progress: Optional[ProgressHandler]) -> "tuple[str, Json]":
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
            entry = self.entries.get(model_name)
        if entry is None:
            return "not sent", not_sent("unknown tool", self._unknown(model_name))
        connection = self.connections.get(entry.alias)
        if connection is None:
            return "not sent", not_sent("server offline",
                                        f"Server '{entry.alias}' is offline; {model_name} cannot be called now.")
        odd = not_json(arguments)
        if odd is not None:  # Python would send NaN, which is not JSON: refused here, on every path
            return "not sent", not_sent("not JSON", (
                f"The arguments for {model_name} hold a value JSON cannot carry ({shown(odd, 80)}): "
                "NaN and Infinity are not JSON numbers. Nothing was sent."))
        problem = argument_errors(entry, arguments)
        if problem is not None:
            return "not sent", not_sent("invalid arguments", (
                f"Invalid arguments for {model_name}: {problem}. "
                "Nothing was sent to the server; fix the arguments and try again."))
        decision = await self.consent.decide(entry, arguments) if self.consent else "no policy"
        if decision == "no":
            return decision, not_sent("declined", (
                f"The user declined this call ({entry.alias} / {entry.original_name}). "
                "Do not retry it; ask the user or continue without it."))
        spec = connection.client.spec
        plan = TaskPlan(limit=spec.tool_timeouts.get(entry.original_name, spec.task_timeout),
                        server_capabilities=connection.info.capabilities, prefer=spec.prefer_tasks,
                        on_status=self.on_task_status, book=self.task_book,
                        reconnect=lambda: self._reconnect(entry.alias))
        return decision, await call_tool(connection.client, entry, arguments, on_progress=on_progress,
                                         progress_resets_timeout=spec.progress_resets_timeout,
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
        plan = TaskPlan(limit=client.spec.task_timeout, on_status=self.on_task_status, book=self.task_book)
        return await run_task(client, TaskState(record.task_id, "working"), record.tool, plan)

    async def _reconnect(self, alias: str) -> Optional[StdioClient]:
        """The server went away while a task ran: start it again (once) so the
        task can be asked about; None if it does not come back, and then it is
        paused as the breaker pauses it, to be tried again after the cool-down."""
        names = self._names_of(alias)
        await self.detach(alias)
        if not await self.attach(alias):
            self._retire(alias, names, f"after it was lost under a task and could not be reconnected "
                                       f"({self.offline[alias]})")
            return None
        return self.connections[alias].client

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

    def route(self, model_name: str, arguments: Any) -> Optional[ToolEntry]:
        """The entry a call went to (for transcripts); None if it went nowhere."""
        return self.entries.get(model_name)

    def _unknown(self, model_name: str) -> str:
        for alias, why in self.offline.items():
            # Only to word the message; routing never parses names.
            if model_name.startswith(f"mcp__{alias}__"):
                return f"Server '{alias}' is offline ({why}); {model_name} cannot be called now."
        return f"Unknown tool {model_name!r}. Use one of the tools in the tool table."
