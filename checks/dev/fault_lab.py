"""What every fault scenario stands on: journalled server specs, the healthy
note library beside the broken server, and the shape of a scenario.

Used by the fault suite (`checks.dev.faults`) and its hostile half (`checks.dev.hostile`).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional

from checks.target import ROOT
from solution.host.aggregator import Aggregator
from solution.config import ServerSpec, config_of

SERVERS = ROOT / "servers"
GENEROUS = 30.0  # the healthy server's limits: only a wrong path ever waits for them


class FaultLab:
    """Journalled server specs for one scenario, and the pids they reported."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.journals: List[Path] = []

    def spec(self, alias: str, server: str, *args: str, timeout: Optional[float] = None) -> ServerSpec:
        journal = self.directory / f"{alias}-{len(self.journals)}.jsonl"
        self.journals.append(journal)
        return ServerSpec(alias, sys.executable, (str(SERVERS / f"{server}.py"), "--journal", str(journal),
                                                  *args), {}, str(ROOT), timeout)

    def entries(self) -> List[Dict[str, Any]]:
        found = []
        for path in self.journals:
            if path.exists():
                for line in path.read_text().splitlines():
                    try:
                        found.append(json.loads(line))
                    except ValueError:
                        pass  # a line cut short by a kill
        return found

    def pids(self) -> List[int]:
        return [int(e["pid"]) for e in self.entries() if e.get("kind") in ("start", "child")]

    def calls(self) -> List[str]:
        return [e["msg"]["params"]["name"] for e in self.entries()
                if e.get("kind") == "in" and e.get("msg", {}).get("method") == "tools/call"]


def text(result: Dict[str, Any]) -> str:
    return " ".join(str(b.get("text", "")) for b in result.get("content", []))


async def beside_notes(lab: FaultLab, broken: ServerSpec, check: Callable[[Aggregator], Awaitable[str]], *,
                       timeout: Optional[float] = None, close_grace: float = 2.0) -> str:
    """Run `check` with the broken server next to the note library, then prove
    the library still answers. `timeout` is the broken server's own: the note
    library keeps a generous one, so no verdict depends on the machine's speed."""
    if timeout is not None:
        broken = replace(broken, timeout=timeout)
    config = config_of([lab.spec("notes", "notes"), broken])
    async with Aggregator(config, request_timeout=GENEROUS, discovery_timeout=2 * GENEROUS,
                          close_grace=close_grace) as tools:
        await tools.refresh()
        account = await check(tools)
        still = await tools.call("mcp__notes__search", {"query": "paging"})
        assert not still.get("isError"), f"the note library stopped answering: {text(still)}"
    return account


def offline_with(*words: str) -> Callable[[Aggregator], Awaitable[str]]:
    async def check(tools: Aggregator) -> str:
        alias = next(spec.alias for spec in tools.config.servers if spec.alias != "notes")
        why = tools.offline.get(alias, "")
        for word in words:
            assert word in why, f"offline reason {why!r} should mention {word!r}"
        closed = await tools.call(f"mcp__{alias}__anything", {})
        assert closed["isError"] and "offline" in text(closed)
        return why
    return check


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[FaultLab], Awaitable[str]]
    limit: float = 15.0
