"""The numbers the documents state, each as (document, the statement with its
numbers as groups, what the code says), and the helpers that read them from the
code. Here README, the guide and INSTRUCTORS; doc_claims_reference.py the rest.
"""

from __future__ import annotations

import io
import json
import os
import re
from typing import Any, Callable, Dict, List, Tuple
from unittest import mock

from checks.target import ROOT
from checks.tests import doc_programs as progs
from checks.tests import documents as docs
from checks.tests.documents import DOCUMENTS, g, listed, spoken


def source_number(path: str, pattern: str) -> str:
    found = re.search(pattern, (ROOT / path).read_text(encoding="utf-8"))
    assert found is not None, f"{path} no longer has {pattern!r}"
    return found.group(1)


def notes_pages() -> str:
    from servers.paging import page_plan
    from servers.notes import build
    server = build()
    plan = page_plan(len(server.tools), server.page_size or len(server.tools))
    assert [] in plan[:-1], "the note library no longer hands out an empty page before the last"
    return spoken(server.page_size or 0)


def endless_pages() -> Tuple[str, str, str]:
    """What the endless lister does, asked as a client would: the pages it serves, the request
    it refuses and the error code (counted, not read from a constant, so an off-by-one shows)."""
    from servers.notes import build
    from servers.rpc import RpcError
    server = build()
    server.paging = "endless"
    params: Dict[str, Any] = {}
    for served in range(1000):
        try:
            page = server.list_tools(params)
        except RpcError as exc:
            return str(served), str(served + 1), str(exc.code)
        params = {"cursor": page["nextCursor"]}
    raise AssertionError("the endless lister served 1000 pages without refusing one")


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
    help_ = next(a.help or "" for a in progs.parser_of("checks")._actions if "--extensions" in a.option_strings)
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


def meta_tools() -> Tuple[str, ...]:
    """The names of the tools a model gets in place of a table too big for its context."""
    from solution.host.aggregator import Aggregator
    from solution.config import config_of
    from solution.meta_tools import MetaTools
    return tuple(t["name"] for t in MetaTools(Aggregator(config_of([]))).model_tools())


def learner_claims() -> List[Tuple[Any, ...]]:
    from checks.dev.billing import MIN_CACHED
    from checks.dev.cost import threshold
    from checks.dev.load import STARTER_GREEN
    from checks.dev.mutants.catalogue import CATALOGUE
    from checks.dev.mutants.regions import REGIONS
    from checks.dev.pytest_setup import pytest_xdist_auto_num_workers
    from checks.exercises import EXERCISES
    from checks.harness import ITEM_LIMIT, Verdict
    from checks.hints import HINTS
    from checks.isolation import EVENT_CAP
    from checks.items import ITEMS
    from checks.items.extensions import LONG_WORK_GAP, LONG_WORK_STEPS, LONG_WORK_TIMEOUT
    from checks.items.offline import SLOW_DISCOVERY_LIMIT, SLOW_REPLY
    from checks.items.tasks import FIELDS
    from checks.items.wire import ENDLESS_LIMIT
    from checks.gradebook_row import MAX_BYTES, MAX_DEPTH, MAX_ITEMS
    from checks.page_parts import FOLD_AFTER, KEEP, MAX_ROWS
    from checks.report import MEANING, summary
    from checks.style import Style
    from checks.trace import WIRE_ROWS, WIRE_TAIL, WIRE_TEXT
    from checks.typecount import TypeCount
    from servers.misbehave import tools_for
    from servers.over_http import RESUME_RETRY_MS
    from servers.tickets import PRIORITIES, PRIORITY_QUESTION
    from solution.commands.bill import ANTHROPIC_READ, ANTHROPIC_WRITE
    from solution.host.breaker import THRESHOLD
    from solution.host.config import HostServerSpec
    from solution.meta_tools import CONTEXT_WINDOW, TOOL_SHARE
    from solution.naming import MAX_MODEL_NAME
    from solution.stdio_client import DEFAULT_TIMEOUT
    nine, meta = len(ITEMS), meta_tools()
    fraction = {0.1: "tenth", 0.5: "half", 1.25: "quarter"}  # as the guide says them: 1.25 is a quarter more
    servers_switches = vars(progs.parse("servers.notes", []))
    load = vars(progs.parse("checks.dev.load", []))
    task_timeout = HostServerSpec("a", "x").task_timeout
    fine = Style(io.StringIO(), {"NO_COLOR": "1"})
    readme, guide, instructors = (stating(doc) for doc in DOCUMENTS[:3])
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
        readme(r"after the nine, items E1–E11: ([a-z ,]+) \(labs/GUIDE\.md",
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
        guide(r"lists (\w+) servers, and two of them \(notes and archive\)",
            lambda: spoken(len(json.loads((ROOT / "labs" / "servers.json").read_text())["mcpServers"]))),
        guide(r"The first run shows (\w+) of (\w+) items passing and ends with exit status (\d)",
            lambda: (spoken(len(STARTER_GREEN)), spoken(nine), "1")),
        guide(r"items ([\d, and]+) are red because the four", lambda: listed(set(range(1, nine + 1)) - STARTER_GREEN)),
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
        guide(r"it calls a ([\d.]+) s job with a ([\d.]+) s timeout that reports every ([\d.]+) ms",
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
        guide(r"a read at a (\w+) of the price and a write at a (\w+) more; OpenAI by itself, once the prefix "
            r"reaches ([\d,]+) tokens", lambda: (
                fraction.get(ANTHROPIC_READ, g(ANTHROPIC_READ)), fraction.get(ANTHROPIC_WRITE, g(ANTHROPIC_WRITE)),
                g(MIN_CACHED))),
        guide(r"the switch sits at the size where they break even, ([\d,]+) tokens", lambda: g(threshold())),
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
        instructors(r"at most (\d+) MiB each, nested at most (\d+)\s+levels and listing at most (\d+) items",
            lambda: (g(MAX_BYTES / 2 ** 20), str(MAX_DEPTH), str(MAX_ITEMS))),
    ]
