"""The documented commands that can run here, run as written, once a session,
all at the same time, and what the bench's counted rows count meanwhile.

Every command of the lab's client (`python -m solution|starter ...`) and of its
fixture servers (`python servers/notes.py ...`, `python -m servers.notes`) that a
document shows runs here, against the fixtures, in each of its readings that
holds no placeholder: each in a directory of its own (its audit log and tasks
file go there, its tokens file too), in a reader's environment (no model API,
so the mock answers). What it needs to do what its comment says is set up
around it, never in it: `watch` gets a notes server over HTTP and another
client's three edits; `script my_script.py` the script the document shows; a
fixture told `--http 8765` a free port instead, and it is stopped once it says
it is ready. A command whose comment says it needs an API key, a browser or a
remote server (doc_commands.needs) is parsed only (test_documents.py).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import anyio
import pytest

from checks.target import ROOT
from checks.tests import doc_commands as cmds
from checks.tests import documents as docs
from checks.tests.doc_commands import Command

from solution.host.aggregator import Aggregator
from solution.host.config import HostServerSpec
from solution.config import config_of

RUN_LIMIT = 120  # seconds for one documented command; a correct one needs a few


# -- the documented commands that run: once, all at the same time -----------------------

@dataclass(frozen=True)
class Ran:
    stdout: str
    stderr: str
    status: int


def documented(doc: str, start: str) -> Command:
    """The document's command that begins with `start` (its first reading)."""
    found = next((c for c in cmds.commands(doc) if c.text.startswith(start)), None)
    assert found is not None, f"{doc} no longer has a command starting {start!r}"
    return found


def argv_of(command: Command, package: Optional[str] = None) -> List[str]:
    words = list(command.words)
    words[0] = sys.executable if words[0] in ("python", "python3") else words[0]
    if package is not None:
        words[words.index("-m") + 1] = package
    return words


def clean_env(**extra: str) -> Dict[str, str]:
    """The environment a reader's shell has: no model API, no lab switches, no colour."""
    kept = {k: v for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "OPENAI_", "MCP_LAB_", "QUESTION", "CODE_MODE", "FORCE_COLOR"))}
    return {**kept, "NO_COLOR": "1", **extra}


AT_ONCE = 3  # documented commands running at a time: all at once starved the timing-sensitive tests beside them


def run_documented(scratch_dir: Path) -> Dict[str, Any]:
    """What the documented commands print, each run as written (MOCK=1 and a log of
    our own added where the reader's shell would have them), AT_ONCE at a time,
    beside every command of the client and the fixtures the documents show."""
    logs = ["--audit", str(scratch_dir / "audit.jsonl"), "--tasks-file", ""]
    trace = documented("labs/GUIDE.md", "MOCK=1 python -m checks 2 --trace")
    # The acceptance criterion describes the finished starter; the reference is that.
    agent = documented("labs/GUIDE.md", 'QUESTION="Read note n-2" python -m starter')
    wanted = {
        "trace": (argv_of(trace), clean_env(**dict(trace.env))),
        "agent": (argv_of(agent, "solution") + logs, clean_env(MOCK="1", **dict(agent.env))),
        # a share so small that even the fixtures' tools are too many: the meta-tools
        "meta": ([sys.executable, "-m", "solution", "ask", "Read note n-2", *logs],
                 clean_env(MOCK="1", MCP_LAB_TOOL_SHARE="0.0001")),
    }
    starts: Dict[str, Callable[[], "subprocess.Popen[str]"]] = {
        name: functools.partial(subprocess.Popen, argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        for name, (argv, env) in wanted.items()}
    found: Dict[str, Any] = {"commands": {}}
    with fixture_over_http(scratch_dir / "watched", "--lifecycle-tools") as (url, journal):
        runs = sorted(ours(scratch_dir, url), key=lambda run: not run.watches)  # watch first: edits wait for it
        starts = {**{run.where: run.start for run in runs}, **starts}
        with concurrent.futures.ThreadPoolExecutor(AT_ONCE) as pool:
            ran = {name: pool.submit(finished, start) for name, start in starts.items()}
            found.update(anyio.run(meanwhile, url, journal, any(run.watches for run in runs)))
            for name, future in ran.items():
                if name in wanted:
                    found[name] = future.result()
                else:
                    found["commands"][name] = future.result()
    demo = documented("labs/CLIENT.md", "python -m solution ask --code-mode")
    found["demo"] = next(ran for where, ran in found["commands"].items() if where.endswith(demo.text))
    return found


def finished(start: Callable[[], "subprocess.Popen[str]"]) -> Ran:
    """A command started, and what it printed once it ended (killed, with its group, past RUN_LIMIT)."""
    process = start()
    try:
        out, err = process.communicate(timeout=RUN_LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        err += f"\n(killed: still running after {RUN_LIMIT} s)"
    return Ran(out, err, process.returncode)


# -- every command of the client and the fixtures, run against the fixtures ---------------

OURS = ("solution", "starter", "servers.notes", "servers.tickets")  # what `-m` or a script names


def program(command: Command) -> Optional[str]:
    """The client or fixture a command runs (`solution`, `servers.notes`), or None for another program."""
    words = list(command.words)
    if not words or words[0] not in ("python", "python3"):
        return None
    if "-m" in words:
        module = words[words.index("-m") + 1]
    else:
        module = next((w[:-3].replace("/", ".") for w in words[1:] if w.endswith(".py")), "")
    return module if module in OURS else None


def documented_ours() -> Tuple[List[Command], List[Tuple[Command, str]]]:
    """The client's and fixtures' commands in every document, each reading with no
    placeholder once: those to run, and those marked as needing what a test cannot have."""
    runnable: Dict[Tuple[Any, ...], Command] = {}
    marked: List[Tuple[Command, str]] = []
    for doc in docs.DOCUMENTS:
        for line, written in cmds.command_texts(doc):
            for reading in cmds.readings(written):
                words = cmds.shell_words(reading)
                env = tuple((w.split("=", 1)[0], w.split("=", 1)[1])
                            for w in itertools.takewhile(lambda w: cmds.ASSIGNMENT.match(w) is not None, words))
                command = Command(doc, line, written, env, tuple(words[len(env):]))
                if program(command) is None:
                    continue
                need = cmds.needs(doc, line)
                if need is not None:
                    marked.append((command, need))
                else:
                    runnable.setdefault((env, command.words), command)
    return list(runnable.values()), marked


@dataclass
class Run:
    """One documented command as it is run here: the command, and what is set up around it."""

    command: Command
    directory: Path
    url: str  # the notes fixture over HTTP that `watch` is pointed at

    @property
    def where(self) -> str:
        return self.command.where

    @property
    def watches(self) -> bool:
        return "watch" in self.command.words

    @property
    def serves(self) -> bool:
        return program(self.command) in ("servers.notes", "servers.tickets")

    def argv(self) -> List[str]:
        words = argv_of(self.command)
        if self.serves and "--http" in words:  # the reader's port may be taken here: any free one
            words[words.index("--http") + 1] = "0"
        return [str(ROOT / w) if w.startswith("servers/") else w for w in words]

    def start(self) -> "subprocess.Popen[str]":
        self.directory.mkdir(parents=True)
        if "my_script.py" in self.command.words and "`my_script.py`" in docs.text("labs/CLIENT.md"):
            # the script the document shows (none shown: the command fails, and says it)
            (self.directory / "my_script.py").write_text(docs.block_after("labs/CLIENT.md", "`my_script.py`").text)
        if self.watches:  # the default config, as the reader's own, names the notes over HTTP
            (self.directory / "labs").mkdir()
            (self.directory / "labs" / "servers.json").write_text(json.dumps({"mcpServers": {"notes": {"url": self.url}}}))
        env = clean_env(XDG_CONFIG_HOME=str(self.directory / "config"), **dict(self.command.env))
        if self.serves and "--http" in self.command.words:
            return subprocess.Popen([sys.executable, "-c", UNTIL_READY, *self.argv()], cwd=self.directory, env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, start_new_session=True)
        return subprocess.Popen(self.argv(), cwd=self.directory, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


# A fixture over HTTP runs until killed: this starts it, copies its stderr until it says it is
# ready (or ends), stops it, and exits 0 only when it was ready.
UNTIL_READY = """
import subprocess, sys
server = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
ready = False
for line in server.stderr:
    sys.stderr.write(line)
    if "ready" in line:
        ready = True
        break
server.kill()
server.wait()
sys.exit(0 if ready else 1)
"""


def ours(scratch_dir: Path, url: str) -> Iterator[Run]:
    for number, command in enumerate(documented_ours()[0]):
        yield Run(command, scratch_dir / f"command-{number}", url)


@contextlib.contextmanager
def fixture_over_http(directory: Path, *extra: str) -> Iterator[Tuple[str, Path]]:
    """The notes fixture over HTTP on a free port, with its journal: (URL, journal path)."""
    directory.mkdir(parents=True)
    journal = directory / "journal.jsonl"
    server = subprocess.Popen([sys.executable, str(ROOT / "servers" / "notes.py"), "--http", "0", "--journal",
                               str(journal), *extra], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        line = next((line for line in server.stderr if "ready" in line), "")  # bounded: it says so, or exits
        assert " at http://" in line, f"the notes fixture over HTTP did not start: {line!r}"
        yield line.split(" at ")[-1].strip(), journal
    finally:
        server.kill()
        server.wait(30)


async def meanwhile(url: str, journal: Path, watched: bool) -> Dict[str, Any]:
    """What the bench's rows count, and, while `watch` listens, another client's three edits
    of the note it watches (once the fixture has acknowledged its subscription)."""
    found: Dict[str, Any] = {}

    async def count() -> None:
        found.update(await counted())
    async with anyio.create_task_group() as group:
        group.start_soon(count)
        if watched:
            group.start_soon(edit_watched, url, journal)
    return found


async def edit_watched(url: str, journal: Path) -> None:
    from solution.config import ServerSpec

    deadline = time.monotonic() + RUN_LIMIT
    while not any(json.loads(line).get("msg", {}).get("method") == "notifications/subscriptions/acknowledged"
                  for line in (journal.read_text().splitlines() if journal.exists() else [])):
        if time.monotonic() > deadline:
            return  # it never subscribed: its own run says why
        await anyio.sleep(0.05)
    async with Aggregator(config_of([HostServerSpec("notes", "", url=url, timeout=30)])) as tools:
        await tools.refresh()
        for n in range(3):
            await tools.call("mcp__notes__edit_note", {"id": "n-1", "body": f"edit {n}"}, via="cli")


async def counted() -> Dict[str, Any]:
    """What the bench's rows 7 to 9 count (the same on any machine), and the sizes of
    the cost runs' tables: rows 8 and 9 as the cells bench.cost_rows gives each row.
    All at once: each waits mostly on its servers."""
    from checks.dev import bench, cost
    from checks.dev.code_tokens import demo_tokens
    found: Dict[str, Any] = {"cost rows": {}, "tables": {}}

    async def tokens() -> None:
        found["tokens"] = await demo_tokens()

    async def rows(api: str) -> None:
        cells: List[Tuple[Any, ...]] = []
        bench.cost_rows(api, await cost.both_modes(api), lambda *row: cells.append(row))
        found["cost rows"][api] = cells

    async def table(size: int) -> None:  # in tokens, as `ask` measures a table
        found["tables"][str(size)] = await cost.table_tokens(cost.LARGE, size)

    async def large_tools() -> None:
        async with Aggregator(config_of(cost.specs(cost.LARGE, cost.SIX_TURNS.office_tools))) as tools:
            await tools.refresh()
            found["large tools"] = len(tools.entries)
    async with anyio.create_task_group() as group:
        group.start_soon(tokens)
        group.start_soon(large_tools)
        for api in cost.APIS:
            group.start_soon(rows, api)
        for size in (cost.OFFICE_SIZES[0], cost.SIX_TURNS.office_tools, cost.OFFICE_SIZES[-1]):
            group.start_soon(table, size)
    return found


def shared_runs(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Dict[str, Any]:
    """What the documented commands print, run once for the whole session: under
    pytest-xdist the first worker to ask runs them and the others read its record."""
    if getattr(request.config, "workerinput", None) is None:
        return run_documented(tmp_path_factory.mktemp("runs"))
    import fcntl
    shared = tmp_path_factory.getbasetemp().parent  # the same for every worker of this session
    with open(shared / "documented-runs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = shared / "documented-runs.json"
        if not record.exists():
            found = run_documented(Path(tempfile.mkdtemp(dir=shared)))
            record.write_text(json.dumps(found, default=vars))
        kept = json.loads(record.read_text())
    kept["commands"] = {where: Ran(**ran) for where, ran in kept["commands"].items()}
    return {k: Ran(**v) if k in RAN else v for k, v in kept.items()}


RAN = ("trace", "demo", "agent", "meta")  # the commands; the rest of the record is counted in process
