"""The runner under a learner's worst code: exceptions, blocking, waiting forever."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from pathlib import Path
from typing import List

import pytest

from checks.harness import run_items
from checks.items import EXTENSION_ITEMS, by_number
from checks.target import load_target

from checks.tests.conftest import Variant, verdicts_for

pytestmark = pytest.mark.shipped_starter  # every test here edits a region of the shipped starter

NAMING_BODY = "    return tool_name\n    # <<< exercise 3"


def test_a_learner_exception_points_at_the_line_in_their_file(variant: Variant) -> None:
    directory = variant(edits={"naming.py": (NAMING_BODY, '    raise ValueError("oops")\n    # <<< exercise 3')})
    verdicts = verdicts_for(directory, only={5})
    assert verdicts[5].status == "fail"
    assert "your code raised ValueError: oops" in verdicts[5].message
    assert "naming.py:" in verdicts[5].message and "in model_tool_name: raise ValueError" in verdicts[5].message


def test_a_wrong_return_type_fails_the_item_without_breaking_the_runner(variant: Variant) -> None:
    directory = variant(edits={"naming.py": (NAMING_BODY, "    return 42  # type: ignore\n    # <<< exercise 3")})
    verdicts = verdicts_for(directory, only={4, 5, 6})
    assert {v.status for v in verdicts.values()} <= {"pass", "fail"}
    assert verdicts[5].status == "fail" and verdicts[6].status == "fail"


def test_a_blocked_event_loop_is_named_and_does_not_hang_the_runner(variant: Variant) -> None:
    # Blocked as the aggregator is made, before any server starts: with a 1 s
    # limit, a block that came only after discovery would, on a busy machine,
    # still be waiting on servers when the limit came (and be named a wait).
    old = "        self.config = config\n"
    directory = variant(edits={"aggregator.py": (old, "        import time; time.sleep(60)\n" + old)})
    verdicts = verdicts_for(directory, limit=1.0, only={5})
    assert verdicts[5].status == "fail"
    assert "did not finish in 3 s: something blocks the event loop" in verdicts[5].message
    assert verdicts[5].duration < 30  # judged at limit + grace, long before the sleep ends


def test_an_item_whose_loop_still_turns_past_its_limit_is_waiting_not_blocked(variant: Variant) -> None:
    # Past the limit, the code takes longer than the grace to end (as closing servers
    # does on a very busy machine), its event loop turning all the while: judged by
    # that cause, it waits without a timeout; it never blocked anything.
    old = '            found[spec.alias] = await self.connect(spec)\n\n'
    new = ('            found[spec.alias] = await self.connect(spec)\n            try:\n'
           '                await anyio.sleep_forever()\n            finally:\n'
           '                with anyio.CancelScope(shield=True):\n                    await anyio.sleep(3)\n\n')
    verdicts = verdicts_for(variant(edits={"aggregator.py": (old, new)}), limit=3.0, only={8})
    assert verdicts[8].status == "fail" and not verdicts[8].hung
    assert "did not finish in 3 s: something waits without a timeout" in verdicts[8].message


def test_waiting_without_a_timeout_is_named(variant: Variant) -> None:
    old = '            found[spec.alias] = await self.connect(spec)\n\n'
    new = '            found[spec.alias] = await self.connect(spec)\n            await anyio.sleep_forever()\n\n'
    # In exercise 4's region, so item 8 (which owns it) runs it; the least limit item 8 is judged under.
    verdicts = verdicts_for(variant(edits={"aggregator.py": (old, new)}), limit=3.0, only={8})
    assert verdicts[8].status == "fail"
    assert "did not finish in 3 s: something waits without a timeout" in verdicts[8].message


LIST_ONE_PAGE = ('    page = await server.request("tools/list", {})\n    tools.extend(page_tools(page))\n'
                 '    return tools\n    # <<< exercise 2')


def test_a_loop_that_asks_again_forever_is_named_a_loop_at_the_learners_line(variant: Variant) -> None:
    again = ('    while True:  # the cursor is never sent back: the first page, again and again\n'
             '        page = await server.request("tools/list", {})\n        tools.extend(page_tools(page))\n'
             '        if not page.get("nextCursor"):\n            return tools\n    # <<< exercise 2')
    verdicts = verdicts_for(variant(edits={"discovery.py": (LIST_ONE_PAGE, again)}), limit=3.0, only={3})
    message = verdicts[3].message
    assert verdicts[3].status == "fail" and "waits without a timeout" not in message, message
    assert re.search(r"did not finish in 3 s: a loop that never ends: it sent the same tools/list request to "
                     r"'\w+' [\d,]+ times, and each was answered\n  at \S+discovery\.py:\d+ in list_all_tools: "
                     r'page = await server\.request\("tools/list", \{\}\)$', message), message


def test_a_loop_that_blocks_the_event_loop_is_named_in_the_learners_own_code(variant: Variant) -> None:
    # Nearly all the loop's time is spent in the lab's page_tools, which it calls on a long page.
    spin = ('    page = await server.request("tools/list", {})\n'
            '    many = {"tools": page_tools(page) * 100_000}\n'
            '    while True:  # never awaits\n        tools = page_tools(many)\n    # <<< exercise 2')
    verdicts = verdicts_for(variant(edits={"discovery.py": (LIST_ONE_PAGE, spin)}), limit=1.0, only={3})
    message = verdicts[3].message
    assert verdicts[3].status == "fail" and "something blocks the event loop" in message, message
    # A line of the learner's loop (wherever in it the thread was), not page_tools', which it calls.
    assert re.search(r"\n  at \S+discovery\.py:\d+ in list_all_tools: "
                     r"(while True:  # never awaits|tools = page_tools\(many\))$", message), message


def test_the_skip_line_counts_every_change_a_learner_made(monkeypatch: pytest.MonkeyPatch) -> None:
    from checks.tests import conftest
    work = [f"module{n}.py edited outside the regions" for n in range(10)]
    monkeypatch.setattr(conftest, "learner_work", lambda: work)
    monkeypatch.delenv("MCP_LAB_SHIPPED", raising=False)
    said = conftest.skip_reason()
    assert said is not None and "10 change(s): module0.py" in said and "and 7 more" in said


def test_a_server_that_stalls_past_e3s_timeout_once_does_not_fail_a_right_client(tmp_path: Path) -> None:
    # A busy machine may not run the long call's server for over a second: then no
    # report comes for a whole timeout, and a right client gives up, as it should. The
    # item tells that from a client that ignores reports (it gave up with one a moment
    # old) and makes the call again. Here the server is stopped (SIGSTOP) for 1.3 s.
    stalled: List[int] = []

    def stall() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not stalled:
            for path in tmp_path.glob("mcp-lab-13-*/long-tickets-*.jsonl"):
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
                reports = [line for line in lines if "notifications/progress" in line]
                if len(reports) >= 10:
                    pid = json.loads(lines[0])["pid"]
                    os.kill(pid, signal.SIGSTOP)
                    stalled.append(pid)
                    time.sleep(1.3)
                    os.kill(pid, signal.SIGCONT)
                    return
            time.sleep(0.01)

    watcher = threading.Thread(target=stall, daemon=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCP_LAB_RUN_DIR", str(tmp_path))  # where the item's journals go
        watcher.start()
        item = by_number(13)
        assert item is not None
        verdict = run_items([item], load_target("solution"))[0]
        watcher.join(60)
    assert stalled, "the long call's server was never stopped"
    assert verdict.status == "pass", verdict.message
    starts = [row for row in verdict.wire if row["kind"] == "start" and row["server"] == "long-tickets"]
    assert len(starts) == 2, verdict.wire[:3]  # the call, made again once, with a server of its own


CONNECT_ONE = "        async def connect_one(spec: ServerSpec) -> None:\n            try:\n"


def test_a_blocking_call_in_a_clauses_inputs_is_named_blocking_at_the_learners_line(variant: Variant) -> None:
    # Each input of exercise 4's clauses waits out the sleep on a loop of its own: the item's
    # time runs out with that loop inside the learner's time.sleep, not waiting on a server.
    sleepy = ("        async def connect_one(spec: ServerSpec) -> None:\n"
              "            import time; time.sleep(0.3)\n            try:\n")
    directory = variant(from_solution=(4,), edits={"aggregator.py": (CONNECT_ONE, sleepy)})
    message = verdicts_for(directory, limit=3.0, only={8})[8].message
    assert "did not finish in 3 s: something blocks the event loop again and again" in message, message
    assert re.search(r"at \S+aggregator\.py:\d+ in connect_one: import time; time\.sleep\(0\.3\)", message), message


def test_one_try_around_every_servers_discovery_is_told_it_took_the_other_servers_down(variant: Variant) -> None:
    each = ("            try:\n                with anyio.fail_after(self.discovery_timeout):\n"
            "                    found[spec.alias] = await self.connect(spec)\n"
            "            except Exception as exc:  # any failure: record why, keep the rest\n"
            "                offline[spec.alias] = reason(exc)\n\n"
            "        async with anyio.create_task_group() as group:\n            for spec in self.eager_servers():\n"
            "                group.start_soon(connect_one, spec)\n")
    whole = ("            with anyio.fail_after(self.discovery_timeout):\n"
             "                found[spec.alias] = await self.connect(spec)\n\n"
             "        try:\n            async with anyio.create_task_group() as group:\n"
             "                for spec in self.eager_servers():\n                    group.start_soon(connect_one, spec)\n"
             "        except Exception as exc:\n            for spec in self.eager_servers():\n"
             "                offline.setdefault(spec.alias, reason(exc))\n")
    directory = variant(from_solution=(4,), edits={"aggregator.py": (each, whole)})
    message = verdicts_for(directory, only={8})[8].message
    assert "went offline too" in message and "one server's failure reached another's discovery" in message, message


def test_a_list_change_answered_by_a_whole_refresh_is_told_the_servers_started_again(variant: Variant) -> None:
    relist = "            self._task_group.start_soon(self._relist, alias)\n"
    directory = variant("solution", edits={"aggregator.py": (relist, "            self._task_group.start_soon(self.refresh)\n")})
    item = next(i for i in EXTENSION_ITEMS if i.id == "E2-list-changes")
    message = run_items([item], load_target(str(directory)))[0].message
    assert "(clause E2.5)" in message and "started again (discovered anew)" in message, message



def test_a_stall_is_a_whole_timeout_with_no_report_handed_on_anywhere_in_the_call() -> None:
    from checks.items.extensions import LONG_WORK_TIMEOUT as T, machine_stalled
    steady = [0.025 * n for n in range(1, 40)]
    assert not machine_stalled(0.0, steady, 1.0)  # reports all along, given up at 1 s: the client's doing
    assert machine_stalled(0.0, steady[:10], 0.25 + T)  # nothing handed on for a timeout before the end
    # A stall in the middle, its reports handed on in a burst just before the client gives up:
    assert machine_stalled(0.0, steady[:10] + [1.6, 1.6, 1.61], 1.62)
    assert not machine_stalled(0.0, [], T - 0.01) and machine_stalled(0.0, [], T)
