"""`python -m checks.dev.bench`: the performance table, every row measured side by
side in one run, several repetitions, median and spread, as ratios.

    python -m checks.dev.bench [--quick] [--against REV]

Absolute rates drift from run to run and machine to machine; ratios measured
in the same run, interleaved, do not drift much. Targets are ratios too.

`--against REV` measures, instead of the table, what a change costs where a
person waits: a fixture server's start and the self-check's wall time (row 5),
this checkout and the commit REV (written out with `git archive`) interleaved
in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Tuple

import anyio

from checks.dev.code_tokens import demo_tokens
from checks.dev.cost import (APIS, LIST_CHANGE, LONG_RESULTS, SIX_TURNS, CostRun, Scenario, both_modes,
                             read_after_change)
from checks.target import ROOT
from checks.watch import POLL as WATCH_POLL
from solution.host.aggregator import Aggregator
from solution.aggregator import Connection
from solution.config import ServerSpec, config_of
from solution.discovery import ServerInfo
from solution.stdio_client import StdioClient

SERVERS = ROOT / "servers"
SDK_SERVER = ROOT / "solution" / "tests" / "sdk_servers" / "ll_server.py"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
CALL = {"name": "read_note", "arguments": {"id": "n-1"}}


@dataclass
class Sample:
    values: List[float]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def spread(self) -> str:
        return f"{min(self.values):,.0f}-{max(self.values):,.0f}"


def notes_argv(*extra: str) -> List[str]:
    return [sys.executable, str(SERVERS / "notes.py"), *extra]


# -- row 1 and 6: sequential round trips ---------------------------------------------

async def ours(argv: List[str], calls: int, name: str = "read_note", arguments: Any = None) -> float:
    async with anyio.create_task_group() as group:
        client = StdioClient(ServerSpec("bench", argv[0], tuple(argv[1:])))
        await client.start(group)
        params = {"name": name, "arguments": arguments if arguments is not None else {"id": "n-1"}}
        await client.request("tools/call", params)  # warm
        began = time.perf_counter()
        for _ in range(calls):
            await client.request("tools/call", params)
        rate = calls / (time.perf_counter() - began)
        await client.aclose()
    return rate


async def sdk(argv: List[str], calls: int) -> float:
    from mcp import Client, StdioServerParameters
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(ROOT))
    async with Client(params) as client:  # as people use it (its default: no timeout)
        await client.call_tool("read_note", {"id": "n-1"})  # warm (and its tools/list)
        began = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("read_note", {"id": "n-1"})
        return calls / (time.perf_counter() - began)


async def floor(argv: List[str], calls: int) -> float:
    """The least any client must do: write a line, read a line, parse it."""
    process = await asyncio.create_subprocess_exec(*argv, stdin=-1, stdout=-1, stderr=-3)
    assert process.stdin is not None and process.stdout is not None
    params = {**CALL, "_meta": META}
    began = time.perf_counter()
    for i in range(calls):
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                        "params": params}).encode() + b"\n")
        await process.stdin.drain()
        json.loads(await process.stdout.readline())
    rate = calls / (time.perf_counter() - began)
    process.stdin.close()
    await process.wait()
    return rate


def interleaved(runs: Dict[str, Callable[[], Awaitable[float]]], repetitions: int) -> Dict[str, Sample]:
    """Each contender once per round, rounds repeated: shared noise, fair medians."""
    found: Dict[str, List[float]] = {name: [] for name in runs}
    for _ in range(repetitions):
        for name, run in runs.items():
            found[name].append(anyio.run(run))
    return {name: Sample(values) for name, values in found.items()}


# -- row 2: many calls in flight ----------------------------------------------------

async def in_flight(count: int) -> "tuple[float, int]":
    async with anyio.create_task_group() as group:
        client = StdioClient(ServerSpec("bench", sys.executable, tuple(notes_argv("--inline")[1:])))
        await client.start(group)
        wrong = 0

        async def one(i: int) -> None:
            nonlocal wrong
            wanted = f"n-{i % 4 + 1}"
            result = await client.request("tools/call", {"name": "read_note", "arguments": {"id": wanted}})
            wrong += result["structuredContent"]["id"] != wanted
        began = time.perf_counter()
        async with anyio.create_task_group() as calls:
            for i in range(count):
                calls.start_soon(one, i)
        rate = count / (time.perf_counter() - began)
        await client.aclose()
    return rate, wrong


# -- row 3: concurrent discovery ------------------------------------------------------

async def refresh_time(servers: int, delay: float) -> float:
    specs = [ServerSpec(f"s{i}", sys.executable, (str(SERVERS / "tickets.py"), "--delay", str(delay)))
             for i in range(servers)]
    async with Aggregator(config_of(specs)) as tools:
        began = time.perf_counter()
        await tools.refresh()
        took = time.perf_counter() - began
        assert len(tools.connections) == servers, tools.offline
    return took


# -- row 4: aggregation --------------------------------------------------------------

def fake_connections(servers: int, tools: int) -> Dict[str, Connection]:
    found = {}
    for s in range(servers):
        listed = [{"name": f"tool_{t}" + ("." if t % 10 == 0 else ""), "description": f"Tool {t} of server {s}",
                   "inputSchema": {"type": "object", "properties": {
                       "query": {"type": "string", "maxLength": 100 + t},
                       "limit": {"type": "integer", "minimum": 1}}, "required": ["query"]}}
                  for t in range(tools)]
        found[f"server{s}"] = Connection(f"server{s}", None, ServerInfo(f"server{s}", "1"), listed)  # type: ignore[arg-type]
    return found


def aggregation(servers: int, tools: int) -> "tuple[float, float]":
    """Seconds to build the table (names, reverse table, entries whose validators
    are made on first use), and the peak MB of a second, traced build."""
    found = fake_connections(servers, tools)
    config = config_of([ServerSpec(alias, "x") for alias in found])
    aggregator = Aggregator(config)
    began = time.perf_counter()
    aggregator._rebuild(found, {})
    took = time.perf_counter() - began
    assert len(aggregator.entries) == servers * tools
    tracemalloc.start()  # slows allocation a lot, so never during the timing
    Aggregator(config)._rebuild(found, {})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return took, peak / 1e6


# -- row 5: the self-check's wall time -------------------------------------------------

def checks_time(target: str, root: Path = ROOT) -> float:
    """Wall time of one self-check of the checkout at `root`, pinned to two CPUs
    where `taskset` exists (the smallest machine the lab promises to be quick on),
    with bytecode cached as a learner's Python caches it: PYTHONDONTWRITEBYTECODE,
    a setting of some maintainers' machines and CI's, would have every run compile
    the lab again. Run from `root`, `python -m checks` is that checkout's: the
    working directory comes first on the module path, before the installed one."""
    began = time.perf_counter()
    subprocess.run([*pinned(), sys.executable, "-m", "checks", "--target", target], capture_output=True,
                   timeout=120, cwd=root, env={**caching_environment(), "MOCK": "1"})
    return time.perf_counter() - began


def pinned() -> List[str]:
    return ["taskset", "-c", "0,1"] if shutil.which("taskset") else []


def caching_environment() -> Dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


# -- --against: this checkout beside another commit, where a person waits --------------

DISCOVER = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}})
            + "\n").encode()


def written_out(rev: str, into: Path, repository: Path = ROOT) -> Path:
    """The tree of commit `rev` (anything git names a commit by), written under `into`."""
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=repository, capture_output=True,
                             check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def server_start(root: Path) -> Tuple[float, float]:
    """The notes fixture of the checkout at `root`, started as the judge starts it
    (`-I -S`, a journal, pinned as row 5 is): the seconds until its answer to
    server/discover, and the CPU seconds its process used from start to exit."""
    with tempfile.TemporaryDirectory(prefix="mcp-lab-bench-") as scratch:
        command = [*pinned(), sys.executable, "-I", "-S", str(root / "servers" / "notes.py"),
                   "--journal", str(Path(scratch) / "journal.jsonl")]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=caching_environment()) as server:
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write(DISCOVER)
            server.stdin.flush()
            answer = server.stdout.readline()
            took = time.perf_counter() - began
            server.stdin.close()
            server.wait(timeout=30)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert b'"supportedVersions"' in answer, answer[:200]
    return took, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


STARTS = 10  # fixture starts a repetition, for each checkout
SAVES = 3  # saves a repetition under --watch, for each checkout
WATCHING = "watching "  # how --watch says a run is over and it waits for the next save


def watch_times(root: Path, saves: int) -> List[float]:
    """`MOCK=1 python -m checks --watch` on the starter of the checkout at `root`,
    pinned as row 5 is: the seconds from each save (a module's time touched, its text
    left as it is) to the end of the run it sets off, which is what a learner waits on."""
    command = [*pinned(), sys.executable, "-m", "checks", "--watch"]
    saved = root / "starter" / "naming.py"
    took: List[float] = []
    with subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          env={**caching_environment(), "MOCK": "1"}) as watcher:
        assert watcher.stdout is not None
        try:
            for save in range(saves + 1):
                if save:  # the first run is the one --watch starts with: not after a save
                    time.sleep(2 * WATCH_POLL)  # past the mtime's resolution, so the save is seen as one
                    began = time.perf_counter()
                    os.utime(saved)
                for line in watcher.stdout:
                    if line.startswith(WATCHING):
                        break
                if save:
                    took.append(time.perf_counter() - began)
        finally:
            watcher.terminate()
            watcher.wait(timeout=30)
    return took


def side_by_side(rev: str, reps: int) -> None:
    """Each measurement taken for both checkouts in turn, so both meet the same noise."""
    with tempfile.TemporaryDirectory(prefix="mcp-lab-against-") as scratch:
        roots = {"this checkout": ROOT, rev: written_out(rev, Path(scratch))}
        starts: Dict[str, List[Tuple[float, float]]] = {name: [] for name in roots}
        walls: Dict[Tuple[str, str], List[float]] = {(name, t): [] for name in roots for t in ("solution", "starter")}
        saves: Dict[str, List[float]] = {name: [] for name in roots}
        for root in roots.values():  # not counted: the first run compiles and caches each checkout's bytecode
            server_start(root)
            for target in ("solution", "starter"):
                checks_time(target, root)
        for _ in range(reps):  # taken in turns, one of each at a time
            for _ in range(STARTS):
                for name, root in roots.items():
                    starts[name].append(server_start(root))
            for target in ("solution", "starter"):
                for name, root in roots.items():
                    walls[name, target].append(checks_time(target, root))
            for name, root in roots.items():
                saves[name] += watch_times(root, SAVES)
    this, other = roots
    print(f"  {'side by side: median (spread)':<52} {'this checkout':<20} {rev[:20]:<20} ratio")
    for index, what in ((0, "a notes fixture's start to its first answer, wall"), (1, "the same start, CPU to exit")):
        compared(what, Sample([s[index] * 1000 for s in starts[this]]),
                 Sample([s[index] * 1000 for s in starts[other]]), "ms")
    for target in ("solution", "starter"):
        compared(f"MOCK=1 python -m checks --target {target}, 2 CPUs", Sample(walls[this, target]),
                 Sample(walls[other, target]), "s")
    compared("a save under --watch to its verdicts, 2 CPUs", Sample(saves[this]), Sample(saves[other]), "s")


def compared(what: str, ours: Sample, theirs: Sample, unit: str) -> None:
    def shown(sample: Sample) -> str:
        digits = 2 if unit == "s" else 1
        return f"{sample.median:.{digits}f} {unit} ({min(sample.values):.{digits}f}-{max(sample.values):.{digits}f})"
    print(f"  {what:<52} {shown(ours):<20} {shown(theirs):<20} {ours.median / theirs.median:.2f}x", flush=True)


# -- rows 8 and 9: what a question costs with the provider's prompt cache ------------------

# The targets (36): what caching must leave of the full table's bill on
# Anthropic's API, and what a list change may cost on either.
CACHED_AT_MOST = {SIX_TURNS.name: 0.31, LONG_RESULTS.name: 0.50}
READ_AFTER_CHANGE = 0.75


def cost_rows(api: str, runs: List[Tuple[Scenario, CostRun, CostRun]],
              row: Callable[[str, str, str, str, bool], None]) -> None:
    """One row a scenario: billed tokens and model turns, full table beside meta-tools."""
    number, rules = ("8", "Anthropic") if api == "anthropic" else ("9", "OpenAI")
    for index, (scenario, full, meta) in enumerate(runs):
        label = f"{number}. billed, {rules}'s rules: {scenario.name}" if index == 0 else f"   {scenario.name}"
        measured = (f"full {full.bill.billed:,.0f} ({full.run.model_turns} turns) vs meta "
                    f"{meta.bill.billed:,.0f} ({meta.run.model_turns})")
        clean = not full.errors and not meta.errors and meta.fraction <= 1.0  # never dearer than uncached
        if scenario is LIST_CHANGE:
            read = read_after_change(full)
            row(label, measured, f"read {read:.2f} of the last", f">= {READ_AFTER_CHANGE}",
                clean and read >= READ_AFTER_CHANGE)
            continue
        limit = CACHED_AT_MOST.get(scenario.name) if api == "anthropic" else None
        row(label, measured, f"of uncached {full.fraction:.2f}, {meta.fraction:.2f}",
            f"full <= {limit:.2f}" if limit else "meta <= 1", clean and (limit is None or full.fraction <= limit))


def main(argv: "List[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checks.dev.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer calls and repetitions (a smoke run)")
    parser.add_argument("--against", metavar="REV",
                        help="instead of the table: a fixture's start and row 5, this checkout beside commit REV")
    options = parser.parse_args(argv)
    calls, reps = (50, 1) if options.quick else (2000, 5)  # quick: does every row run, not how fast
    if options.against is not None:
        side_by_side(options.against, reps)
        return 0
    minimal = [sys.executable, str(ROOT / "checks" / "dev" / "bench_server.py")]
    rows: List[List[str]] = []

    def row(what: str, measured: str, ratio: str, target: str, met: bool) -> None:
        rows.append([what, measured, ratio, target, "met" if met else "MISSED"])
        print(f"  {what:<46} {measured:<34} {ratio:<18} {target:<12} {'met' if met else 'MISSED'}", flush=True)

    print(f"  {'row':<46} {'median (spread), per second':<34} {'ratio':<18} {'target':<12} verdict")
    rates = interleaved({"solution": lambda: ours(minimal, calls), "sdk": lambda: sdk(minimal, calls),
                         "floor": lambda: floor(minimal, calls)}, reps)
    mine, theirs, least = rates["solution"], rates["sdk"], rates["floor"]
    row("1. sequential tools/call, minimal server: ours", f"{mine.median:,.0f} ({mine.spread()})", "", "", True)
    row("   official SDK Client", f"{theirs.median:,.0f} ({theirs.spread()})",
        f"solution/SDK {mine.median / theirs.median:.2f}x", ">= 2.5x", mine.median / theirs.median >= 2.5)
    row("   raw asyncio loop (the floor)", f"{least.median:,.0f} ({least.spread()})",
        f"solution/floor {mine.median / least.median:.2f}x", ">= 0.75x", mine.median / least.median >= 0.75)
    flights = [anyio.run(in_flight, 1000) for _ in range(reps)]
    wrong = sum(w for _, w in flights)
    row("2. 1,000 calls in flight to one server", f"{statistics.median(r for r, _ in flights):,.0f}",
        f"{1000 * reps - wrong}/{1000 * reps} matched", "all matched", wrong == 0)
    rounds = 1 if options.quick else max(2, reps // 2)
    single = Sample([anyio.run(refresh_time, 1, 0.3) for _ in range(rounds)])
    eight = Sample([anyio.run(refresh_time, 8, 0.3) for _ in range(rounds)])
    row("3. discovery of 8 servers, 300 ms per reply", f"{eight.median:.2f} s vs one: {single.median:.2f} s",
        f"{eight.median / single.median:.2f}x the slowest", "<= 1.3x", eight.median / single.median <= 1.3)
    built = [aggregation(50, 200) for _ in range(reps)]
    took = statistics.median(t for t, _ in built)
    row("4. aggregate 50 servers x 200 tools", f"{took * 1000:.0f} ms, peak {max(m for _, m in built):.0f} MB",
        "names, table, entries", "< 100 ms", took < 0.1)
    walls: Dict[str, List[float]] = {"solution": [], "starter": []}
    for target in walls:  # not counted: a learner's first run compiles and caches the lab's bytecode
        checks_time(target)
    for _ in range(reps):  # interleaved, so both meet the same noise
        for target in walls:
            walls[target].append(checks_time(target))
    for target, limit in (("solution", 1.0), ("starter", 1.5)):
        wall = Sample(walls[target])
        row(f"5. MOCK=1 python -m checks --target {target}, 2 CPUs", f"{wall.median:.2f} s "
            f"({min(wall.values):.2f}-{max(wall.values):.2f})", "", f"<= {limit:g} s", wall.median <= limit)
    served = interleaved({"fixture": lambda: ours(notes_argv(), calls),
                          "sdk server": lambda: ours([sys.executable, str(SDK_SERVER)], calls, "echo",
                                                     {"text": "hi"})}, reps)
    row("6. the notes fixture (a thread per request)", f"{served['fixture'].median:,.0f} "
        f"({served['fixture'].spread()})", f"fixture/SDK server {served['fixture'].median / served['sdk server'].median:.2f}x",
        "", True)
    row("   the SDK's low-level stdio server", f"{served['sdk server'].median:,.0f} "
        f"({served['sdk server'].spread()})", "same client", "", True)
    saved = anyio.run(demo_tokens)  # counted, not timed: the same on any machine
    row("7. code mode, demo question: tokens sent", f"{saved['code_mode']:,} ({saved['code_mode_turns']} turns) "
        f"vs direct {saved['direct']:,} ({saved['direct_turns']})",
        f"direct/code {saved['direct'] / saved['code_mode']:.2f}x", ">= 1.5x",
        saved["direct"] / saved["code_mode"] >= 1.5 and bool(saved["same_answer"]))
    for api in APIS:  # counted, not timed, as row 7
        cost_rows(api, anyio.run(both_modes, api), row)
    missed = [r[0].strip() for r in rows if r[4] == "MISSED"]
    print(f"bench: {len(rows)} rows, {len(missed)} targets missed" + (f": {', '.join(missed)}" if missed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
