"""The documented commands that can run here, run as written, once a session,
all at the same time, and what the bench's counted rows count meanwhile.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import anyio
import pytest

from checks.target import ROOT
from checks.tests import doc_commands as cmds
from checks.tests.doc_commands import Command

from solution.host.aggregator import Aggregator
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


def run_documented(scratch_dir: Path) -> Dict[str, Any]:
    """What the documented commands print, each run as written (MOCK=1 and a log of
    our own added where the reader's shell would have them), all at the same time."""
    logs = ["--audit", str(scratch_dir / "audit.jsonl"), "--tasks-file", ""]
    trace = documented("labs/GUIDE.md", "MOCK=1 python -m checks 2 --trace")
    demo = documented("labs/CLIENT.md", "python -m solution ask --code-mode")
    # The acceptance criterion describes the finished starter; the reference is that.
    agent = documented("labs/GUIDE.md", 'QUESTION="Read note n-2" python -m starter')
    wanted = {
        "trace": (argv_of(trace), clean_env(**dict(trace.env))),
        "demo": (argv_of(demo) + logs, clean_env(MOCK="1")),
        "agent": (argv_of(agent, "solution") + logs, clean_env(MOCK="1", **dict(agent.env))),
        # a share so small that even the fixtures' tools are too many: the meta-tools
        "meta": ([sys.executable, "-m", "solution", "ask", "Read note n-2", *logs],
                 clean_env(MOCK="1", MCP_LAB_TOOL_SHARE="0.0001")),
    }
    started = {name: subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, start_new_session=True)
               for name, (argv, env) in wanted.items()}
    found: Dict[str, Any] = {}
    try:
        found.update(anyio.run(counted))  # meanwhile
        for name, process in started.items():
            out, err = process.communicate(timeout=RUN_LIMIT)
            found[name] = Ran(out, err, process.returncode)
    finally:
        for process in started.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
    return found


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
            record.write_text(json.dumps({k: vars(v) if isinstance(v, Ran) else v for k, v in found.items()}))
        kept = json.loads(record.read_text())
    return {k: Ran(**v) if k in RAN else v for k, v in kept.items()}


RAN = ("trace", "demo", "agent", "meta")  # the commands; the rest of the record is counted in process
