"""E2's contract: `Aggregator.list_changed`, with one scripted server in memory.

The server's tool list goes through versions; each change is announced with
`list_changed`. The first re-list's request is held at the server (its answer
already made from the list as it was when the request came) while more
changes are announced: the race a server that changes twice in a row sets
up. Then the answer is let go and the aggregator left to settle, counted in
turns of the event loop (nothing here waits on a clock: the server answers
in memory). What is observed is the table the model would see at the end.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import anyio

from checks.contracts.clause import Clause, Contract, Told
from checks.target import Target

PAGE = 2  # tools per page: a re-list must read them all
SETTLE = 100  # turns of the event loop with nothing asked, after which the aggregator has settled
BOUND = 5.0  # seconds: a held request never let go, or a re-list that never ends, is told as such


class ChangingServer:
    """A server's client as the aggregator sees it: pages of the current list,
    and a gate that can hold the next answer."""

    era = "current"
    alias = "srv"

    def __init__(self, tools: List[str]) -> None:
        self.tools = tools
        self.asked = 0
        self.answered = 0
        self.hold_next = False
        self.held = anyio.Event()  # set when a held request has arrived
        self.release = anyio.Event()

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                      timeout: Optional[float] = None) -> Dict[str, Any]:
        await anyio.sleep(0)  # a turn of the loop, as a real request takes
        self.asked += 1
        start = int((params or {}).get("cursor") or 0)
        names = self.tools[start:start + PAGE]  # the answer is made now, from the list as it is now
        page: Dict[str, Any] = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
        if start + PAGE < len(self.tools):
            page["nextCursor"] = str(start + PAGE)
        if self.hold_next:
            self.hold_next = False
            self.held.set()
            await self.release.wait()
        self.answered += 1
        return page

    async def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        return None


async def in_flight(server: ChangingServer) -> None:
    """Until the held request has come, or SETTLE turns pass with nothing asked
    (a client that does not re-list at all)."""
    quiet = 0
    while not server.held.is_set() and quiet < SETTLE:
        seen = server.asked
        await anyio.sleep(0)
        quiet = 0 if server.asked != seen else quiet + 1


async def settle(server: ChangingServer) -> None:
    """Until every request is answered and SETTLE turns pass with no new one."""
    quiet, seen = 0, server.asked
    while quiet < SETTLE:
        await anyio.sleep(0)
        if server.asked != seen or server.answered != server.asked:
            quiet, seen = 0, server.asked
        else:
            quiet += 1


async def final_table(package: Target, case: Dict[str, Any]) -> Told:
    versions: List[List[str]] = case["versions"]
    server = ChangingServer(versions[0])
    Connection = package.module("connector").Connection
    ServerInfo = package.discovery.ServerInfo
    config = package.config.config_of([package.config.ServerSpec("srv", "python")], "<contract>")

    class Scripted(package.aggregator.Aggregator):  # type: ignore[misc, name-defined]
        async def connect(self, spec: Any) -> Any:
            found = await package.discovery.list_all_tools(server)
            return Connection(spec.alias, server, ServerInfo(spec.alias, "1"), found)

    async with Scripted(config, request_timeout=BOUND, discovery_timeout=BOUND) as tools:
        await tools.refresh()
        with anyio.move_on_after(BOUND) as bound:
            for number, version in enumerate(versions[1:]):
                server.tools = version
                during = case["during"] and number > 0
                if case["during"] and number == 0:
                    server.hold_next = True
                tools.list_changed("srv")
                if case["during"] and number == 0:
                    await in_flight(server)  # the first re-list is now in flight, its answer made
                if not during and not case["during"]:
                    await settle(server)
            server.release.set()
            await settle(server)
            if case.get("ghost"):
                tools.list_changed("ghost")  # not a server of this aggregator: nothing to do
                await settle(server)
        if bound.cancelled_caught:
            return Told(f"never settled within {BOUND:g} s (a re-list that never asked, or never ended)")
        names = sorted(e.original_name for e in tools.entries.values() if e.alias == "srv")
        return Told(f"left the table with {names}")


def show(case: Dict[str, Any]) -> str:
    steps = " -> ".join(str(v) for v in case["versions"])
    how = ("the later changes announced while the first re-list's answer was still on its way"
           if case["during"] else "each change announced after the last re-list had ended")
    return f"a server whose tools went {steps} ({PAGE} a page), {how}"


def histories(st: Any, during: bool) -> Any:
    names = st.lists(st.sampled_from(["read", "search", "add", "tag", "close", "export"]), unique=True, max_size=5)
    count = st.integers(3, 4) if during else st.integers(2, 3)
    return st.builds(lambda vs: {"versions": vs, "during": during},
                     count.flatmap(lambda n: st.lists(names, min_size=n, max_size=n)))


CONTRACTS = (Contract("E2", "Aggregator.list_changed", (
    Clause("E2.1", "must bring the table to the server's latest list after each change, every page of it "
                   "(names that stay keep their names; new tools appear, removed ones go)",
           "MCP: notifications/tools/list_changed means the client should list again", final_table, show,
           edges=({"versions": [["read"], ["read", "add"]], "during": False},
                  {"versions": [["read"], ["read", "add", "tag"]], "during": False},
                  {"versions": [["read", "add"], []], "during": False}),
           inputs=lambda st: histories(st, False), count=25),
    Clause("E2.2", "must not lose a change announced while that server's re-list is still running: its "
                   "answer may predate the change, so the table must end with the latest list, not that one",
           "lab rule (guide section 11.2): the race a server that changes twice in a row sets up",
           final_table, show,
           edges=({"versions": [["read"], ["read", "add"], ["read", "add", "tag"]], "during": True},
                  {"versions": [["read"], ["read", "add"], ["read", "add", "tag"], ["tag"]], "during": True}),
           inputs=lambda st: histories(st, True), count=25),
    Clause("E2.3", "must ignore, without raising, a change announced for a server that is not connected",
           "lab rule: a notification can come from a server already gone", final_table, show,
           edges=({"versions": [["read"], ["read", "add"]], "during": False, "ghost": True},),
           inputs=lambda st: histories(st, False).map(lambda c: {**c, "ghost": True}), count=10),
)),)
