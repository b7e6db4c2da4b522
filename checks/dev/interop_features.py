"""Interop beyond tools, against server-everything (`python -m checks.dev.interop` runs
these when npm is there): the client lists and reads its resources, gets its prompts
and completes an argument, starts an agent run from a prompt, answers its sampling
request after two approvals typed on standard input (`--sampling ask`), shows its log
messages on stderr, and reads a resource link from a tool result through the model's
`read_resource` tool. Each case prints one line; the failed ones are returned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import anyio

from checks.target import ROOT

LIMIT = 120  # seconds for one client run; a first start of npx under load is the slow part


def client(config: Path, *args: str, stdin: str = "") -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "solution", *args, "--config", str(config), "--audit", ""],
                          input=stdin, capture_output=True, text=True, timeout=LIMIT, cwd=ROOT,
                          env={**os.environ, "MOCK": "1"})


def cases(config: Path) -> List[Tuple[str, Callable[[], bool]]]:
    def resources() -> bool:
        listed = json.loads(client(config, "resources", "everything", "--json").stdout)["everything"]
        first = listed["resources"][0]["uri"]
        read = client(config, "read", "everything", first)
        return bool(listed["templates"]) and read.returncode == 0 and len(read.stdout.splitlines()) > 1

    def prompts() -> bool:
        names = [p["name"] for p in json.loads(client(config, "prompts", "--json").stdout)["everything"]]
        values = client(config, "complete", "everything/completable-prompt", "department").stdout.split()
        # --no: the mock model's calls are declined, so the run reaches no server but this one's prompt
        run = client(config, "prompt", "everything/args-prompt", "city=Paris", "--no", "--json")
        question = json.loads(run.stdout)["question"] if run.returncode in (0, 1) else ""
        return "args-prompt" in names and len(values) > 1 and "Paris" in question

    def sampling() -> bool:
        done = client(config, "call", "mcp__everything__trigger-sampling-request",
                      json.dumps({"prompt": "Say hi", "maxTokens": 50}), "--yes", "--sampling", "ask",
                      stdin="y\ny\n")
        return done.returncode == 0 and "(mock) A reply to" in done.stdout and "asks to use your model" in done.stderr

    def declined() -> bool:
        done = client(config, "call", "mcp__everything__trigger-sampling-request",
                      json.dumps({"prompt": "Say hi", "maxTokens": 50}), "--yes", "--sampling", "ask", stdin="n\n")
        return "(mock)" not in done.stdout and "declined" in (done.stdout + done.stderr)

    return [("resources listed and one read", resources), ("prompts, a completion and a run from a prompt", prompts),
            ("sampling answered after two approvals", sampling), ("sampling declined at the first question", declined),
            ("log messages and a resource link read by read_resource", lambda: anyio.run(in_process, config))]


async def in_process(config: Path) -> bool:
    """Through the library: logs at debug level arrive on the log, and a link is read for the model."""
    from solution.host.aggregator import Aggregator
    from solution.config import load_config
    from solution.lifecycle.server_log import ServerLog

    lines: List[str] = []
    heard = anyio.Event()

    def write(key: str, line: str) -> None:
        lines.append(line)
        heard.set()
    async with Aggregator(load_config(config), request_timeout=60) as tools:
        tools.connector.log_level = "debug"
        tools.server_log = ServerLog(write, "debug", requested=True)
        await tools.refresh()
        entry = tools.find("everything", "toggle-simulated-logging")
        links = tools.find("everything", "get-resource-links")
        if entry is None or links is None:
            return False
        await tools.call(entry.model_name, {})
        with anyio.move_on_after(30):  # it logs every 5 s
            await heard.wait()
        linked: Dict[str, Any] = await tools.call(links.model_name, {"count": 2})
        uri = next(b["uri"] for b in linked["content"] if b.get("type") == "resource_link")
        read = await tools.call("read_resource", {"uri": uri})
    print(f"    first log line: {lines[0].strip()[:100] if lines else '(none)'}; read {uri}: "
          f"{'ok' if not read.get('isError') else read}")
    return bool(lines) and all(line.startswith("[everything log ") for line in lines) and not read.get("isError")


def run_cases(config: Path) -> List[str]:
    failed = []
    for title, case in cases(config):
        try:
            ok = case()
        except Exception as exc:  # noqa: BLE001 - a case that breaks is a failed case, said in one line
            print(f"  everything: {title}: FAILED ({type(exc).__name__}: {str(exc)[:200]})")
            failed.append(title)
            continue
        print(f"  everything: {title}: {'ok' if ok else 'FAILED'}")
        failed += [] if ok else [title]
    return failed
