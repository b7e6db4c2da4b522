"""The numbers CLIENT, MAINTAINERS and servers/README state, and those said in
every document (doc_claims.py has the form and README's, the guide's and
INSTRUCTORS').
"""

from __future__ import annotations

import inspect
import math
import os
from typing import Any, List, Tuple
from unittest import mock

from checks.target import ROOT
from checks.tests import doc_programs as progs
from checks.tests.documents import DOCUMENTS, g, listed, spoken

from checks.tests.doc_claims import (build_notes, discovery_limits, e_range, interop_servers, items_by_module,
                                     long_names, meta_tools, notes_pages, endless_pages, source_number, stating, tool_names)


def reference_claims() -> List[Tuple[Any, ...]]:
    import solution.commands.options as cli_options
    from checks.dev import conformance
    from checks.dev.billing import LOOKBACK, MAX_BREAKPOINTS
    from checks.dev.cost import QUESTION_CALLS, threshold
    from checks.dev.interop import NPM, PYPI
    from checks.dev.load import STARTER_GREEN
    from checks.harness import PARALLEL
    from checks.items import ITEMS
    from checks.items.extensions import LONG_WORK_GAP, LONG_WORK_STEPS
    from servers.misbehave import fan_out, tools_for
    from servers.rpc import METHOD_NOT_FOUND
    from servers.stdio import EOF_GRACE, HOLD_LIMIT
    from solution import model_apis
    from solution.commands.bill import ANTHROPIC_READ, ANTHROPIC_WRITE, OPENAI_READ
    from solution.host.breaker import COOL_DOWN, THRESHOLD
    from solution.host.config import HostServerSpec
    from solution.discovery import MAX_PAGES, PROBE_TIMEOUT
    from solution.remote.http_client import MAX_MESSAGE_CONNECTIONS, MAX_REQUEST_CONNECTIONS
    from solution.model_apis import HttpSettings
    from solution.jsonrpc import MAX_DEPTH
    from solution.meta_tools import CONTEXT_WINDOW, TOOL_SHARE
    from solution.remote.oauth_flow import MAX_AUTHORIZATIONS
    from solution.host.patterns import MATCH_SECONDS, MAX_STEPS
    from solution.stdio_client import BASE_ENV
    from solution.code_mode.sandbox import Limits
    from solution.lifecycle.server_requests import ANSWERING, REFUSING
    from solution.remote.sign_in import InBrowser
    from solution.stdio_client import DEFAULT_TIMEOUT, MAX_LINE_BYTES, STDERR_TAIL_BYTES
    from solution.remote.tokens import CLOCK_STEP, EXPIRY_MARGIN, EXPIRY_SHARE, default_path, renewal_margin
    nine, meta = len(ITEMS), meta_tools()
    max_steps = cli_options.parse(["ask", "q"], "x").max_steps
    fraction = {0.1: "tenth", 0.5: "half", 1.25: "quarter"}  # as the documents say them
    with mock.patch.dict(os.environ, {"HOME": "/home/you"}):  # restores the whole environment after
        os.environ.pop("XDG_CONFIG_HOME", None)
        tokens_file = "~/" + str(default_path().relative_to("/home/you"))
    servers_switches = vars(progs.parse("servers.notes", []))
    load = vars(progs.parse("checks.dev.load", []))
    task_timeout = HostServerSpec("a", "x").task_timeout
    client, maintainers, servers = (stating(doc) for doc in DOCUMENTS[3:])
    return [
        # labs/CLIENT.md
        client(r"ANTHROPIC_MODEL, default ([\w.-]+);", lambda: model_apis.ANTHROPIC_DEFAULT_MODEL),
        client(r"OPENAI_MODEL, default ([\w.-]+)\)", lambda: model_apis.OPENAI_DEFAULT_MODEL),
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
                model_apis.OPENAI_DEFAULT_MODEL)),
        client(r"written at ([\d.]+), then read at ([\d.]+) every turn",
            lambda: (g(ANTHROPIC_WRITE), g(ANTHROPIC_READ))),
        client(r"blocks marked cache_control \(at most (\w+)\)", lambda: spoken(MAX_BREAKPOINTS)),
        client(r"an earlier entry only (\d+) blocks back", lambda: str(LOOKBACK)),
        client(r"Why the meta-tools start at ([\d,]+) tokens", lambda: g(threshold())),
        client(r"(\w+) turns a call, with a search listing", lambda: spoken(len(meta))),
        client(r"the full table's fewer turns \(a (\w+) as many\)",
            lambda: {3: "third", 2: "half"}.get(len(meta), "?")),
        client(r"the default limit of (\d+) turns \(--max-steps\) lets the meta-tools make only (\w+) calls",
            lambda: (str(max_steps), spoken((max_steps - 1) // len(meta)))),  # a turn a tier, and the answer's
        client(r"The sign-in waits at most (\d+) s",
            lambda: g(inspect.signature(InBrowser).parameters["timeout"].default)),
        client(r"signs in to one server at most (\d+) times in a row", lambda: str(MAX_AUTHORIZATIONS)),
        client(r"once it is in the last (\w+) of its life, or its last (\w+) if that is longer \(servers count "
               r"whole seconds\), never more than (\w+) of it nor more than its last (\d+) s: a 5-second token is "
               r"used for ([\d.]+) s", lambda: (fraction[EXPIRY_SHARE], {1.0: "second"}.get(CLOCK_STEP, "?"),
                                               fraction[0.5], g(EXPIRY_MARGIN), g(5 - renewal_margin(5)))),
        client(r"Tokens live in one file, (\S+) \(--tokens-file FILE\)", lambda: tokens_file),
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
        maintainers(r"fixture; the other (\w+) read fixed names", lambda: spoken(len(conformance.NAMED_SCENARIOS))),
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
            lambda: g(vars(progs.parse("servers.misbehave", ["--scenario", "noise"]))["size_mb"])),
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
        servers(r"the server serves (\d+) pages and answers request (\d+) with (-\d+)", endless_pages),
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
        *[(doc, r"(?<!extensions )(?:E1[-–]E(\d+)|E1 to E(\d+))", e_range, "optional") for doc in DOCUMENTS],
        *[(doc, r"\b(nine) (?:items|checks|passes)|the (nine)\b", lambda: spoken(nine), "optional")
          for doc in DOCUMENTS],
    ]
