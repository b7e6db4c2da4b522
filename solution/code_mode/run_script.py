"""Code mode: the model writes one script instead of many tool calls.

The model gets a single tool, `run_script`, whose description carries the
typed stubs of every connected server (stubs.py). The script runs in the
sandbox (sandbox.py); each stub function it awaits becomes a call through
`ToolCalls.call`, the very path a direct call takes: the same consent
question, audit line, input validation and `outputSchema` check. A result
that is an error, or a call the user declined, raises RuntimeError inside
the script, so the script can catch it. Only what the script
prints goes back to the model: a whole ticket history can pass through the
script without one line of it entering the model's context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import anyio

from ..aggregator import NOT_SENT
from ..errors import error_result
from ..host.aggregator import Aggregator
from ..host.audit import AuditFailed
from ..jsonrpc import Json
from ..meta_tools import CONTEXT_WINDOW, Front, tool_share
from ..model import result_text
from ..stdio_client import ProgressHandler
from ..stubs import StubModule, stub_modules
from ..translate import ToolEntry
from .sandbox import HostModule, Limits, missing, run_in_sandbox

RUN_SCRIPT = "run_script"
# The stubs' share of the context window. Code mode is one tool whatever the
# servers offer, so this is a question of room, not of the meta-tools' cost
# threshold (meta_tools.TOOL_SHARE): it keeps the 2 % the table had.
STUB_SHARE = 0.02
SCRIPT_SCHEMA: Json = {"type": "object", "additionalProperties": False, "required": ["script"], "properties": {
    "script": {"type": "string", "description": "Python source; tools are awaited as functions of the modules "
                                                "listed in this tool's description; print what you want back"}}}
GUIDANCE = ("Code mode: you have one tool, run_script. Write one Python script that imports the tool "
            "functions it needs from the modules in the tool's description, awaits them (at the top level, "
            "no asyncio.run), does any filtering or counting itself, and prints only what you need to "
            "answer. Only the printed text comes back to you. A failing tool, or a call the user declines, "
            "raises RuntimeError; catch it if the script can go on without that call. "
            "The script is type-checked before it runs; if it is refused, fix what the message says.")


@dataclass
class ScriptCall:
    """One tool call a script made, as the transcript shows it."""

    alias: str
    original_name: str
    arguments: Json
    result: Json

    @property
    def is_error(self) -> bool:
        return bool(self.result.get("isError"))


@dataclass
class ScriptRun:
    """One run_script call: the script, every call it made, and what it printed."""

    script: str
    calls: List[ScriptCall] = field(default_factory=list)
    printed: str = ""
    printed_chars: int = 0  # all it printed; `printed` keeps only what can be shown
    stopped: Optional[str] = None  # see sandbox.Outcome
    reason: str = ""
    failure: Optional[AuditFailed] = None  # the audit log failed: the run ends, whatever the script does


def shortened(printed: str, limit: int, total: int) -> str:
    """The first `limit` characters of what was printed, and how much was cut."""
    if total <= limit and len(printed) <= limit:
        return printed
    return printed[:limit] + f"\n[... {max(total, len(printed)) - limit} more characters cut: print a summary instead]"


def script_result(run: ScriptRun, limits: Limits) -> Json:
    """What the model reads: the printed output, or why the script stopped."""
    printed = shortened(run.printed, limits.printed_chars, run.printed_chars)
    if run.stopped is None:
        return {"content": [{"type": "text", "text": printed or "(the script printed nothing)"}],
                "isError": False}
    where = {"type": "The script was refused before it ran (type check)",
             "syntax": "The script was refused before it ran (syntax)",
             "limit": "The script was stopped", "error": "The script raised", "crashed": "The script could not run"}
    text = f"{where.get(run.stopped, 'The script failed')}: {run.reason}"
    if run.calls:
        text += f"\nIt had made {len(run.calls)} tool call(s) by then."
    if printed:
        text += "\nPrinted before it stopped:\n" + printed
    return error_result(text)


class CodeMode(Front):
    """The aggregator behind one `run_script` tool. Same interface as the
    aggregator for the agent loop; `runs` keeps each script for the transcript."""

    guidance = GUIDANCE

    def __init__(self, tools: Aggregator, limits: Limits = Limits()) -> None:
        super().__init__(tools)
        self.calls = tools  # the reference's aggregator: its calls are audited, with who made them
        self.limits = limits
        self.runs: List[ScriptRun] = []
        self._one_at_a_time = anyio.Lock()

    def modules(self) -> List[StubModule]:
        """One stub module per connected server, in config order (offline servers have none)."""
        servers: Dict[str, List[Json]] = {spec.alias: [] for spec in self.tools.config.servers}
        for entry in self.tools.entries.values():
            servers.setdefault(entry.alias, []).append(entry.tool)
        return stub_modules({alias: tools for alias, tools in servers.items() if tools})

    def description(self) -> str:
        # The stubs take the tool table's place, so they keep to its share of the
        # context (MCP_LAB_TOOL_SHARE): modules past it are named, not shown.
        room = int(tool_share(default=STUB_SHARE) * CONTEXT_WINDOW * 4)  # about 4 characters a token
        parts = []
        for module in self.modules():
            text = f"# module {module.name} (server '{module.alias}')\n{module.source}"
            if len(text) > room:
                text = (f"# module {module.name} (server '{module.alias}'): {len(module.originals)} tools, not "
                        "shown: their stubs would pass the tools' share of the context\n")
            room -= len(text)
            parts.append(text)
        stubs = "\n".join(parts)
        return (f"Run one Python script in a sandbox (no files, network or processes). Await the tool "
                f"functions below; only printed output is returned. Limits: {self.limits.seconds:g} s of "
                f"running time, {self.limits.memory_bytes // (1024 * 1024)} MiB, {self.limits.calls} tool "
                f"calls, {self.limits.printed_chars} printed characters.\n\n{stubs}")

    def model_tools(self, api: str = "anthropic") -> List[Dict[str, Any]]:
        if api == "openai":
            return [{"type": "function", "function": {"name": RUN_SCRIPT, "description": self.description(),
                                                      "parameters": SCRIPT_SCHEMA}}]
        return [{"name": RUN_SCRIPT, "description": self.description(), "input_schema": SCRIPT_SCHEMA}]

    async def call(self, name: str, arguments: Any = None, *,
                   on_progress: Optional[ProgressHandler] = None) -> Json:
        script = arguments.get("script") if isinstance(arguments, dict) else None
        if name != RUN_SCRIPT or not isinstance(script, str):
            return error_result(f"Code mode has one tool, {RUN_SCRIPT}, which takes {{\"script\": \"...\"}}.")
        why = missing()
        if why is not None:
            return error_result(why)
        run = ScriptRun(script)
        self.runs.append(run)
        modules = {m.name: HostModule({function: self.host(run, m, function) for function in m.originals},
                                      m.source) for m in self.modules()}
        outcome = await run_in_sandbox(script, modules, self.limits)
        if run.failure is not None:
            raise run.failure
        run.printed, run.printed_chars = outcome.printed, outcome.printed_chars
        run.stopped, run.reason = outcome.stopped, outcome.reason
        return script_result(run, self.limits)

    def host(self, run: ScriptRun, module: StubModule, function: str) -> Callable[..., Any]:
        """The function a script awaits for one tool: a call through the client's own path."""
        alias, original = module.alias, module.originals[function]

        async def call(**keywords: Any) -> Any:
            # One call at a time, as the agent loop makes them: a script that
            # gathers calls must not put two consent questions on the terminal
            # at once, and the count of calls stays exact.
            async with self._one_at_a_time:
                if len(run.calls) >= self.limits.calls:
                    raise RuntimeError(f"this script has made its {self.limits.calls} tool calls; "
                                       "no more may go out")
                arguments = {k: v for k, v in keywords.items() if v is not None}  # None: left to the server
                entry = self.tools.find(alias, original)  # looked up now: the table may have changed
                if entry is None:
                    raise RuntimeError(f"{module.name}.{function}: the tool is no longer offered by '{alias}'")
                try:
                    result = await self.calls.call(entry.model_name, arguments, via=RUN_SCRIPT)
                except AuditFailed as exc:  # no `except` in the script may swallow this
                    run.failure = exc
                    raise RuntimeError("the client stopped: its audit log failed") from None
                run.calls.append(ScriptCall(alias, original, arguments, result))
            return returned(entry, module.name, function, result)
        return call


def returned(entry: ToolEntry, module: str, function: str, result: Json) -> Any:
    """What the awaited function gives the script: checked structured data when
    the tool declares an outputSchema, else its text. An error raises."""
    if result.get("isError"):
        held = (result.get("_meta") or {}).get(NOT_SENT)
        raise RuntimeError(f"{module}.{function}{' (not sent: ' + str(held) + ')' if held else ''}: "
                           f"{result_text(result)}")
    if entry.output_schema is not None:
        return result.get("structuredContent")
    return result_text(result)
