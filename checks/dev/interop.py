"""`python -m checks.dev.interop`: the reference client against real servers from
the package registries, all in one config.

    python -m checks.dev.interop [--no-npm] [--cpus 0,1]

The first run installs them under `.interop/` (ignored by git; network needed
once): `mcp-server-time`, `mcp-server-git` and `mcp-server-fetch` from PyPI in
one virtual environment; a small server on `mcp==1.8.1` (`OLD_SDK_SERVER`,
an SDK that cannot bear unknown methods) in another; and,
where `npm` exists, four `@modelcontextprotocol` servers (everything, memory,
filesystem, sequential-thinking). Then it runs `python -m solution tools
--json` with all of them at once (pinned to two CPUs where `taskset` exists),
reports how long that took and which era each server speaks, calls a tool on
each but fetch and sequential-thinking (and, as a task, a second on
everything), type-checks every server's code-mode stubs together in the sandbox,
runs one code-mode question, then (with npm) the cases beyond tools against
server-everything (interop_features.py: resources, prompts, completions,
sampling after approvals, log messages, a resource link read for the model),
and exits 1 if any server is offline or any call, script or case fails. None of
this is needed by the core tests.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from checks.target import ROOT

HOME = ROOT / ".interop"
PYPI = ("mcp-server-time", "mcp-server-git", "mcp-server-fetch")
OLD_SDK = ("mcp==1.8.1", "pydantic<2.11")
NPM = ("@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-memory",
       "@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-sequential-thinking")
LIMIT = 600  # seconds for an install or a run; only a broken network reaches it
# Written to .interop/ and run by the old SDK's interpreter (it does not import here).
OLD_SDK_SERVER = '''"""A server on mcp 1.8.1, as many published servers still pin: it knows only
the initialize handshake, and its request model rejects methods it does not know."""
from mcp.server.fastmcp import FastMCP

server = FastMCP("old-sdk")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


server.run()
'''


def venv(name: str, packages: Tuple[str, ...]) -> Path:
    """A virtual environment under .interop/ with `packages`, made once."""
    place = HOME / name
    python = place / "bin" / "python"
    if not (place / "ready").exists():
        subprocess.run([sys.executable, "-m", "venv", str(place)], check=True, timeout=LIMIT)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        *packages], check=True, timeout=LIMIT)
        (place / "ready").write_text("")
    return place / "bin"


def npm_servers() -> Optional[Path]:
    place = HOME / "npm"
    if shutil.which("npm") is None:
        return None
    if not (place / "ready").exists():
        place.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(place), *NPM], check=True, timeout=LIMIT)
        (place / "ready").write_text("")
    return place / "node_modules" / ".bin"


def servers(with_npm: bool) -> Tuple[Dict[str, Any], List[Tuple[str, str, Dict[str, Any]]]]:
    """The config, and for each alias a tool to call with its arguments."""
    current, old = venv("pypi", PYPI), venv("mcp-1.8.1", OLD_SDK)
    (HOME / "old_sdk_server.py").write_text(OLD_SDK_SERVER)
    config: Dict[str, Any] = {
        "time": {"command": str(current / "mcp-server-time"), "args": ["--local-timezone", "UTC"]},
        "git": {"command": str(current / "mcp-server-git"), "args": ["--repository", str(ROOT)]},
        "fetch": {"command": str(current / "mcp-server-fetch")},
        "oldsdk": {"command": str(old / "python"), "args": [str(HOME / "old_sdk_server.py")]},
    }
    calls: List[Tuple[str, str, Dict[str, Any]]] = [
        ("time", "get_current_time", {"timezone": "UTC"}), ("git", "git_status", {"repo_path": str(ROOT)}),
        ("oldsdk", "add", {"a": 2, "b": 3})]
    bin_dir = npm_servers() if with_npm else None
    if bin_dir is not None:
        config.update({
            "everything": {"command": str(bin_dir / "mcp-server-everything"), "args": ["stdio"]},
            "memory": {"command": str(bin_dir / "mcp-server-memory")},
            "files": {"command": str(bin_dir / "mcp-server-filesystem"), "args": [str(ROOT / "labs")]},
            "thinking": {"command": str(bin_dir / "mcp-server-sequential-thinking")}})
        calls += [("everything", "echo", {"message": "hi"}), ("memory", "read_graph", {}),
                  ("files", "list_directory", {"path": str(ROOT / "labs")}),
                  # taskSupport "required" (the handshake era): called with params.task, polled,
                  # finished with tasks/result; no terminal here, so no question is asked
                  ("everything", "simulate-research-query", {"topic": "tides", "ambiguous": True})]
    for entry in config.values():
        entry["timeout"] = 120  # a first start under load can be slow; only a broken server waits for it
    return {"mcpServers": config}, calls


def client(args: List[str], cpus: str) -> "subprocess.CompletedProcess[str]":
    pin = ["taskset", "-c", cpus] if cpus and shutil.which("taskset") else []
    return subprocess.run([*pin, sys.executable, "-m", "solution", *args, "--audit", ""], capture_output=True,
                          text=True, timeout=LIMIT, cwd=ROOT, env={**os.environ, "MOCK": "1"})


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checks.dev.interop", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-npm", action="store_true", help="leave out the npm servers")
    parser.add_argument("--cpus", default="0,1", help="CPUs to pin the client to ('' for none)")
    options = parser.parse_args(argv)
    config, calls = servers(not options.no_npm)
    path = HOME / "servers.json"
    path.write_text(json.dumps(config, indent=1))
    began = time.perf_counter()
    done = client(["tools", "--json", "--config", str(path)], options.cpus)
    took = time.perf_counter() - began
    if done.returncode != 0:
        print(f"interop: tools failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
        return 1
    table = json.loads(done.stdout)
    for alias, server in sorted(table["servers"].items()):
        print(f"  {alias:<11} online  {server['era']:<8} {server['protocol_version']:<11} {server['name']}")
    for alias, why in table["offline"].items():
        print(f"  {alias:<11} OFFLINE {why[:120]}")
    failed = []
    for alias, tool, arguments in calls:
        name = next((t["model_name"] for t in table["tools"] if t["alias"] == alias and t["original_name"] == tool),
                    None)
        alone = HOME / f"{alias}.json"  # one server per call: the table above already had them all at once
        alone.write_text(json.dumps({"mcpServers": {alias: config["mcpServers"][alias]}}))
        result = client(["call", name or f"mcp__{alias}__{tool}", json.dumps(arguments), "--yes", "--json",
                         "--config", str(alone)], options.cpus)
        ok = result.returncode == 0
        print(f"  call {alias}/{tool}: {'ok' if ok else 'FAILED ' + (result.stdout + result.stderr)[-160:]}")
        failed += [] if ok else [alias]
    failed += code_mode(path, table, options.cpus)
    cases = 2 + len(calls)
    if "everything" in config["mcpServers"]:  # resources, prompts, sampling, logs, links (interop_features.py)
        from checks.dev.interop_features import cases as feature_cases, run_cases
        cases += len(feature_cases(HOME / "everything.json"))
        failed += run_cases(HOME / "everything.json")
    online = len(table["servers"])
    print(f"interop: {online}/{len(config['mcpServers'])} servers online, `tools` took {took:.1f} s; "
          f"{cases - len(failed)}/{cases} calls, scripts and cases answered")
    return 0 if online == len(config["mcpServers"]) and not failed else 1


def code_mode(path: Path, table: Dict[str, Any], cpus: str) -> List[str]:
    """Code mode on real schemas: every server's stubs, imported together, must
    pass the sandbox's type check; and one script calls the time server."""
    if importlib.util.find_spec("pydantic_monty") is None:
        print("  code mode: FAILED, the sandbox is not installed (pip install -e '.[codemode]')")
        return ["code mode"]
    modules = sorted({row["stub_module"] for row in stub_rows(path, cpus)})
    failed = []
    script = HOME / "import_all.py"
    script.write_text("".join(f"import {m}\n" for m in modules) + f"print({len(modules)}, 'modules')\n")
    imported = client(["script", str(script), "--config", str(path)], cpus)
    print(f"  code mode: stubs of {len(modules)} servers type-check together: "
          f"{'ok' if imported.returncode == 0 else 'FAILED ' + imported.stdout[-300:]}")
    failed += [] if imported.returncode == 0 else ["stubs"]
    asked = client(["ask", "--code-mode", "--yes", "--config", str(HOME / "time.json"),
                    'Get the current time for timezone "UTC"'], cpus)
    ok = asked.returncode == 0 and "-> ok" in asked.stdout and "'timezone': 'UTC'" in asked.stdout
    print(f"  code mode: a script calls time/get_current_time: {'ok' if ok else 'FAILED ' + asked.stdout[-300:]}")
    return failed + ([] if ok else ["code mode ask"])


def stub_rows(path: Path, cpus: str) -> List[Dict[str, str]]:
    """The stub module of each server, from `stubs` (its header lines)."""
    done = client(["stubs", "--config", str(path)], cpus)
    rows = []
    for line in done.stdout.splitlines():
        if line.startswith("# ---- ") and ".pyi (server '" in line:
            rows.append({"stub_module": line[len("# ---- "):line.index(".pyi")]})
    return rows


if __name__ == "__main__":
    sys.exit(main())
