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

The kinds of check:
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
  decides (counts, ratios, targets, verdicts, layout) is what is compared.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
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
from checks.tests.documents import DOCUMENTS, Command, Scratch, folded, g, spoken

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


def tracked() -> List[str]:
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
            and not {"__pycache__", "build", ".git", ".interop"} & set(p.relative_to(ROOT).parts)
            and ".egg-info" not in str(p)]


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
def runs(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """What the documented commands print, each run once as written (MOCK=1 and a
    log of our own added where the reader's shell would have them)."""
    scratch_dir = tmp_path_factory.mktemp("runs")
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
        from checks.dev.code_tokens import demo_tokens
        found["tokens"] = anyio.run(demo_tokens)  # bench row 7, counted meanwhile
        for name, process in started.items():
            out, err = process.communicate(timeout=RUN_LIMIT)
            found[name] = Ran(out, err, process.returncode)
    finally:
        for process in started.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
    return found


def timeless(lines: Sequence[str]) -> List[str]:
    """Trace lines with their times (which differ on every run) left out."""
    return [re.sub(r"^\+\s+[\d.]+ ms", "+ … ms", line.strip()) for line in lines if line.strip().startswith("+")]


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
    bench.main, and the code-mode row is counted, so it is the same anywhere."""
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
    contender = {"solution": "ours"}  # row 1's name for the reference client; row 5's is its target
    with mock.patch.multiple(bench, interleaved=lambda runs_, reps: {n: of(contender.get(n, n)) for n in runs_},
                             in_flight=in_flight, refresh_time=refresh_time, demo_tokens=demo_tokens,
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
