"""The documents' sample outputs are what the code prints: the documented
commands' output as run (doc_runs.py), and the fault suite's, the interop run's
and the bench's printed by their real main with the document's measurements
put in, so that what the code decides (counts, ratios, targets, verdicts,
layout) is what is compared.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import subprocess
import types
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple
from unittest import mock

import pytest

from checks.tests import doc_runs
from checks.tests import documents as docs
from checks.tests.documents import folded, g, spoken

from checks.tests.doc_claims import meta_tools, source_number


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


# What a command's comment promises, beyond running: checked on what it printed.
PROMISED: Dict[str, Callable[[Any], bool]] = {
    "python -m solution watch notes note://n-1 --count 3":
        lambda ran: ran.stdout.splitlines() == ["updated: notes note://n-1"] * 3,
    "python -m solution complete ": lambda ran: "paging" in ran.stdout.split(),
    "python -m solution call mcp__notes__add_note ": lambda ran: any(
        line.startswith("[notes log info notes]") for line in ran.stderr.splitlines()) and "[notes log" not in ran.stdout,
    "python -m solution script my_script.py": lambda ran: "    > Timeouts" in ran.stdout.splitlines(),
    "python servers/notes.py --http": lambda ran: "ready" in ran.stderr,
}


def test_every_command_of_the_client_and_the_fixtures_runs_against_them(runs: Dict[str, Any]) -> None:
    """Each reading with no placeholder, run as written (doc_runs.py), exits 0 with no traceback
    and does what its comment promises, unless its comment says it needs a key, a browser or
    a remote server."""
    runnable, _ = doc_runs.documented_ours()
    assert any(c.words[3:4] == ("watch",) for c in runnable), "the reader found no client commands"
    wrong = []
    for command in runnable:
        ran = runs["commands"].get(command.where)
        if ran is None:
            wrong.append(f"{command.where}\n    not run (is it new since this session's runs began?)")
            continue
        promised = [check for start, check in PROMISED.items() if command.text.startswith(start)]
        if ran.status != 0 or "Traceback" in ran.stderr or not all(check(ran) for check in promised):
            said = "\n      ".join((ran.stdout + ran.stderr).strip().splitlines()[-4:])
            wrong.append(f"{command.where}\n    exit {ran.status}:\n      {said}")
    assert not wrong, "documented commands that do not run as shown:\n" + "\n".join(wrong)


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
    walls = {t: iter([0.0, *of(t).values]) for t in ("solution", "starter")}  # the first run is not counted

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
    from solution.commands.transcript import usage_line
    sample = docs.block_after("labs/CLIENT.md", "The bill: `ask`'s last line")
    counts = re.search(r"= ([\d,]+) plain \+ ([\d,]+) cache writes \+ ([\d,]+) cache reads; output ([\d,]+)",
                       sample.text)
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


def captured_requests(block: str) -> List[Tuple[List[str], str]]:
    """A capture's requests: (the request line and headers, the body's line or "")."""
    found = []
    for exchange in re.split(r"\n\n(?=(?:POST|GET|DELETE) )", "\n\n" + block.strip()):
        head, _, rest = exchange.strip().partition("\n\n")
        if re.match(r"(POST|GET|DELETE) ", head):
            found.append((head.splitlines(), rest.splitlines()[0] if rest and rest[0] == "{" else ""))
    return found


@pytest.mark.parametrize("era, phrase", [("current", "The 2026-07-28 era: no session"),
                                         ("legacy", "The 2025-11-25 era (pinned with")])
def test_each_captured_request_carries_the_headers_the_client_sends(era: str, phrase: str) -> None:
    """The capture less what MAINTAINERS says it leaves out (Host, lengths) is what
    HttpClient's headers are for that message in that era, header by header."""
    from solution.host.config import HostServerSpec
    from solution.config import ServerSpec
    from solution.remote.http_client import HttpClient
    sample = docs.block_after("labs/MAINTAINERS.md", phrase)
    requests = captured_requests(sample.text)
    assert requests, f"labs/MAINTAINERS.md:{sample.line}: no requests in the capture"
    session = re.search(r"mcp-session-id: (\w+)", sample.text, re.I)
    for head, body in requests:
        client = HttpClient(HostServerSpec("sdk", "", url="http://127.0.0.1:8000/mcp"))
        client.era = era
        method = re.search(r'"method":"([^"]+)"', body)
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method.group(1)} if method else {}
        request_id = re.search(r'"id":(\d+)', body)
        if request_id:
            message["id"] = int(request_id.group(1))
        name = re.search(r'"params":\{"name":"([^"]+)"', body)
        if name:
            message["params"] = {"name": name.group(1), "arguments": {}}
        initialize = message.get("method") == "initialize"
        client.session_id = None if initialize or session is None else session.group(1)
        with mock.patch.object(HttpClient, "negotiated", None if initialize else "2025-11-25"):
            # _headers is where every request's headers are made (pure: the message and the era)
            sent = [f"{k}: {v}" for k, v in client._headers(message, body=bool(body))]
        assert head[1:] == sent, f"labs/MAINTAINERS.md:{sample.line}: for {head[0]} {body[:60]} the client sends {sent}"
