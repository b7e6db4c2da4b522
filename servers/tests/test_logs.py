"""Log messages filtered by the level in force for the request in hand (logs.py)."""

from __future__ import annotations

import threading
from typing import Any, Dict, List

import pytest

from servers.logs import LEVELS, LogGate, allows, checked_level
from servers.rpc import RpcError


def test_a_level_lets_through_itself_and_everything_more_severe() -> None:
    assert allows("warning", "warning") and allows("warning", "emergency")
    assert not allows("warning", "notice") and not allows(None, "emergency")
    assert [lv for lv in LEVELS if allows("error", lv)] == ["error", "critical", "alert", "emergency"]


def test_an_unknown_level_is_invalid_params() -> None:
    assert checked_level("debug") == "debug"
    for bad in ("verbose", "INFO", None, 3):
        with pytest.raises(RpcError) as caught:
            checked_level(bad)
        assert caught.value.code == -32602


def test_the_gate_sends_what_passes_and_journals_both() -> None:
    sent: List[Dict[str, Any]] = []
    journal: List[Dict[str, Any]] = []
    gate = LogGate("notes")
    gate.send, gate.record = sent.append, lambda kind, **fields: journal.append({"kind": kind, **fields})
    gate.set("info")
    assert gate.log("debug", "quiet") is False and gate.log("info", "heard") is True
    assert sent == [{"jsonrpc": "2.0", "method": "notifications/message",
                     "params": {"level": "info", "logger": "notes", "data": "heard"}}]
    assert [(e["level"], e["sent"]) for e in journal] == [("debug", False), ("info", True)]


def test_each_thread_has_its_own_threshold() -> None:
    gate, seen = LogGate("x"), {}
    gate.set("debug")

    def other() -> None:
        seen["before"] = gate.threshold()
        gate.set("error")
        seen["after"] = gate.threshold()

    worker = threading.Thread(target=other)
    worker.start()
    worker.join(10)
    assert seen == {"before": None, "after": "error"} and gate.threshold() == "debug"
