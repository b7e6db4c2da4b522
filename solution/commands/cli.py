"""Command line: `tools`, `call`, `stubs`, `script`, `tasks` and `ask` against a servers config.

    python -m solution tools [--config FILE] [--json]
    python -m solution call mcp__notes__read_note '{"id": "n-2"}'
    python -m solution tasks        # results of tasks an interrupted run left behind
    python -m solution stubs        # the tool table as typed Python stubs (code mode)
    python -m solution script FILE  # run a script against those stubs in the sandbox
    python -m solution ask "What do my notes say about timeouts?"
    python -m solution ask --code-mode "..."   # one script in the sandbox (codemode extra)
    python -m solution login docs   # sign in to a remote server (OAuth); `logout docs` forgets it
    QUESTION="..." python -m solution

Exit codes: 0 done, 1 the tool call or question failed, 2 bad input (config,
arguments) or no server could be reached.

Over 300 lines because each command's few lines of wiring (consent, forms,
tasks file, audit, printing) read best beside the others; its options live in
cli_options.py and what it prints in transcript.py.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Dict, List, Optional

import anyio

from ..agent import ToolProvider, run_agent
from ..code_mode.mock_code import CodeModeMock
from ..code_mode.run_script import RUN_SCRIPT, CodeMode
from ..code_mode.sandbox import missing as sandbox_missing
from ..config import Config
from ..consent import NO, ONCE, SESSION, Consent, ConsentRequest, always
from ..errors import ConfigError, ModelApiError
from ..host.aggregator import Aggregator
from ..host.audit import AuditFailed, AuditLog
from ..host.config import load_host_config
from ..host.on_demand import OnDemandMetaTools
from ..host.process import guard_process_tree
from ..meta_tools import too_many
from ..mock_model import MockModel
from ..model import result_text
from ..model_apis import choose_model
from ..stubs import stub_modules
from ..task_calls.task_runner import TaskBook
from .features import FEATURE_COMMANDS, LISTINGS, feature_command, serve_servers
from .login import oauth_settings, sign_in_command
from .needed import servers_needed
from .options import DEFAULT_CONFIG, parse
from .prompts import TaskLines, terminal_elicitor
from .terminal import Terminal
from .transcript import print_run, run_json, script_json, script_lines
from .views import ProgressBar, print_table, table_json
from ..untrusted import indented, json_text, shown


def default_config() -> Path:
    here = Path.cwd() / DEFAULT_CONFIG
    return here if here.exists() else Path(__file__).resolve().parents[2] / DEFAULT_CONFIG


def asker(options: argparse.Namespace, terminal: Terminal) -> "Any":
    """Who answers consent questions: --yes, --no, or the person at the terminal."""
    if options.yes:
        return always(ONCE)
    stdin = sys.stdin  # None when the process was started with stdin closed
    if options.no or stdin is None or not stdin.isatty():
        if not options.no:
            print("note: no terminal to ask for consent, so calls that need it are declined "
                  "(--yes allows them)", file=sys.stderr)
        return always(NO)

    async def ask(request: ConsentRequest) -> str:
        # describe() shows every server-chosen word with its control characters
        # made visible, so nothing the server sent can redraw this question.
        question = f"{request.describe()}\nAllow? [y] once, [s] this tool for the session, [N] no: "
        async with terminal.turn(f"consent for {request.alias}"):  # no form can take this answer
            answer = (await terminal.read(question)).strip().lower()
        return {"y": ONCE, "yes": ONCE, "s": SESSION}.get(answer, NO)
    return ask


class Stop:
    """Where SIGTERM and SIGHUP land. While a command works they cancel that work and
    only it, as Ctrl-C does: its servers stay connected until it has ended, so what it
    sends on the way out (a task's `tasks/cancel`) still has a transport to go by and
    to bring the answer back (over HTTP each request is a task of the client's own
    group; over stdio the reader is). Outside the work they end the whole run."""

    def __init__(self, everything: anyio.CancelScope) -> None:
        self.everything = everything
        self.signals: List[int] = []
        self._work: Optional[anyio.CancelScope] = None

    def __call__(self, number: int) -> None:
        self.signals.append(number)
        (self._work or self.everything).cancel()

    @asynccontextmanager
    async def work(self) -> AsyncIterator[None]:
        """The command's own work, inside the servers' lifetime (a signal ends it quietly)."""
        self._work = anyio.CancelScope()
        try:
            with self._work:
                yield
        finally:
            self._work = None


async def execute(options: argparse.Namespace, config: Config) -> int:
    """Run the command; SIGTERM and SIGHUP end it as Ctrl-C does: every server
    closed on the way out, then exit status 128 + the signal's number."""
    status = 130
    async with anyio.create_task_group() as group:
        stop = Stop(group.cancel_scope)

        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                async for number in signals:
                    stop(int(number))
                    return
        if hasattr(signal, "SIGHUP"):
            group.start_soon(on_signal)
        try:
            status = await command(options, config, stop)
        except (BrokenPipeError, SystemExit):  # the reader went away (`| head`): nothing more to say
            quiet_stdout()
            status = 1
        except Exception as exc:  # noqa: BLE001 - only the audit log's failure is ours to word
            failed = leaf_of(exc, AuditFailed)
            if failed is None:
                raise
            print(f"error: {failed}", file=sys.stderr)  # one line, however deep it was raised
            status = 2
        group.cancel_scope.cancel()
    if stop.signals:
        print(f"stopped by {signal.Signals(stop.signals[0]).name}; every server was closed", file=sys.stderr)
        return 128 + stop.signals[0]
    return status


def leaf_of(exc: BaseException, kind: type) -> Optional[BaseException]:
    """The first exception of `kind` in `exc` or the groups it holds."""
    if isinstance(exc, kind):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = leaf_of(inner, kind)
        if found is not None:
            return found
    return None


def quiet_stdout() -> None:
    """Point stdout at nothing, so the final flush of a closed pipe raises nothing."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


async def command(options: argparse.Namespace, config: Config, stop: Stop) -> int:
    if options.command in ("login", "logout"):
        return await sign_in_command(options, config)
    listing = options.command in LISTINGS  # nothing is called: no audit, no consent
    audit = AuditLog(Path(options.audit) if options.audit and not listing else None)
    try:
        audit.check_writable()  # before any server starts, so no call goes out unrecorded
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # `call` and `script` start only the servers they use (the name, the imports).
    config = servers_needed(config, options.command, getattr(options, "name", ""), getattr(options, "source", ""))
    async with Aggregator(config, request_timeout=options.timeout) as tools, stop.work():
        tools.connector.oauth = oauth_settings(options)  # renewals only: a person signs in with `login`
        terminal = Terminal()  # consent questions and servers' forms take turns on it
        calls = options.command in ("call", "ask", "script", "prompt")  # `tasks` only asks about old ones
        tools.consent = Consent(asker(options, terminal), {spec.alias: spec.trusted for spec in config.servers}) \
            if calls else None
        tools.audit = audit
        # Questions from servers: a form at the terminal, or (no terminal) nothing
        # declared, so a well-behaved server does without asking. `tools` declares
        # the same as `call` and `ask`: a server may offer some tools only to a
        # client that can answer its questions, and the table must show them.
        tools.elicitor = terminal_elicitor(terminal)
        chosen = choose_model()  # the agent's model, which also answers servers' sampling requests
        serve_servers(tools, options, terminal, chosen[0])
        if not listing:
            try:
                tools.task_book = TaskBook(options.tasks_file or None)
            except OSError as exc:  # a planted link or FIFO: refused before anything is called
                print(f"error: cannot use the tasks file: {exc}", file=sys.stderr)
                return 2
            tools.on_task_status = TaskLines(terminal)  # never into an open prompt
        await tools.refresh()
        if not tools.connections:
            print("error: no server could be reached: " + "; ".join(
                f"{a}: {shown(r, 300)}" for a, r in tools.offline.items()), file=sys.stderr)
            return 2
        if options.command == "stubs":
            print_stubs(tools)
            return 0
        if options.command == "script":
            return await run_script_file(tools, options.source, options.json)
        if options.command == "tools":
            if options.json:
                print(json_text(table_json(tools), indent=2))
            else:
                print_table(tools)
            return 0
        if options.command == "tasks":
            return await resume_tasks(tools, options.json)
        if options.command == "call":
            # Progress as `ask` shows it, on stderr: stdout is the result's alone.
            result = await tools.call(options.name, options.arguments, via="cli",
                                      on_progress=None if options.json else ProgressBar(sys.stderr))
            print(json_text(result, indent=2) if options.json else indented(result_text(result)))
            return 1 if result.get("isError") else 0
        if options.command in FEATURE_COMMANDS:
            return await feature_command(tools, options, lambda question: answer(tools, options, question, chosen))
        return await answer(tools, options, options.question, chosen)
    return 1  # a signal ended the work (execute() gives the status)


async def answer(tools: Aggregator, options: argparse.Namespace, question: str, chosen: "tuple[Any, str]") -> int:
    """The agent loop on one question (`ask`, or a server's prompt), then its transcript."""
    model, note = chosen
    provider: ToolProvider = tools
    if options.code_mode:  # one script instead of many calls
        if no_sandbox():
            return 2
        provider = CodeMode(tools)
        if isinstance(model, MockModel):  # the mock writes its script from the stubs, as a model would
            model = CodeModeMock()
        note += "; code mode: the model writes one script for run_script"
    elif too_many(tools):  # the whole table would crowd the context: the meta-tools instead
        provider = OnDemandMetaTools(tools)
        offered = [tool["name"] for tool in provider.model_tools()]
        note += f"; {len(tools.entries)} tools, so the model gets {', '.join(offered[:-1])} and {offered[-1]}"
    try:
        run = await run_agent(question, provider, model, max_steps=options.max_steps,
                              on_progress=None if options.json else ProgressBar())
    except ModelApiError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if isinstance(provider, OnDemandMetaTools):
            await provider.release()
    scripts = provider.runs if isinstance(provider, CodeMode) else []
    if options.json:
        print(json_text(run_json(run, note, scripts), indent=2))
    else:
        print_run(run, note, scripts)
    return 1 if run.stopped_at_limit else 0


def print_stubs(tools: Aggregator) -> None:
    """Code mode's view of the table: one typed stub module per connected server."""
    servers: Dict[str, List[Any]] = {}
    for entry in tools.entries.values():
        servers.setdefault(entry.alias, []).append(entry.tool)
    for module in stub_modules(servers):
        print(f"# ---- {module.name}.pyi (server '{module.alias}') ----")
        print(module.source)


def no_sandbox() -> bool:
    """True (with the one-line reason on stderr) when code mode cannot run here."""
    why = sandbox_missing()
    if why is not None:
        print(f"error: {why}", file=sys.stderr)
    return why is not None


async def run_script_file(tools: Aggregator, source: str, as_json: bool) -> int:
    """`script FILE`: one script, run as the model's would be; its calls and printout shown."""
    if no_sandbox():
        return 2
    code = CodeMode(tools)
    result = await code.call(RUN_SCRIPT, {"script": source})
    if as_json:
        print(json_text({"result": result, "script": script_json(code.runs[-1])}, indent=2))
    else:
        for line in script_lines(code.runs[-1], whole=True):
            print(line)
        if result.get("isError"):
            print(indented(result_text(result)))
    return 1 if result.get("isError") else 0


async def resume_tasks(tools: Aggregator, as_json: bool) -> int:
    """Ask again about the tasks an earlier run left unfinished (Ctrl-C, a lost server)."""
    records = list(tools.task_book.open.values())
    if not records:
        print("no unfinished tasks")
        return 0
    failed = False
    results = []
    for record in records:
        result = await tools.resume_task(record)
        failed = failed or bool(result.get("isError"))
        results.append({"server": record.alias, "tool": record.tool, "task": record.task_id, "result": result})
        if not as_json:
            print(f"{record.alias}/{shown(record.tool, 60)} task {shown(record.task_id, 40)}:")
            print(indented(result_text(result)))
    if as_json:
        print(json_text(results, indent=2))
    return 1 if failed else 0


def main(argv: Optional[List[str]] = None) -> int:
    options = parse(sys.argv[1:] if argv is None else argv, f"python -m {__package__.split('.')[0]}")
    try:
        config = load_host_config(options.config or default_config())
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    watchdog = guard_process_tree()  # servers' whole process trees die with this process
    try:
        return anyio.run(execute, options, config)
    except KeyboardInterrupt:
        print("stopped (Ctrl-C); every server was closed", file=sys.stderr)
        return 130
    finally:
        watchdog.stop()
