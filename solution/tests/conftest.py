from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from solution.config import ServerSpec

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Fixture:
    """A fixture server spec with its own journal file."""

    def __init__(self, directory: Path, server: str, alias: str, *extra: str) -> None:
        self.journal_path = directory / f"{alias}.jsonl"
        self.spec = ServerSpec(alias, sys.executable,
                               (str(ROOT / "servers" / f"{server}.py"), "--journal",
                                str(self.journal_path), *extra), {}, str(ROOT))

    def entries(self) -> List[Dict[str, Any]]:
        if not self.journal_path.exists():
            return []
        return [json.loads(x) for x in self.journal_path.read_text().splitlines()]

    def calls(self) -> List[Dict[str, Any]]:
        return [e["msg"]["params"] for e in self.entries()
                if e["kind"] == "in" and e.get("msg", {}).get("method") == "tools/call"]

    def methods(self) -> List[str]:
        return [e["msg"].get("method") for e in self.entries() if e["kind"] == "in" and "msg" in e]

    @property
    def pid(self) -> int:
        return int(next(e for e in self.entries() if e["kind"] == "start")["pid"])


@pytest.fixture
def fixture(tmp_path: Path) -> Any:
    def make(server: str, alias: str = "", *extra: str) -> Fixture:
        return Fixture(tmp_path, server, alias or server, *extra)
    return make


def alive(pid: int) -> bool:
    import os
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
