"""The documents cannot drift: every command in README.md, labs/*.md and
servers/README.md is parsed by its own program's parser, every sample output
is made again by the code and compared, and every number that describes the
code is read from the code, so a change that makes a document false fails here.

Why a collector of our own, not Sybil or pytest-examples: neither is
installed, and neither fits what these documents hold. Both run examples
(doctest sessions, Python blocks with their printed output); ours are shell
commands, usage lines (`[--write | --guide] [REGION ...]`) and options in
table cells, which must be *parsed* by the lab's own argparse parsers, not run
(most start servers, some install Node or run for minutes), and prose numbers,
which only a table of (document, statement, code) can hold. The reader,
checks/tests/documents.py, needs only the standard library, and each failure
names the document, the statement and what the code says instead.

The kinds of check, each shown failing on a wrong line by
test_each_kind_of_check_fails_on_a_wrong_line:
- commands: each one (shell blocks, inline code, the autograding JSON) parsed
  by its program: `checks.cli.parse`, the clients' `cli_options.parse`, the
  servers' `parse_options`, and every other program's `main`, stopped at its
  own `parse_args`; an option named alone must be one some program takes;
- names: the environment variables a document sets or names are read by the
  code; the paths it names exist; the identifiers in its inline code exist in
  the code, and so do its error codes;
- samples: the documented commands that can run here (the guide's `--trace`
  of item 2, the code-mode demo, the agent loop, the meta-tools note) run once,
  at the same time, in a module fixture, and their output is compared; the
  fault suite's, the interop run's and the bench's output is printed by their
  real `main` with the document's own measurements put in, so what the code
  decides (counts, ratios, targets, verdicts, layout) is what is compared;
- tables: the switches against `servers/switches.py`, the hostile scenarios
  against the fault suite, the layout against the files, CI's list against
  `.ci/run`, the exercises and extensions against `checks/exercises.py`, the
  recorded mutation run against today's regions and catalogue;
- numbers: `claims()`, one pattern per statement, its numbers as groups, and
  the code that decides them.
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import itertools
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import types
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple
from unittest import mock

import anyio
import pytest

from checks.target import ROOT
from checks.tests import documents as docs
from solution.aggregator import Aggregator
from solution.config import config_of
from checks.tests.documents import DOCUMENTS, Command, Scratch, folded, g, listed, spoken, table_after

RUN_LIMIT = 120  # seconds for one documented command; a correct one needs a few


# -- commands and names ----------------------------------------------------------------

@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Scratch:
    return Scratch(tmp_path_factory.mktemp("parse"))


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_command_in_the_document_is_one_its_program_accepts(doc: str, scratch: Scratch) -> None:
    found = docs.commands(doc)
    assert found, f"{doc}: no commands found (the reader is broken)"
    wrong = [f"{c.where}\n    {why}" for c in found for why in [docs.problem(c, scratch)] if why]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_option_the_document_names_alone_is_one_a_program_takes(doc: str, scratch: Scratch) -> None:
    wrong = [f"{s.doc}:{s.line}: `{s.text}`: {why}" for s in docs.options_in(doc)
             for why in [docs.fragment_problem(s, scratch)] if why]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(docs.BASES))
def test_every_option_of_the_labs_programs_is_in_a_document(module: str) -> None:
    """An option added to a program and to no document is one no reader can find."""
    everything = " ".join(folded(doc) for doc in DOCUMENTS)
    options = sorted(o for o in docs.options_of(module) if o.startswith("--") and o != "--help")
    unnamed = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", everything)]
    assert unnamed == [], f"python -m {module} takes {', '.join(unnamed)}, which no document names ({DOCUMENTS})"


ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+|MOCK|QUESTION|HOME|PATH|TERM|USER|LANG|SHELL|LOGNAME|TMPDIR")
NOT_ENVIRONMENT = {"PR_SET_PDEATHSIG", "SO_PEERCRED"}  # the kernel's names, quoted as such


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_environment_variable_the_document_names_is_read_by_the_code(doc: str) -> None:
    named = {(s.line, m.group(0)) for s in docs.spans(doc) for m in [ENV_NAME.fullmatch(s.text.split("=")[0])]
             if m and m.group(0) not in NOT_ENVIRONMENT}
    wrong = [f"{doc}:{line}: no code reads {name}" for line, name in sorted(named) if not docs.read_by_the_code(name)]
    assert not wrong, "\n".join(wrong)


TOP = ("starter/", "solution/", "servers/", "checks/", "labs/", ".ci/")
MADE_AT_RUN_TIME = {".interop/", "report.json", ".mcp.json", "~/.cache/mcp-client-lab", ".github/workflows/",
                    ".github/classroom/autograding.json"}


NOT_THE_LABS = {"__pycache__", "build", ".git", ".interop", ".venv", "node_modules"}  # made by tools, not ours


@functools.lru_cache(maxsize=None)
def tracked() -> Tuple[str, ...]:
    """The checkout's files, without what tools made in it (a virtual environment holds thousands)."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [d for d in subfolders if d not in NOT_THE_LABS and not d.endswith(".egg-info")]
        found += [os.path.relpath(os.path.join(folder, f), ROOT) for f in files]
    return tuple(found)


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_path_the_document_names_exists(doc: str) -> None:
    files = tracked()
    wrong = []
    for span in docs.spans(doc):
        path = span.text.split(" ")[0].split("#")[0]
        if path in MADE_AT_RUN_TIME or not re.fullmatch(r"[\w./~-]+", path):
            continue
        if path.startswith(TOP) or path in ("README.md", "pyproject.toml"):
            ok = (ROOT / path).exists()
        elif re.fullmatch(r"[\w./-]+\.(py|md|toml|yml|png|txt)", path):
            ok = any(f == path or f.endswith("/" + path) for f in files)
        else:
            continue
        if not ok:
            wrong.append(f"{doc}:{span.line}: no such file: {path}")
    assert not wrong, "\n".join(wrong)


IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?")
OUTSIDE_NAMES = {"gc", "ptrace", "Date", "tools_call", "resource_metadata", "client_secret_basic",
                 "client_secret_post", "offline_access", "insufficient_scope"}  # Python's, HTTP's, OAuth's


@pytest.fixture(scope="module")
def source() -> Set[str]:
    """Every word and error code in the lab's code, tests included."""
    text_ = "\n".join(p.read_text(encoding="utf-8") for package in docs.PACKAGES
                      for p in (ROOT / package).rglob("*.py") if p.name not in ("test_documents.py", "documents.py"))
    words = set(re.findall(r"-?\w+", text_))
    return words | {w.lstrip("-") for w in words}


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_name_in_inline_code_is_in_the_code(doc: str, source: Set[str]) -> None:
    wrong = []
    for span in docs.spans(doc):
        if (not IDENTIFIER.fullmatch(span.text) or span.text in OUTSIDE_NAMES
                or re.search(r"\.(py|md|json)$", span.text)):
            continue
        missing = [part for part in span.text.rstrip("()").split(".") if part not in source]
        if missing:
            wrong.append(f"{doc}:{span.line}: `{span.text}`: no {', '.join(missing)} in the code")
    assert not wrong, "\n".join(wrong)


def test_every_error_code_the_documents_name_is_one_the_code_uses(source: Set[str]) -> None:
    wrong = [f"{s.doc}:{s.line}: {s.text}" for doc in DOCUMENTS for s in docs.spans(doc)
             if re.fullmatch(r"-32\d{3}", s.text) and s.text not in source]
    assert not wrong, "\n".join(wrong)


def test_the_programs_taken_to_read_no_arguments_read_none() -> None:
    """documents.py parses their commands with an empty parser: true only while they have none."""
    for module in docs.TAKE_NO_ARGUMENTS:
        tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        reads = [node.lineno for node in ast.walk(tree)  # the code's, not a child script's text
                 if isinstance(node, ast.Attribute) and node.attr == "argv" and isinstance(node.value, ast.Name)
                 and node.value.id == "sys"
                 or isinstance(node, (ast.Import, ast.ImportFrom)) and "argparse" in ast.dump(node)]
        assert reads == [], f"{module} reads arguments now (line {reads}): take it out of documents.TAKE_NO_ARGUMENTS"


# -- the documented commands that run: once, all at the same time -----------------------

@dataclass(frozen=True)
class Ran:
    stdout: str
    stderr: str
    status: int


def documented(doc: str, start: str) -> Command:
    """The document's command that begins with `start` (its first reading)."""
    found = next((c for c in docs.commands(doc) if c.text.startswith(start)), None)
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


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Dict[str, Any]:
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


def timeless(lines: Sequence[str]) -> List[str]:
    """Trace lines with their times (which differ on every run) left out, and each
    run of cancellations sorted: the item abandons the waiting requests together,
    and the task group cancels them in no set order."""
    kept = [re.sub(r"^\+\s+[\d.]+ ms", "+ … ms", line.strip()) for line in lines if line.strip().startswith("+")]
    def cancels(line: str) -> bool:
        return re.search(r"-> notes +notifications/cancelled #\d+$", line) is not None
    return [line for is_cancel, run in itertools.groupby(kept, key=cancels)
            for line in (sorted(run) if is_cancel else run)]


@pytest.mark.shipped_starter
def test_the_guides_trace_of_item_2_is_what_the_command_prints(runs: Dict[str, Any]) -> None:
    sample = docs.block_after("labs/GUIDE.md", "MOCK=1 python -m checks 2 --trace")
    printed = runs["trace"].stdout.splitlines()
    assert runs["trace"].status == 1, runs["trace"].stdout + runs["trace"].stderr
    assert timeless(sample.text.splitlines()) == timeless(printed), (
        f"labs/GUIDE.md:{sample.line}: the sample is not what the command prints now:\n" + "\n".join(printed))


def test_the_code_mode_demo_runs_as_documented_and_does_what_the_guide_says(runs: Dict[str, Any]) -> None:
    demo = runs["demo"]
    calls = re.findall(r"^  call \d+: .* -> ok$", demo.stdout, re.M)
    printed = re.search(r"^  printed: (.*)$", demo.stdout, re.M)
    assert demo.status == 0 and printed is not None, demo.stdout + demo.stderr
    said = re.search(r"makes (\w+) calls in one script and prints (\w+) line", folded("labs/GUIDE.md"))
    assert said is not None, "labs/GUIDE.md: the demo's sentence is gone"
    assert (said.group(1), said.group(2)) == (spoken(len(calls)), spoken(len(printed.group(1).split("\\n")))), \
        demo.stdout


def test_the_acceptance_criterion_for_the_agent_loop_is_what_it_prints(runs: Dict[str, Any]) -> None:
    row = re.search(r"QUESTION=\"Read note n-2\" python -m starter \| (.*?), then an answer", folded("labs/GUIDE.md"))
    assert row is not None, "labs/GUIDE.md: the agent loop's acceptance row is gone"
    assert row.group(1) in runs["agent"].stdout and "answer:" in runs["agent"].stdout, runs["agent"].stdout


def meta_tools() -> Tuple[str, ...]:
    """The names of the tools a model gets in place of a table too big for its context."""
    from solution.aggregator import Aggregator
    from solution.config import config_of
    from solution.meta_tools import MetaTools
    return tuple(t["name"] for t in MetaTools(Aggregator(config_of([]))).model_tools())


def test_the_meta_tools_note_names_every_meta_tool_the_model_gets(runs: Dict[str, Any]) -> None:
    note = next((line for line in runs["meta"].stdout.splitlines() if line.startswith("model:")), "")
    offered = meta_tools()
    assert f"so the model gets {', '.join(offered[:-1])} and {offered[-1]}" in note, runs["meta"].stdout


# -- sample outputs, printed again by the code with the documents' measurements -----------

def printed(run: Callable[[], Any]) -> List[str]:
    out = io.StringIO()
    with redirect_stdout(out):
        run()
    return out.getvalue().splitlines()


def test_the_fault_suites_summary_line_is_the_one_it_prints() -> None:
    from checks.dev import faults
    sample = docs.block_after("labs/MAINTAINERS.md", "python -m checks.dev.faults")
    def survived(scenario: Any) -> Any:
        return faults.Outcome(scenario.name, True, False, [], 0.0, "")
    with mock.patch.object(faults, "run_scenario", survived):
        last = printed(faults.main)[-1]
    assert sample.text.strip() == last, f"labs/MAINTAINERS.md:{sample.line}: the suite prints {last!r}"


def test_the_interop_summary_line_is_the_one_it_prints(tmp_path: Path) -> None:
    from checks.dev import interop
    sample = docs.block_after("labs/MAINTAINERS.md", "python -m checks.dev.interop")
    took = re.search(r"took ([\d.]+) s", sample.text)
    assert took is not None, sample.text

    def client(args: List[str], cpus: str) -> "subprocess.CompletedProcess[str]":
        if args[0] != "tools":
            return subprocess.CompletedProcess(args, 0, "", "")
        aliases = json.loads((tmp_path / "servers.json").read_text())["mcpServers"]
        table = {"servers": {a: {"era": "current", "protocol_version": "2026-07-28", "name": a} for a in aliases},
                 "offline": {}, "tools": []}
        return subprocess.CompletedProcess(args, 0, json.dumps(table), "")
    clock = iter([0.0, float(took.group(1))])
    with mock.patch.multiple(interop, HOME=tmp_path, client=client, code_mode=lambda *_: [],
                             venv=lambda name, packages: tmp_path / name / "bin",
                             npm_servers=lambda: tmp_path / "npm" / ".bin",
                             time=types.SimpleNamespace(perf_counter=lambda: next(clock))):
        last = printed(lambda: interop.main([]))[-1]
    assert sample.text.strip() == last, f"labs/MAINTAINERS.md:{sample.line}: with every server up it prints {last!r}"


def test_the_interop_calls_are_the_ones_maintainers_describes(tmp_path: Path) -> None:
    from checks.dev import interop
    with mock.patch.multiple(interop, HOME=tmp_path, venv=lambda name, packages: tmp_path / name / "bin",
                             npm_servers=lambda: tmp_path / "npm" / ".bin"):
        config, calls = interop.servers(True)
    called = [alias for alias, _, _ in calls]
    twice = sorted({a for a in called if called.count(a) == 2})
    untouched = sorted(set(config["mcpServers"]) - set(called))
    said = re.search(r"(\w+) calls \(one to each server but (\w+) and (\w+), and a second to (\w+), run as a "
                     r"task\)", folded("labs/MAINTAINERS.md"))
    assert said is not None and said.groups() == (spoken(len(calls)), *untouched, *twice), (said, called)


BENCH_MEASURED = {  # what the document measured, by the row it is in
    "ours": r"minimal server: ours ([\d,]+) \(([\d,]+)-([\d,]+)\)",
    "sdk": r"official SDK Client +([\d,]+) \(([\d,]+)-([\d,]+)\)",
    "floor": r"\(the floor\) +([\d,]+) \(([\d,]+)-([\d,]+)\)",
    "flight": r"in flight to one server +([\d,]+) ",
    "discovery": r"300 ms per reply +([\d.]+) s vs one: ([\d.]+) s",
    "aggregate": r"x 200 tools +(\d+) ms, peak (\d+) MB",
    "solution": r"--target solution, 2 CPUs ([\d.]+) s \(([\d.]+)-([\d.]+)\)",
    "starter": r"--target starter, 2 CPUs ([\d.]+) s \(([\d.]+)-([\d.]+)\)",
    "fixture": r"\(a thread per request\) +([\d,]+) \(([\d,]+)-([\d,]+)\)",
    "sdk server": r"low-level stdio server +([\d,]+) \(([\d,]+)-([\d,]+)\)",
}


def test_the_bench_table_is_what_the_bench_prints_for_the_documents_measurements(runs: Dict[str, Any]) -> None:
    """Rates and times are the document's (they are measured); everything the
    code decides (ratios, targets, verdicts, row names, the count) is printed by
    bench.main, and rows 7 to 9 are counted, so they are the same anywhere."""
    from checks.dev import bench
    sample = docs.block_after("labs/MAINTAINERS.md", "python -m checks.dev.bench")
    measured: Dict[str, List[float]] = {}
    for row, pattern in BENCH_MEASURED.items():
        found = re.search(pattern, sample.text)
        assert found is not None, f"labs/MAINTAINERS.md:{sample.line}: the bench table has no row like {pattern!r}"
        measured[row] = [float(g.replace(",", "")) for g in found.groups()]

    def of(row: str) -> "bench.Sample":  # a median with its spread, as five repetitions would give
        median, low, high = measured[row]
        return bench.Sample([low, median, median, median, high])
    walls = {t: iter(of(t).values) for t in ("solution", "starter")}

    async def in_flight(count: int) -> Tuple[float, int]:
        return measured["flight"][0], 0

    async def refresh_time(servers: int, delay: float) -> float:
        return measured["discovery"][0 if servers > 1 else 1]

    async def demo_tokens() -> Dict[str, Any]:
        return dict(runs["tokens"])

    async def both_modes(api: str) -> str:
        return api

    def cost_rows(api: str, _: str, row: Callable[..., None]) -> None:  # what cost_rows gave, counted once
        for cells in runs["cost rows"][api]:
            row(*cells)
    contender = {"solution": "ours"}  # row 1's name for the reference client; row 5's is its target
    with mock.patch.multiple(bench, interleaved=lambda runs_, reps: {n: of(contender.get(n, n)) for n in runs_},
                             in_flight=in_flight, refresh_time=refresh_time, demo_tokens=demo_tokens,
                             both_modes=both_modes, cost_rows=cost_rows,
                             aggregation=lambda s, t: (measured["aggregate"][0] / 1000, measured["aggregate"][1]),
                             checks_time=lambda target: next(walls[target])):
        table = printed(lambda: bench.main([]))
    assert [line.rstrip() for line in sample.text.splitlines()] == [line.rstrip() for line in table], (
        f"labs/MAINTAINERS.md:{sample.line}: with the document's measurements the bench prints:\n" + "\n".join(table))


def test_the_bench_notes_on_code_mode_count_what_row_7_counts(runs: Dict[str, Any]) -> None:
    tokens = runs["tokens"]
    said = re.search(r"Code mode: the mock model's script and the answer, (\d+) turns\. Direct: the same (\w+) "
                     r"calls that script made, .*?, and the same answer, (\d+) turns", folded("labs/MAINTAINERS.md"))
    assert said is not None, "labs/MAINTAINERS.md: row 7's note is gone"
    assert said.groups() == (str(tokens["code_mode_turns"]), spoken(tokens["calls"]), str(tokens["direct_turns"]))


def test_the_bill_line_in_client_is_what_ask_prints_for_its_tokens() -> None:
    """The sample's counts are put in; the line, its sums and the price are the transcript's."""
    from solution.transcript import usage_line
    sample = docs.block_after("labs/CLIENT.md", "The bill: `ask`'s last line")
    counts = re.search(r"= ([\d,]+) plain \+ ([\d,]+) cache writes \+ ([\d,]+) cache reads; output ([\d,]+)", sample.text)
    assert counts is not None, f"labs/CLIENT.md:{sample.line}: the bill's sample has no counts"
    plain, writes, reads, output = (int(n.replace(",", "")) for n in counts.groups())
    usages = {"Anthropic": {"input_tokens": plain, "cache_creation_input_tokens": writes,
                            "cache_read_input_tokens": reads, "output_tokens": output},
              "OpenAI": {"prompt_tokens": plain + reads, "prompt_tokens_details.cached_tokens": reads,
                         "completion_tokens": output}}
    lines = {api: f"tokens: {usage_line(usage)}" for api, usage in usages.items() if not (api == "OpenAI" and writes)}
    assert sample.text.strip() in lines.values(), (f"labs/CLIENT.md:{sample.line}: for these counts ask prints "
                                                   + " or ".join(repr(v) for v in lines.values()))


def cost_figures(runs: Dict[str, Any]) -> Dict[str, Dict[str, List[str]]]:
    """Rows 8 and 9's figures, by API and scenario: the numbers of the row's ratio cell."""
    found: Dict[str, Dict[str, List[str]]] = {}
    for api, rows in runs["cost rows"].items():
        for label, _, ratio, *_ in rows:
            found.setdefault(api, {})[label.split(": ")[-1].strip()] = re.findall(r"\d+\.\d+", ratio)
    return found


def hundreds(tokens: int) -> str:
    return g(round(tokens, -2))


def test_the_cost_figures_the_documents_quote_are_the_ones_rows_8_and_9_count(runs: Dict[str, Any]) -> None:
    """CLIENT, the guide and MAINTAINERS quote the cost rows and the tables they ran
    on: each figure is the one counted, each count in a scenario's name is its own."""
    from checks.dev.cost import LARGE, LIST_CHANGE, LONG_RESULTS, OFFICE_SIZES, SIX_TURNS
    figures, tables = cost_figures(runs), runs["tables"]
    tools, large = runs["large tools"], hundreds(tables[str(SIX_TURNS.office_tools)])
    result_tokens = g(int(source_number("checks/dev/cost_server.py", r'"--result-tokens", type=int, default=(\d+)')))
    assert f"({tools} tools)" in SIX_TURNS.name and f"{len(SIX_TURNS.calls)} tool turns" in SIX_TURNS.name, \
        f"checks/dev/cost.py: the scenario {SIX_TURNS.name!r} has {tools} tools and {len(SIX_TURNS.calls)} calls"
    assert f"{spoken(len(LONG_RESULTS.calls))} {result_tokens}-token results" in LONG_RESULTS.name, LONG_RESULTS.name
    quoted = [
        ("labs/CLIENT.md", r"a (\d+)-tool table of about ([\d,]+) tokens with (\w+) tool turns is billed ([\d.]+) of "
         r"its uncached cost on Anthropic's API, a run with (\w+) ([\d,]+)-token results ([\d.]+); after tickets' "
         r"install_plugin adds a tool, the next request still reads ([\d.]+) of the earlier prompt from the cache "
         r"\(([\d.]+) on OpenAI's\)", (
             str(tools), large, spoken(len(SIX_TURNS.calls)), figures["anthropic"][SIX_TURNS.name][0],
             spoken(len(LONG_RESULTS.calls)), result_tokens, figures["anthropic"][LONG_RESULTS.name][0],
             figures["anthropic"][LIST_CHANGE.name][0], figures["openai"][LIST_CHANGE.name][0])),
        ("labs/GUIDE.md", r"Cached, a (\d+)-tool table of about ([\d,]+) tokens costs about (a quarter|half) of "
         r"its uncached price over (\w+) tool turns", (
             str(tools), large, {0.25: "a quarter", 0.5: "half"}.get(
                 round(float(figures["anthropic"][SIX_TURNS.name][0]) * 4) / 4, "?"), spoken(len(SIX_TURNS.calls)))),
        ("labs/MAINTAINERS.md", r"The large table is ([\w, ]+) and checks/dev/cost_server\.py: (\d+) tools, about "
         r"([\d,]+) tokens\..*?for tables of ([\d,]+) to ([\d,]+) tokens", (
             ", ".join(LARGE[:-1]), str(tools), large, hundreds(tables[str(OFFICE_SIZES[0])]),
             hundreds(tables[str(OFFICE_SIZES[-1])]))),
    ]
    for doc, pattern, counted_ in quoted:
        said = re.search(pattern, folded(doc))
        assert said is not None, f"{doc}: no longer says anything like {pattern!r}"
        assert said.groups() == counted_, f"{doc}: \"{said.group(0)}\": counted, {counted_}"


# -- tables against the code --------------------------------------------------------------

def test_the_hostile_table_has_a_row_for_each_hostile_scenario_named_as_the_suite_names_it() -> None:
    from checks.dev.faults import SCENARIOS
    from checks.dev.hostile import HOSTILE_SCENARIOS
    rows = [row[0] for row in table_after("labs/MAINTAINERS.md", "against hostile servers and inputs")]
    names = [s.name.removeprefix("hostile: ") for s in SCENARIOS]
    assert [r for r in rows if r not in names] == [], "rows that name no scenario of checks/dev/faults.py"
    assert [s.name.removeprefix("hostile: ") for s in HOSTILE_SCENARIOS if s.name.removeprefix("hostile: ")
            not in rows] == [], "scenarios of checks/dev/hostile.py with no row"
    said = re.search(r"The (\w+) scenarios against hostile servers and inputs \((\w+) of them in "
                     r"checks/dev/hostile\.py, .*?; the other (\w+) in checks/dev/faults\.py\)",
                     folded("labs/MAINTAINERS.md"))
    counts = (len(rows), len(HOSTILE_SCENARIOS), len(rows) - len(HOSTILE_SCENARIOS))
    assert said is not None and said.groups() == tuple(spoken(n) for n in counts), said


def switches() -> Dict[str, Any]:
    from servers.switches import parse_options
    import argparse
    parser = docs.parser_of("servers.notes")
    return {a.option_strings[0]: a for a in parser._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction)}


def switch_rows() -> List[Tuple[List[str], List[str]]]:
    """(the switches a row names, with their values; the environment variables it names)."""
    return [(re.findall(r"`([^`]+)`", row[0]), re.findall(r"`(MCP_LAB_[A-Z_]+)`", row[1]))
            for row in table_after("servers/README.md", "## Switches")]


def test_the_switches_table_names_every_switch_and_every_choice_of_the_servers() -> None:
    named = [switch for written, _ in switch_rows() for w in written for switch in docs.variants(w)]
    missing = []
    for option, action in switches().items():
        if not any(w.split(" ")[0] == option for w in named):
            missing.append(option)
        for choice in action.choices or ():
            if choice != action.default and f"{option} {choice}" not in named:
                missing.append(f"{option} {choice}")
    assert missing == [], f"servers/README.md: the switches table lacks {', '.join(missing)} (servers/switches.py)"


def test_the_switches_table_gives_each_switch_the_variable_its_help_names_and_the_server_reads_it() -> None:
    from servers.switches import parse_options
    helps = {option: re.findall(r"MCP_LAB_[A-Z_]+", action.help or "") for option, action in switches().items()}
    by_row: Dict[str, List[str]] = {}
    for written, variables in switch_rows():
        for switch in written:
            by_row.setdefault(switch.split(" ")[0], []).extend(variables)
    wrong = [f"{o}: the table says {sorted(set(by_row.get(o, [])))}, its help {h}" for o, h in helps.items()
             if sorted(set(by_row.get(o, []))) != h]
    assert wrong == [], "servers/README.md: " + "; ".join(wrong)
    defaults = vars(parse_options("notes", []))
    samples = {"MCP_LAB_ERA": "legacy", "MCP_LAB_FAIL": "garbage", "MCP_LAB_LATENCY": "search=1"}
    for option, variables in helps.items():
        for variable in variables:
            with mock.patch.dict(os.environ, {variable: samples.get(variable, "1")}):
                read = vars(parse_options("notes", []))
            assert read != defaults, f"{option}'s help names {variable}, but the server does not read it"


def test_the_servers_help_says_which_switches_read_the_environment() -> None:
    parser = docs.parser_of("servers.notes")
    named = [bool(re.search(r"MCP_LAB_", a.help or "")) for a in switches().values()]
    assert ("every switch" in (parser.epilog or "").lower()) == all(named), parser.epilog


LAYOUT_SECTIONS = ("labs/", "starter/", "solution/", "servers/", "checks/", "checks/dev/", ".ci/run")


def layout() -> Dict[str, str]:
    """MAINTAINERS' layout block, by the folder each paragraph starts with."""
    found: Dict[str, str] = {}
    current = ""
    for line in docs.block_after("labs/MAINTAINERS.md", "## Layout").text.splitlines():
        head = line.split(" ")[0]
        if head in LAYOUT_SECTIONS:
            current, line = head, line[len(head):]
        found[current] = found.get(current, "") + " " + line
    return found


def files_of(folder: str) -> List[Path]:
    skip = {"tests", "__pycache__", "corpus"}
    return sorted(p for p in (ROOT / folder).rglob("*") if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
                  and p.name not in ("__init__.py", "__main__.py") and not p.name.endswith(".pyc")
                  and not (folder == "checks/" and "dev" in p.relative_to(ROOT / folder).parts))


def unnamed(folder: str) -> List[str]:
    """The files of `folder` that the layout names nowhere in its paragraph (solution/'s
    paragraph says "the same modules": starter/'s names count for it)."""
    text_ = layout()[folder] + (layout()["starter/"] if folder == "solution/" else "")
    return [str(p.relative_to(ROOT)) for p in files_of(folder)
            if not re.search(rf"(?<![\w.]){re.escape(p.stem)}\b", text_)]


@pytest.mark.parametrize("folder", ["labs/", "starter/", "solution/", "servers/", "checks/", "checks/dev/"])
def test_the_layout_names_every_file_of_each_folder(folder: str) -> None:
    missing = unnamed(folder)
    paragraph = "starter/" if folder == "solution/" else folder  # "solution/  the same modules, completed"
    assert missing == [], "".join(
        f"\nlabs/MAINTAINERS.md, Layout: no paragraph names {Path(path).stem} ({path}): add it to the "
        f"{paragraph} paragraph, with a few words on what it does" for path in missing)


@pytest.mark.parametrize("folder", ["labs/", "servers/", "checks/", "checks/dev/"])
def test_every_file_the_layout_names_exists(folder: str) -> None:
    files = r"(?<![\w/.-])(?:[\w.-]+/)*[\w.-]+\.(?:py|md|json|txt|yml|png)\b"
    folders = r"(?<![\w/.-])(?:[\w.-]+/)+(?!\w)"
    names = re.findall(f"{files}|{folders}", layout()[folder])
    under = [str(p.relative_to(ROOT / folder)) for p in (ROOT / folder).rglob("*")]
    missing = [n for n in names if n not in LAYOUT_SECTIONS
               and not any(u == n.rstrip("/") or u.endswith("/" + n.rstrip("/")) for u in under)
               and not (n.startswith(LAYOUT_SECTIONS) and (ROOT / n).exists())]
    assert missing == [], f"labs/MAINTAINERS.md, Layout: no {', '.join(missing)} under {folder}"


def ci_script() -> str:
    return (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def ci_steps() -> List[str]:
    """What .ci/run runs, as `MODULE ARGS...` lines (its comments, redirections and
    status bookkeeping left out)."""
    lines = ci_script().replace("\\\n", " ").splitlines()
    steps = [" ".join(line.split('"$PY" -m ', 1)[1].split("#")[0].split()) for line in lines
             if '"$PY" -m ' in line and not line.strip().startswith("echo")]
    return [re.split(r" (?:>|\|\||&&)", step)[0] for step in steps]


def test_maintainers_says_what_ci_runs() -> None:
    """The sentence at the top of MAINTAINERS names every step of .ci/run with the
    options CI gives it, counts its self-checks, and names nothing CI does not run."""
    steps = ci_steps()
    said = re.search(r"CI \(\.ci/run\) (.*?)\. ", folded("labs/MAINTAINERS.md"))
    assert said is not None, "labs/MAINTAINERS.md: the sentence saying what CI runs is gone"
    sentence = said.group(1)
    self_checks = [s for s in steps if s.split(" ")[0] == "checks"]
    # each other step as its program and the options CI gives it (`mypy --strict`)
    others = [" ".join(w for w in s.split(" ") if w == s.split(" ")[0] or w.startswith("-")) for s in steps
              if s.split(" ")[0] not in ("checks", "pip")]
    missing = [s for s in others if not re.search(rf"(?<![\w.-]){re.escape(s)}(?![\w.-])", sentence)]
    assert missing == [], f"labs/MAINTAINERS.md: CI runs {missing}, which its sentence does not say: {sentence}"
    named = set(re.findall(r"(?<![\w.])checks\.dev\.\w+", sentence))
    assert named <= {s.split(" ")[0] for s in others}, f"CI does not run {named - {s.split(' ')[0] for s in others}}"
    counts = re.search(r"(\w+) self-checks \((.*?)\)", sentence)
    assert counts is not None and counts.group(1) == spoken(len(self_checks)), (sentence, self_checks)
    options = [w for s in self_checks for w in s.split(" ") if w.startswith("--") and w != "--json"]
    assert [o for o in options if o not in counts.group(2)] == [], (counts.group(2), self_checks)
    extra = re.search(r"pip install .*?-e '\.\[(\w+)\]'", ci_script())
    assert extra is not None and f"installs the {extra.group(1)} extra" in sentence, sentence
    assert ("Chromium" in sentence) == ("apt-get install -y -q chromium" in ci_script()), sentence
    assert ("fixture server of the checkout is left running" in sentence) == ("pgrep" in ci_script()), sentence


def test_the_walkthroughs_exercise_table_is_the_exercises_of_the_checks() -> None:
    from checks.exercises import EXERCISES
    rows = table_after("labs/GUIDE.md", "Then the four exercise points")
    found = {int(r[0]): (r[1], r[3]) for r in rows}
    wanted = {n: (f"`starter/{e.file}`, `{e.function}`",
                  f"item {e.items[0]}" if len(e.items) == 1 else f"items {' and '.join(map(str, e.items))}")
              for n, e in EXERCISES.items()}
    assert found == wanted


def test_each_extension_section_names_the_file_and_function_the_checks_judge() -> None:
    from checks.exercises import EXTENSIONS
    headings = dict(re.findall(r"^### (11\.\d) .*?\((E\d): ", docs.text("labs/GUIDE.md"), re.M))
    for name, extension in EXTENSIONS.items():
        heading = re.search(rf"^### (11\.\d) .*\({name}: `starter/([\w.]+)`, `([\w.]+)`\)$",
                            docs.text("labs/GUIDE.md"), re.M)
        assert heading is not None, f"labs/GUIDE.md: no section heading for {name}"
        assert (f"section {heading.group(1)}", heading.group(2), heading.group(3)) == \
               (extension.guide.split(" (")[0], extension.file, extension.function), heading.group(0)
    assert sorted(headings.values()) == sorted(EXTENSIONS)


def test_the_readmes_json_fields_are_in_the_reports_schema() -> None:
    schema = json.loads((ROOT / "checks" / "report.schema.json").read_text())
    row = next(r for r in table_after("README.md", "| command | what it does |") if "--json" in r[0])
    named = re.findall(r"(\w+)", row[1].split("(", 1)[1].split("), described")[0])
    fields = set(schema["properties"]) | set(schema["properties"]["items"]["items"]["properties"])
    words = {"the", "with", "when", "code", "printed", "and", "for", "run"}
    assert [n for n in named if n not in fields and n not in words] == [], row[1]


REMOTE_KEYS = {"url", "headers", "type", "oauth"}  # a remote server's: CLIENT's "Remote servers" names them


def test_clients_list_of_server_keys_is_the_configs() -> None:
    from solution.config import OAUTH_KEYS, SERVER_KEYS
    client = docs.text("labs/CLIENT.md")
    said = re.search(r"Each server entry takes (.*?):\n", client, re.S)
    assert said is not None, "labs/CLIENT.md: the list of a server entry's keys is gone"
    named = {k for k in re.findall(r"`(\w+)`", said.group(1)) if k not in ("false",)}
    assert named == SERVER_KEYS - REMOTE_KEYS, ("labs/CLIENT.md: the keys of a server entry (solution/config.py's "
                                               "SERVER_KEYS) differ by", named ^ (SERVER_KEYS - REMOTE_KEYS))
    section = client.split("### Remote servers", 1)[1].split("\n### Code mode", 1)[0]
    quoted = set(re.findall(r'"(\w+)"(?=[:`])', section))
    assert REMOTE_KEYS - quoted == set(), f"labs/CLIENT.md, Remote servers: no word on {REMOTE_KEYS - quoted}"
    assert OAUTH_KEYS - quoted == set(), (f"labs/CLIENT.md, Signing in: the \"oauth\" keys {OAUTH_KEYS - quoted} "
                                          "(solution/config.py's OAUTH_KEYS) are not described")


def test_the_recorded_mutation_run_is_of_todays_regions_catalogue_and_equivalents() -> None:
    """result.txt is of today's regions and equivalents, adds up, and is what
    INSTRUCTORS reports; the catalogue it says ran in pytest is today's."""
    from checks.dev.mutants.catalogue import CATALOGUE
    from checks.dev.mutants.equivalents import read_equivalents
    from checks.dev.mutants.regions import REGIONS
    result = (ROOT / "checks" / "dev" / "mutants" / "result.txt").read_text(encoding="utf-8")
    lines = result.splitlines()
    rows = [line.split() for line in lines if re.match(r"^(\d|E\d)\s", line)]
    assert [r[0] for r in rows] == list(REGIONS), "result.txt: not a run of today's regions"
    made, killed, equivalent = (sum(int(r[column]) for r in rows) for column in (1, 2, 3))
    assert equivalent == len(read_equivalents().reasons), "result.txt: not a run with today's equivalent.txt"
    total = re.match(r"(\d+) of (\d+) non-equivalent generated mutants killed \((\d+) equivalent\);.*?(\d+) s with",
                     lines[-1])
    assert total is not None and total.groups()[:3] == (str(killed), str(made - equivalent), str(equivalent)), \
        f"result.txt: its last line is not the sum of its rows ({killed} killed of {made - equivalent}): {lines[-1]}"
    ran = re.search(r"the (\d+) catalogue entries ran in pytest", result)
    assert ran is not None and int(ran.group(1)) == len(CATALOGUE), f"the catalogue has {len(CATALOGUE)} entries"
    said = re.search(r"Last run, on 2 CPUs: (\d+) of (\d+) non-equivalent generated mutants killed in all (\w+) "
                     r"regions \((\d+) equivalent\), in about (\w+) minutes .*? and (\d+) of (\d+) catalogue "
                     r"mutants red for their reason \(in pytest", folded("labs/INSTRUCTORS.md"))
    minutes = str(round(int(total.group(4)) / 60))
    assert said is not None and said.groups() == (
        str(killed), str(made - equivalent), spoken(len(REGIONS)), str(equivalent), minutes,
        str(len(CATALOGUE)), str(len(CATALOGUE))), (said, lines[-1])


# -- numbers: (document, the statement with its numbers as groups, what the code says) ----

def source_number(path: str, pattern: str) -> str:
    found = re.search(pattern, (ROOT / path).read_text(encoding="utf-8"))
    assert found is not None, f"{path} no longer has {pattern!r}"
    return found.group(1)


def notes_pages() -> str:
    from servers.core import page_plan
    from servers.notes import build
    server = build()
    plan = page_plan(len(server.tools), server.page_size or len(server.tools))
    assert [] in plan[:-1], "the note library no longer hands out an empty page before the last"
    return spoken(server.page_size or 0)


def build_notes() -> Any:
    from servers.notes import build
    return build()


def tool_names(server: str) -> List[str]:
    module = __import__(f"servers.{server}", fromlist=["build"])
    return [t.name for t in module.build().tools]


def long_names() -> Tuple[str, ...]:
    """The tickets' names a model API cannot take (over 64): the lone one, the twins, their shared start."""
    from solution.naming import MAX_MODEL_NAME
    long = sorted((n for n in tool_names("tickets") if len(n) > MAX_MODEL_NAME), key=len)
    twins = long[1:]
    shared = len(os.path.commonprefix(twins))
    assert len(long) == 3 and len(os.path.commonprefix(long)) < shared, long
    return str(len(long[0])), str(len(twins[0])), str(len(twins[1])), str(shared)


def interop_servers() -> int:
    from checks.dev.interop import NPM, PYPI
    return len(PYPI) + 1 + len(NPM)  # and the old SDK's


def e_range() -> str:
    from checks.items import EXTENSION_ITEMS
    return str(len(EXTENSION_ITEMS))


def items_by_module() -> str:
    """`wire 1-3, names 4-7, ...`: the module of checks/items/ each item's proof is in."""
    from checks.items import EXTENSION_ITEMS, ITEMS, label
    runs: List[Tuple[str, List[str]]] = []
    for item in ITEMS + EXTENSION_ITEMS:
        inner = [c.cell_contents for c in item.body.__closure__ or () if callable(c.cell_contents)]
        module = (inner[0] if inner else item.body).__module__.split(".")[-1]
        if runs and runs[-1][0] == module:
            runs[-1][1].append(label(item.number))
        else:
            runs.append((module, [label(item.number)]))
    return ", ".join(f"{m} {n[0]}" if len(n) == 1 else f"{m} {n[0]}-{n[-1]}" for m, n in runs)


def extensions_help() -> str:
    """The duties `--extensions` names in its help, in order."""
    help_ = next(a.help or "" for a in docs.parser_of("checks")._actions if "--extensions" in a.option_strings)
    found = re.search(r"\(([^)]*)\)", help_)
    assert found is not None, help_
    return found.group(1)


def discovery_limits() -> Tuple[str, ...]:
    from solution import aggregator
    from solution.config import ServerSpec, config_of
    default = aggregator.Aggregator(config_of([ServerSpec("a", "x")])).discovery_timeout
    slow = aggregator.Aggregator(config_of([ServerSpec("a", "x", timeout=60.0)])).discovery_timeout
    return (spoken(aggregator.DISCOVERY_REQUESTS), g(aggregator.DISCOVERY_TIMEOUT), g(default),
            spoken(int(slow // 60)), g(slow))


def stating(doc: str) -> Callable[..., Tuple[Any, ...]]:
    """A claim of `doc`: (doc, pattern, what the code says[, "optional"])."""
    return lambda pattern, value, *optional: (doc, pattern, value, *optional)


def claims() -> List[Tuple[Any, ...]]:
    from checks.dev import conformance
    from checks.dev.interop import NPM, PYPI
    from checks.dev.load import STARTER_GREEN
    from checks.dev.mutants.catalogue import CATALOGUE
    from checks.dev.mutants.regions import REGIONS
    from checks.dev.pytest_setup import pytest_xdist_auto_num_workers
    from checks.exercises import EXERCISES
    from checks.harness import ITEM_LIMIT, PARALLEL, Verdict
    from checks.hints import HINTS
    from checks.isolation import EVENT_CAP
    from checks.items import ITEMS
    from checks.items.extensions import LONG_WORK_GAP, LONG_WORK_STEPS, LONG_WORK_TIMEOUT
    from checks.items.offline import SLOW_DISCOVERY_LIMIT, SLOW_REPLY
    from checks.items.tasks import FIELDS
    from checks.items.wire import ENDLESS_LIMIT
    from checks.page_parts import FOLD_AFTER, KEEP, MAX_ROWS
    from checks.report import MEANING, summary
    from checks.style import Style
    from checks.trace import WIRE_ROWS, WIRE_TAIL, WIRE_TEXT
    from checks.typecount import TypeCount
    from servers.core import ENDLESS_PAGES
    from servers.misbehave import fan_out, tools_for
    from servers.over_http import RESUME_RETRY_MS
    from servers.rpc import INTERNAL_ERROR, METHOD_NOT_FOUND
    from servers.stdio import EOF_GRACE, HOLD_LIMIT
    from servers.tickets import PRIORITIES, PRIORITY_QUESTION
    from solution import anthropic_model, openai_model
    from solution.breaker import COOL_DOWN, THRESHOLD
    from solution.discovery import MAX_PAGES, PROBE_TIMEOUT
    from solution.http_client import MAX_MESSAGE_CONNECTIONS, MAX_REQUEST_CONNECTIONS
    from solution.http_json import HttpSettings
    from solution.jsonrpc import MAX_DEPTH
    from solution.meta_tools import CONTEXT_WINDOW, TOOL_SHARE
    from solution.naming import MAX_MODEL_NAME
    from solution.patterns import MATCH_SECONDS, MAX_STEPS
    from solution.process import BASE_ENV
    from solution.sandbox import Limits
    from solution.server_requests import ANSWERING, REFUSING
    from solution.stdio_client import DEFAULT_TIMEOUT, MAX_LINE_BYTES, STDERR_TAIL_BYTES
    from solution.config import parse_config
    from solution.bill import ANTHROPIC_READ, ANTHROPIC_WRITE, OPENAI_READ
    from solution.oauth_flow import MAX_AUTHORIZATIONS
    from solution.sign_in import InBrowser
    from solution.tokens import default_path
    from checks.dev.billing import LOOKBACK, MAX_BREAKPOINTS, MIN_CACHED
    from checks.dev.cost import QUESTION_CALLS, threshold
    import solution.cli_options as cli_options
    nine, meta = len(ITEMS), meta_tools()
    max_steps = cli_options.parse(["ask", "q"], "x").max_steps
    fraction = {0.1: "tenth", 0.5: "half", 1.25: "quarter"}  # as the guide says them: 1.25 is a quarter more
    with mock.patch.dict(os.environ, {"HOME": "/home/you"}):  # restores the whole environment after
        os.environ.pop("XDG_CONFIG_HOME", None)
        tokens_file = "~/" + str(default_path().relative_to("/home/you"))
    servers_switches = vars(docs.parse("servers.notes", []))
    load = vars(docs.parse("checks.dev.load", []))
    task_timeout = parse_config('{"mcpServers": {"a": {"command": "x"}}}').servers[0].task_timeout
    fine = Style(io.StringIO(), {"NO_COLOR": "1"})
    readme, guide, instructors, client, maintainers, servers = (stating(doc) for doc in DOCUMENTS)
    return [
        # README.md
        readme(r"(\w+) marked exercise points", lambda: spoken(len(EXERCISES))),
        readme(r"(\w+) numbered checks", lambda: spoken(nine).capitalize()),
        readme(r"Python (\d+\.\d+) or newer",
            lambda: source_number("pyproject.toml", r'requires-python = ">=([\d.]+)"')),
        readme(r"\((\w+) packages and what they bring\)", lambda: spoken(len(re.findall(
            r'^    "', (ROOT / "pyproject.toml").read_text().split("dependencies = [")[1].split("]")[0], re.M)))),
        readme(r"as shipped, items ([\d, and]+) pass and ([\d, and]+) fail",
            lambda: (listed(STARTER_GREEN), listed(set(range(1, nine + 1)) - STARTER_GREEN))),
        readme(r"--target solution shows (\d+) of (\d+)", lambda: (str(nine), str(nine))),
        readme(r"the next of (\w+) hints", lambda: spoken(len(HINTS["3"]))),
        readme(r"seconds each item may take before it is stopped \(default (\d+);", lambda: g(ITEM_LIMIT)),
        readme(r"\((\w+) test processes per CPU",
            lambda: spoken((pytest_xdist_auto_num_workers(mock.Mock()) or 0) // len(os.sched_getaffinity(0)))),
        readme(r"after the nine, items E1–E9: ([a-z ,]+) \(labs/GUIDE\.md",
            extensions_help),
        readme(r"exit 0 all pass, (\d) some fail, (\d) could not judge", lambda: (
            str(next(k for k, v in MEANING.items() if "failed" in v)),
            str(next(k for k, v in MEANING.items() if "judge" in v)))),
        # labs/GUIDE.md
        guide(r"(\w+) tools per page, and an empty page before the last one", notes_pages),
        guide(r"the item gives max_pages=(\d+) and expects exactly (\w+) requests",
            lambda: (str(ENDLESS_LIMIT), spoken(ENDLESS_LIMIT))),
        guide(r"allow letters, digits, _ and -, up to (\d+)\.", lambda: str(MAX_MODEL_NAME)),
        guide(r"ends up exactly (\d+) characters long", lambda: str(MAX_MODEL_NAME)),
        guide(r"cut to (\d+), append short_hash", lambda: str(MAX_MODEL_NAME)),
        guide(r"lists (\w+) servers, and two of them \(notes and archive\)",
            lambda: spoken(len(json.loads((ROOT / "labs" / "servers.json").read_text())["mcpServers"]))),
        guide(r"# (\d) of (\d): items ([\d, ]+) pass",
            lambda: (str(len(STARTER_GREEN)), str(nine), listed(STARTER_GREEN, ", "))),
        guide(r"Then the (\w+) exercise points", lambda: spoken(len(EXERCISES))),
        guide(r"MOCK=1 python -m checks \| (\d+/\d+ passed), exit status (\d)", lambda: (
            summary([Verdict(i.number, i.id, i.title, "pass", 0.0, "") for i in ITEMS], 0.0, fine).split(" · ")[0],
            "0")),
        guide(r"python -m checks \((\d), (\d), or (\d) when the harness could not judge\)",
            lambda: tuple(str(k) for k in sorted(MEANING))),
        guide(r"pauses a server after (\w+) failures in a row", lambda: spoken(THRESHOLD)),
        guide(r'python -m checks --types prints "([^"]+)"',
            lambda: TypeCount(0, 0, "").line("starter").split(" (")[0]),
        guide(r"at least two of the (\w+) questions above", lambda: spoken(len(re.findall(
            r"^\*\*\d+\. ", docs.text("labs/GUIDE.md"), re.M)))),
        guide(r"tickets/rebuild_index reports (\w+) steps", lambda: spoken(servers_switches["progress_steps"])),
        guide(r"E3 calls a (\d+) s job with a (\d+) s timeout that reports every (\d+) ms",
            lambda: (g(LONG_WORK_STEPS * LONG_WORK_GAP), g(LONG_WORK_TIMEOUT), g(LONG_WORK_GAP * 1000))),
        guide(r"give the model a small (\w+) tool that returns matching names, an (\w+) that shows one "
            r"tool's full schema, and a (\w+) that makes the call", lambda: meta),
        guide(r"the lab's default is ([\d.]+) % of ([\d,]+) tokens", lambda: (g(TOOL_SHARE * 100), g(CONTEXT_WINDOW))),
        guide(r"the model gets (\w+) tools instead of the table, in tiers: (\w+) \(.*?\), (\w+) \(.*?\) and (\w+) \(",
            lambda: (spoken(len(meta)), *meta)),
        guide(r"E4 finds export_invoice among (\d+) shop tools", lambda: str(len(tools_for("catalogue")))),
        guide(r"a server of (\w+) tools built so that every part", lambda: spoken(len(tools_for("ranking")))),
        guide(r"\(taskTimeout, (\d+) s unless", lambda: g(task_timeout)),
        guide(r"it puts (\w+) property schemas", lambda: spoken(len(FIELDS))),
        guide(r"and (\w+) a form cannot show", lambda: spoken(sum(v is None for _, v in FIELDS.values()))),
        guide(r"a note as text of at most (\d+) characters",
            lambda: str(PRIORITY_QUESTION["requestedSchema"]["properties"]["note"]["maxLength"])),
        guide(r"\(the schema allows (\w+), (\w+) and (\w+)\)", lambda: PRIORITIES),
        guide(r"\(retry: (\d+)\)", lambda: str(RESUME_RETRY_MS)),
        # labs/INSTRUCTORS.md
        instructors(r"needs two replies of ([\d.]+) s each, so its whole discovery always exceeds the "
            r"([\d.]+) s limit", lambda: (g(SLOW_REPLY), g(SLOW_DISCOVERY_LIMIT)) if
            2 * SLOW_REPLY > SLOW_DISCOVERY_LIMIT else ()),
        instructors(r"\((\d+) s per request, (\d+) s per item\)", lambda: (g(DEFAULT_TIMEOUT), g(ITEM_LIMIT))),
        instructors(r"all (\d+) runs of each target give the same verdicts \((\d+) copies at once on (\d+) "
            r"CPUs, (\d+) rounds\)", lambda: (
                str(load["copies"] * load["rounds"]), str(load["copies"]), str(len(load["cpus"].split(","))),
                str(load["rounds"]))),
        instructors(r"(?:the|all) (\w+) regions", lambda: spoken(len(REGIONS))),
        instructors(r"a catalogue of (\d+) wrong answers", lambda: str(len(CATALOGUE))),
        instructors(r"at most (\d+) MB a line", lambda: g(EVENT_CAP / 2 ** 20)),
        instructors(r"keeps at most ([\d,]+) messages \(the first ([\d,]+) and the last (\d+), where it ended\)",
            lambda: (g(WIRE_ROWS), g(WIRE_ROWS - WIRE_TAIL), g(WIRE_TAIL))),
        instructors(r"draws at most (\d+) rows \(a run of more than (\w+) alike messages is cut to its "
            r"first (\w+) and its last", lambda: (str(MAX_ROWS), spoken(FOLD_AFTER), spoken(KEEP))),
        instructors(r"the messages in full share ([\d,]+) characters", lambda: g(WIRE_TEXT)),
        # labs/CLIENT.md
        client(r"ANTHROPIC_MODEL, default ([\w.-]+);", lambda: anthropic_model.DEFAULT_MODEL),
        client(r"OPENAI_MODEL, default ([\w.-]+)\)", lambda: openai_model.DEFAULT_MODEL),
        client(r"Every call has a timeout \((\d+) s without a byte\)", lambda: g(HttpSettings().timeout)),
        client(r"running time \| (\d+) s \|", lambda: g(Limits().seconds)),
        client(r"memory \| (\d+) MiB \|", lambda: g(Limits().memory_bytes / 2 ** 20)),
        client(r"tool calls \| (\d+) \| the (\d+)st raises", lambda: (str(Limits().calls), str(Limits().calls + 1))),
        client(r"printed output \| ([\d,]+) characters \|", lambda: g(Limits().printed_chars)),
        client(r"wall clock \| (\d+) s \|", lambda: g(Limits().wall_seconds)),
        client(r"after (\d+) s of silence the handshake is tried", lambda: g(PROBE_TIMEOUT)),
        client(r"otherwise --timeout, (\d+) s by default", lambda: g(cli_options.parse(["tools"], "x").timeout)),
        client(r"timeout \| --timeout \((\d+) s\)", lambda: g(DEFAULT_TIMEOUT)),
        client(r"taskTimeout \| (\d+) \|", lambda: g(task_timeout)),
        client(r"by default to (\w+) times the longest request timeout \(--timeout or a server's own "
            r"timeout\), and never to less than (\d+) s: (\d+) s with the defaults; a server given "
            r"\"timeout\": 60 \(a first npx -y download\) gets (\w+) minutes, and .*? within (\d+) s",
            discovery_limits),
        client(r"after (\d+) timeouts or lost connections in a row, a server is paused for (\d+) s",
            lambda: (str(THRESHOLD), g(COOL_DOWN))),
        client(r"What a server sees of your environment: only (.*?) \(on Windows",
            lambda: ", ".join(BASE_ENV[:-1]) + " and " + BASE_ENV[-1]),
        client(r"matched with a ([\d.]+) s limit per value", lambda: g(MATCH_SECONDS)),
        client(r"a budget of ([\d,]+) steps", lambda: g(MAX_STEPS)),
        client(r"more than ([\d.]+) % of the model's context window, ([\d,]+) tokens",
            lambda: (g(TOOL_SHARE * 100), g(TOOL_SHARE * CONTEXT_WINDOW))),
        client(r"gives the model (\w+) meta-tools instead: (\w+) \(.*?\), (\w+) \(.*?\) and (\w+)\.",
            lambda: (spoken(len(meta)), *meta)),
        client(r"1 to (\d+) of A-Z a-z 0-9 _ -",
            lambda: source_number("solution/config.py", r"ALIAS_PATTERN = .*?\{1,(\d+)\}")),
        client(r"type-checks the stubs of (\w+) real servers", lambda: spoken(interop_servers())),
        client(r"Anthropic: a write costs ([\d.]+) of a plain token and a read ([\d.]+); OpenAI: a cached token "
            r"costs (\w+), the rate for ([\w.-]+)\)", lambda: (
                g(ANTHROPIC_WRITE), g(ANTHROPIC_READ), fraction.get(OPENAI_READ, g(OPENAI_READ)),
                openai_model.DEFAULT_MODEL)),
        client(r"written at ([\d.]+), then read at ([\d.]+) every turn", lambda: (g(ANTHROPIC_WRITE), g(ANTHROPIC_READ))),
        client(r"blocks marked cache_control \(at most (\w+)\)", lambda: spoken(MAX_BREAKPOINTS)),
        client(r"an earlier entry only (\d+) blocks back", lambda: str(LOOKBACK)),
        client(r"Why the meta-tools start at ([\d,]+) tokens", lambda: g(threshold())),
        client(r"(\w+) turns a call, with a search listing", lambda: spoken(len(meta))),
        client(r"the full table's fewer turns \(a (\w+) as many\)", lambda: {3: "third", 2: "half"}.get(len(meta), "?")),
        client(r"the default limit of (\d+) turns \(--max-steps\) lets the meta-tools make only (\w+) calls",
            lambda: (str(max_steps), spoken((max_steps - 1) // len(meta)))),  # a turn a tier, and the answer's
        client(r"The sign-in waits at most (\d+) s", lambda: g(inspect.signature(InBrowser).parameters["timeout"].default)),
        client(r"a run signs in to one server at most (\d+) times", lambda: str(MAX_AUTHORIZATIONS)),
        client(r"Tokens live in one file, (\S+) \(--tokens-file FILE\)", lambda: tokens_file),
        guide(r"a read at a (\w+) of the price and a write at a (\w+) more; OpenAI by itself, once the prefix "
            r"reaches ([\d,]+) tokens", lambda: (
                fraction.get(ANTHROPIC_READ, g(ANTHROPIC_READ)), fraction.get(ANTHROPIC_WRITE, g(ANTHROPIC_WRITE)),
                g(MIN_CACHED))),
        guide(r"the switch sits at the size where they break even, ([\d,]+) tokens", lambda: g(threshold())),
        # labs/MAINTAINERS.md
        maintainers(r"questions of ([\d, and]+) calls: the figures", lambda: listed(QUESTION_CALLS)),
        maintainers(r"says why it is at ([\d,]+) tokens", lambda: g(threshold())),
        maintainers(r"python -m checks.dev.load [^|]*\| (\d+) self-checks at once on (\d+) CPUs, (\d+) rounds",
            lambda: (str(load["copies"]), str(len(load["cpus"].split(","))), str(load["rounds"]))),
        maintainers(r"conformance suite \(@modelcontextprotocol/conformance ([\d.]+)\)",
            lambda: conformance.SUITE_VERSION),
        maintainers(r"Installs Node (\d+) \(a PyPI wheel, when the machine's Node is older than (\d+)\)",
            lambda: (conformance.NODE_WHEEL.split("==")[1].split(".")[0],
            source_number("checks/dev/conformance.py", r"node_major\(own\) >= (\d+)"))),
        maintainers(r"python -m checks.dev.conformance --client-only \(suite ([\d.]+), mcp [\d.]+\)",
            lambda: conformance.SUITE_VERSION),
        maintainers(r"answers a call with \[\[\[…\]\]\], ([\d,]+) deep",
            lambda: g(int(source_number("servers/misbehave.py", r'b"\[" \* (\d+)')))),
        maintainers(r"refused before parsing \(depth over (\d+)\)", lambda: str(MAX_DEPTH)),
        maintainers(r"the check gives up after ([\d.]+) s", lambda: g(MATCH_SECONDS)),
        maintainers(r"\{\} for ping, (-\d+) for the rest", lambda: str(METHOD_NOT_FOUND)),
        maintainers(r"\((\d+) answered at a time, (\d+) more refused as busy", lambda: (str(ANSWERING), str(REFUSING))),
        maintainers(r"(\d+) connections for the client's requests and (\d+) for its messages",
            lambda: (str(MAX_REQUEST_CONNECTIONS), str(MAX_MESSAGE_CONNECTIONS))),
        maintainers(r"The fixture over HTTP passes (.*?); the other server scenarios",
            lambda: ", ".join(conformance.FIXTURE_SCENARIOS[:-1]) + " and " + conformance.FIXTURE_SCENARIOS[-1]),
        maintainers(r"counts at a server written for it that ([\d,]+) pings on one answer open at most "
            r"(\w+) connections at once", lambda: (
            g(int(source_number("solution/tests/test_http_limits.py", r'"ping"\} for n in range\((\d+)\)'))),
            spoken(1 + MAX_MESSAGE_CONNECTIONS))),
        maintainers(r"and that ([\d,]+) list changes run one re-list at a time", lambda: g(int(source_number(
            "solution/tests/test_http_limits.py", r'"notifications/tools/list_changed"\}\] \* (\d+)')))),
        maintainers(r"([\d,]+) progress notifications draw at most (\w+) lines", lambda: (
            g(int(source_number("solution/tests/test_hostile.py", r"bar\(step, ([\d_]+),").replace("_", ""))),
            spoken(int(source_number("solution/tests/test_hostile.py", r"1 <= len\(lines\) <= (\d+)"))))),
        maintainers(r"both checks give up after ([\d,]+) steps", lambda: g(MAX_STEPS)),
        maintainers(r"shipped starter, which must be green on exactly ([\d, and]+)\)", lambda: (
            listed(STARTER_GREEN) if f"assert green == {sorted(STARTER_GREEN)}" in (ROOT / ".ci" / "run").read_text()
            else ".ci/run checks other items")),
        maintainers(r"lines up to (\d+) MiB are accepted", lambda: g(MAX_LINE_BYTES / 2 ** 20)),
        maintainers(r"drained into a (\d+) KiB tail", lambda: g(STDERR_TAIL_BYTES / 1024)),
        maintainers(r"stopped after (\d+) pages", lambda: str(MAX_PAGES)),
        maintainers(r"all in one config: (.*?) \(PyPI\)", lambda: ", ".join(PYPI[:-1]) + " and " + PYPI[-1]),
        maintainers(r"the @modelcontextprotocol servers (.*?)\. The first run", lambda: ", ".join(
            n.split("server-")[1] for n in NPM[:-1]) + " and " + NPM[-1].split("server-")[1]),
        maintainers(r"so it costs the (\d+) s of silence", lambda: g(PROBE_TIMEOUT)),
        maintainers(r"Items run (\w+) at a time", lambda: spoken(PARALLEL)),
        maintainers(r"registry entries for ([\d,]+) tools", lambda: g(
            math.prod(int(n) for n in source_number("checks/dev/bench.py", r"aggregation\((\d+, \d+)\)").split(", ")))),
        # servers/README.md
        servers(r"sends one huge reply or floods stderr \(--size-mb, (\d+) by default\)",
            lambda: g(vars(docs.parse("servers.misbehave", ["--scenario", "noise"]))["size_mb"])),
        servers(r"--token-ttl S \| \| with --auth: seconds an access token lasts \(default (\d+)\)",
            lambda: str(int(servers_switches["token_ttl"]))),
        servers(r"--list-ttl-ms MS \| \| .*? \(default (\d+): never\)", lambda: g(servers_switches["list_ttl_ms"])),
        servers(r"\| notes \| ([\w, ]+) \| paging:", lambda: ", ".join(tool_names("notes"))),
        servers(r"\| paging: (\w+) tools per page with an empty page between, so only a client that "
            r"follows nextCursor to its end sees all (\w+)",
            lambda: (notes_pages(), spoken(len(tool_names("notes"))))),
        servers(r"\| yes \((\d+) per page\) \|", lambda: str(len(notes_pages()) and build_notes().page_size)),
        servers(r"a (\d+)-character name, two (\d+)/(\d+)-character names sharing their first (\d+) characters",
            long_names),
        servers(r"\(rebuild_index, (\w+) steps\)", lambda: spoken(servers_switches["progress_steps"])),
        servers(r"answer none \|.*?\(at most (\d+) s\)", lambda: g(HOLD_LIMIT)),
        servers(r"after (\d+) pages the server answers (-\d+)", lambda: (str(ENDLESS_PAGES), str(INTERNAL_ERROR))),
        servers(r"write a reason to stderr and exit with status (\d+)",
            lambda: source_number("servers/stdio.py", r"--fail exit-at-start\).*\n.*\n\s*return (\d+)")),
        servers(r"\(default (\d+) and ([\d.]+); E3 uses (\d+) and ([\d.]+)\)", lambda: (
            str(servers_switches["progress_steps"]), g(servers_switches["progress_gap"]), str(LONG_WORK_STEPS),
            g(LONG_WORK_GAP))),
        servers(r"N steps of S seconds \(default (\d+) and ([\d.]+)\)",
            lambda: (str(servers_switches["task_steps"]), g(servers_switches["task_gap"]))),
        servers(r"the pollIntervalMs a task suggests \(default (\d+)\) and how long it is kept after "
            r"creation \(default (\d+)\)",
            lambda: (str(servers_switches["task_poll_ms"]), str(servers_switches["task_ttl_ms"]))),
        servers(r"still answered \(for at most (\w+) second\)", lambda: spoken(int(EOF_GRACE))),
        servers(r"lists ([\d,]+) tools or odd ones, or serves a (\d+)-tool catalogue, or the (\w+) tools of "
            r"ranking", lambda: (g(len(tools_for("many-tools"))), str(len(tools_for("catalogue"))),
            spoken(len(tools_for("ranking"))))),
        servers(r"fan out a (\w+) ways", lambda: {10 ** 6: "million"}.get(
            len(fan_out()["$defs"]["d0"]["anyOf"]) ** (len(fan_out()["$defs"]) - 1), "?")),
        # wherever they are said
        maintainers(r"one definition each in items/__init__\.py: (.*?); evidence\.py", items_by_module),
        *[(doc, r"(?<!extensions )E1[-–]E(\d+)|E1 to E(\d+)", e_range, "optional") for doc in DOCUMENTS],
        *[(doc, r"\b(nine) (?:items|checks|passes)|the (nine)\b", lambda: spoken(nine), "optional")
          for doc in DOCUMENTS],
    ]


@pytest.fixture(scope="module")
def all_claims() -> List[Tuple[Any, ...]]:
    return claims()


def claim_problems(doc: str, text_: str, claims_: Sequence[Tuple[Any, ...]]) -> List[str]:
    """What the document says that the code does not (each statement of CLAIMS)."""
    wrong = []
    for where, pattern, value, *optional in claims_:
        if where != doc:
            continue
        found = list(re.finditer(pattern, text_, re.I))
        if not found and not optional:
            wrong.append(f"{doc}: no longer says anything like {pattern!r} (reworded? reword its claim too)")
        want = value()
        want = tuple(want) if isinstance(want, tuple) else (want,)
        for match in found:
            said = tuple(x for x in match.groups() if x is not None)
            if [s.lower() for s in said] != [str(w).lower() for w in want]:
                wrong.append(f"{doc}: \"{match.group(0)}\": the code says {', '.join(map(str, want))}")
    return wrong


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_number_the_document_states_is_the_one_the_code_has(doc: str, all_claims: List[Tuple[Any, ...]]) -> None:
    wrong = claim_problems(doc, folded(doc), all_claims)
    assert not wrong, "\n".join(wrong)


# -- each kind of check, shown failing on a wrong line ----------------------------------------

WRONG_LINES: List[Tuple[str, str, str, str, Callable[..., None]]] = [
    # (kind, document, a line it holds, the line made wrong, the test that must then fail)
    ("command", "README.md", "`python -m checks --hint 3`", "`python -m checks --hints 3`",
     test_every_command_in_the_document_is_one_its_program_accepts),
    ("usage line", "labs/MAINTAINERS.md", "[--write \\| --guide]", "[--write \\| --guides]",
     test_every_command_in_the_document_is_one_its_program_accepts),
    ("autograding JSON", "labs/INSTRUCTORS.md", '"run": "MOCK=1 .venv/bin/python -m checks 1"',
     '"run": "MOCK=1 .venv/bin/python -m checks 10"', test_every_command_in_the_document_is_one_its_program_accepts),
    ("option alone", "README.md", "(`--all` for all three", "(`--every` for all three",
     test_every_option_the_document_names_alone_is_one_a_program_takes),
    ("environment", "labs/CLIENT.md", "(`MCP_LAB_TOOL_SHARE`;", "(`MCP_LAB_TOOLS_SHARE`;",
     test_every_environment_variable_the_document_names_is_read_by_the_code),
    ("path", "labs/MAINTAINERS.md", "`checks/dev/bench_server.py`", "`checks/dev/bench_servers.py`",
     test_every_path_the_document_names_exists),
    ("name", "labs/GUIDE.md", "`starter/discovery.py`, `list_all_tools`", "`starter/discovery.py`, `list_every_tool`",
     test_every_name_in_inline_code_is_in_the_code),
    ("error code", "servers/README.md", "`-32700`", "`-32799`",
     lambda source: test_every_error_code_the_documents_name_is_one_the_code_uses(source)),
    ("trace sample", "labs/GUIDE.md", "client -> notes    tools/list #4", "client -> notes    tools/list #3",
     test_the_guides_trace_of_item_2_is_what_the_command_prints),
    ("faults line", "labs/MAINTAINERS.md", "faults: 36 scenarios run", "faults: 35 scenarios run",
     test_the_fault_suites_summary_line_is_the_one_it_prints),
    ("interop line", "labs/MAINTAINERS.md", "9/9 calls and scripts answered", "6/6 calls answered",
     test_the_interop_summary_line_is_the_one_it_prints),
    ("bench table", "labs/MAINTAINERS.md", "solution/SDK 2.30x", "solution/SDK 2.31x",
     test_the_bench_table_is_what_the_bench_prints_for_the_documents_measurements),
    ("demo", "labs/GUIDE.md", "makes five calls in one script", "makes six calls in one script",
     test_the_code_mode_demo_runs_as_documented_and_does_what_the_guide_says),
    ("agent loop", "labs/GUIDE.md", "sent to notes / read_note`", "sent to notes / read_notes`",
     test_the_acceptance_criterion_for_the_agent_loop_is_what_it_prints),
    ("hostile table", "labs/MAINTAINERS.md", "| malformed progress notifications |", "| malformed progress |",
     test_the_hostile_table_has_a_row_for_each_hostile_scenario_named_as_the_suite_names_it),
    ("switches table", "servers/README.md", "| `--inline` |", "| `--in-line` |",
     test_the_switches_table_names_every_switch_and_every_choice_of_the_servers),
    ("switch variable", "servers/README.md", "| `--delay S` | `MCP_LAB_DELAY` |", "| `--delay S` | `MCP_LAB_WAIT` |",
     test_the_switches_table_gives_each_switch_the_variable_its_help_names_and_the_server_reads_it),
    ("layout", "labs/MAINTAINERS.md", "param_headers (Mcp-Param-*", "headers (Mcp-Param-*",
     lambda: test_the_layout_names_every_file_of_each_folder("starter/")),
    ("CI", "labs/MAINTAINERS.md", "three self-checks", "two self-checks", test_maintainers_says_what_ci_runs),
    ("exercise table", "labs/GUIDE.md", "`starter/naming.py`, `model_tool_name` |",
     "`starter/naming.py`, `tool_name` |",
     test_the_walkthroughs_exercise_table_is_the_exercises_of_the_checks),
    ("extension heading", "labs/GUIDE.md", "(E4: `starter/meta_tools.py`, `rank`)",
     "(E4: `starter/meta_tools.py`, `ranks`)",
     test_each_extension_section_names_the_file_and_function_the_checks_judge),
    ("JSON fields", "README.md", "(number, id, title,", "(number, ident, title,",
     test_the_readmes_json_fields_are_in_the_reports_schema),
    ("config keys", "labs/CLIENT.md", "`inheritEnv`, `protocolVersion`", "`inheritEnv`, `protocolVersions`",
     test_clients_list_of_server_keys_is_the_configs),
    ("mutation record", "labs/INSTRUCTORS.md", "270 of 270 non-equivalent", "271 of 271 non-equivalent",
     test_the_recorded_mutation_run_is_of_todays_regions_catalogue_and_equivalents),
    ("number", "README.md", "four marked exercise points", "five marked exercise points",
     test_every_number_the_document_states_is_the_one_the_code_has),
    ("number in a table", "servers/README.md", "E3 uses 60 and 0.05", "E3 uses 32 and 0.05",
     test_every_number_the_document_states_is_the_one_the_code_has),
    ("statement gone", "labs/CLIENT.md", "after 5 s of silence", "after a while of silence",
     test_every_number_the_document_states_is_the_one_the_code_has),
    ("option in no document", "labs/MAINTAINERS.md", "; `--no-npm` leaves", "; leaves",
     lambda: test_every_option_of_the_labs_programs_is_in_a_document("checks.dev.interop")),
    ("CI options", "labs/MAINTAINERS.md", "`checks.dev.conformance --client-only --ours-only`",
     "`checks.dev.conformance --client-only`", test_maintainers_says_what_ci_runs),
    ("switch choices", "servers/README.md", "| `--auth [ask\\|auto]` |", "| `--auth [ask]` |",
     test_the_switches_table_names_every_switch_and_every_choice_of_the_servers),
    ("layout of solution/", "labs/MAINTAINERS.md", "bill (usage kept whole", "bills (usage kept whole",
     lambda: test_the_layout_names_every_file_of_each_folder("solution/")),
    ("oauth keys", "labs/CLIENT.md", '{"redirectPort": ...}', '{"redirect_port": ...}',
     test_clients_list_of_server_keys_is_the_configs),
    ("bill sample", "labs/CLIENT.md", "billed as 22,295 plain", "billed as 22,296 plain",
     test_the_bill_line_in_client_is_what_ask_prints_for_its_tokens),
    ("cost figures", "labs/CLIENT.md", "still reads 0.97 of", "still reads 0.98 of",
     test_the_cost_figures_the_documents_quote_are_the_ones_rows_8_and_9_count),
]


@pytest.mark.parametrize("kind, doc, right, wrong, check", WRONG_LINES, ids=[w[0] for w in WRONG_LINES])
def test_each_kind_of_check_fails_on_a_wrong_line(kind: str, doc: str, right: str, wrong: str,
                                                 check: Callable[..., None], monkeypatch: pytest.MonkeyPatch,
                                                 request: pytest.FixtureRequest) -> None:
    original = docs.text
    assert right in original(doc), f"{doc} no longer holds {right!r}: pick another line to make wrong"
    wanted = inspect.signature(check).parameters
    # the fixtures first, from the documents as they are (the runs are shared by the whole session)
    arguments = {name: doc if name == "doc" else request.getfixturevalue(name) for name in wanted}
    monkeypatch.setattr(docs, "text", lambda name: original(name).replace(right, wrong, 1) if name == doc
                        else original(name))
    with pytest.raises(AssertionError):
        check(**arguments)
