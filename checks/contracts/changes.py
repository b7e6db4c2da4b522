"""E2's contract: `Aggregator.list_changed`, with two scripted servers in
memory, one that changes and one that never does.

The server's tool list goes through versions; each change is announced with
`list_changed`. The first re-list's request is held at the server (its answer
already made from the list as it was when the request came) while more
changes are announced: the race a server that changes twice in a row sets
up, and (with a burst of announcements) the amplification a hostile one
tries. Then the answer is let go and the aggregator left to settle, counted
in turns of the event loop (nothing here waits on a clock: the servers answer
in memory). What is observed is the table the model would see at the end,
how often each server was listed, and, when the aggregator is cancelled with
that answer still held, whether a re-list outlived it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import anyio

from checks.contracts.clause import ON_TRIO, TRIO_SOURCE, Clause, Contract, Told
from checks.target import Target

PAGE = 2  # tools per page: a re-list must read them all
SETTLE = 100  # turns of the event loop with nothing asked, after which the aggregator has settled
BOUND = 5.0  # seconds: a held request never let go, or a re-list that never ends, is told as such


class ChangingServer:
    """A server's client as the aggregator sees it: pages of the current list,
    and a gate that can hold the next answer."""

    era = "current"

    def __init__(self, tools: List[str]) -> None:
        self.tools = tools
        self.asked = 0
        self.answered = 0
        self.listings = 0  # requests for a first page: each is one listing of the whole list
        self.waiting = 0  # requests held at the gate now
        self.hold_next = False
        self.held = anyio.Event()  # set when a held request has arrived
        self.release = anyio.Event()
        self.delay = 0.0  # seconds each answer takes, once the change has come (on a loop of the clause's own)
        self.answering = anyio.Event()  # set, and made anew, as each request ends
        self.abandoned = 0  # requests the client stopped waiting for before their answer came

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                      timeout: Optional[float] = None) -> Dict[str, Any]:
        await anyio.sleep(0)  # a turn of the loop, as a real request takes
        self.asked += 1
        start = int((params or {}).get("cursor") or 0)
        self.listings += start == 0
        names = self.tools[start:start + PAGE]  # the answer is made now, from the list as it is now
        page: Dict[str, Any] = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
        if start + PAGE < len(self.tools):
            page["nextCursor"] = str(start + PAGE)
        try:
            if self.hold_next:
                self.hold_next = False
                self.held.set()
                self.waiting += 1
                try:
                    await self.release.wait()
                finally:  # let go, or cancelled with the task that asked
                    self.waiting -= 1
            if self.delay:
                await anyio.sleep(self.delay)
        except anyio.get_cancelled_exc_class():
            self.abandoned += 1
            self.ended()
            raise
        self.answered += 1
        self.ended()
        return page

    def ended(self) -> None:
        """A request has ended, answered or abandoned: whoever waits for one is told."""
        self.answering.set()
        self.answering = anyio.Event()

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
        if server.delay and server.answered + server.abandoned != server.asked:
            await server.answering.wait()  # a slow answer: turns of the loop would not bring it
        await anyio.sleep(0)
        if server.asked != seen or server.answered + server.abandoned != server.asked:
            quiet, seen = 0, server.asked
        else:
            quiet += 1


async def run(package: Target, case: Dict[str, Any]) -> Dict[str, Any]:
    """The history in `case` played to the learner's aggregator, with a second
    server beside it whose list never changes; what each server saw, and the
    table the model would see at the end."""
    versions: List[List[str]] = case["versions"]
    server, steady = ChangingServer(versions[0]), ChangingServer(["steady"])
    alias = case.get("alias", "srv")
    scripted = {alias: server, "other": steady}
    Connection = package.aggregator.Connection
    ServerInfo = package.discovery.ServerInfo
    config = package.config.config_of([package.config.ServerSpec(alias, "python") for alias in scripted],
                                      "<contract>")

    class Scripted(package.aggregator.Aggregator):  # type: ignore[misc, name-defined]
        async def connect(self, spec: Any) -> Any:
            found = await package.discovery.list_all_tools(scripted[spec.alias])
            return Connection(spec.alias, scripted[spec.alias], ServerInfo(spec.alias, "1"), found)

    seen: Dict[str, Any] = {"server": server}
    with anyio.CancelScope() as ended:  # the aggregator's `async with` cancelled, as a Ctrl-C does
        async with Scripted(config, request_timeout=BOUND, discovery_timeout=BOUND) as tools:
            await tools.refresh()
            before = {"listings": server.listings, "other": steady.asked}
            server.delay = case.get("slow", 0.0)
            with anyio.move_on_after(BOUND + 2 * server.delay) as bound:
                for number, version in enumerate(versions[1:]):
                    server.tools = version
                    during = case["during"] and number > 0
                    if case["during"] and number == 0:
                        server.hold_next = True
                    tools.list_changed(alias)
                    if case["during"] and number == 0:
                        await in_flight(server)  # the first re-list is now in flight, its answer made
                        if case.get("other changes"):  # and the server beside it changes too, meanwhile
                            steady.tools = ["steady", "added"]
                            tools.list_changed("other")
                    if not during and not case["during"]:
                        await settle(server)
                for _ in range(case.get("burst", 0)):
                    tools.list_changed(alias)
                if case.get("cancel"):
                    ended.cancel()
                    await anyio.sleep(0)
                server.release.set()
                await settle(server)
                await settle(steady)
                if case.get("ghost"):
                    tools.list_changed("ghost")  # not a server of this aggregator: nothing to do
                    await settle(server)
            seen.update(never=bound.cancelled_caught, relists=server.listings - before["listings"],
                        others=steady.asked - before["other"], waited=BOUND + 2 * server.delay,
                        abandoned=server.abandoned,
                        names=sorted(e.original_name for e in tools.entries.values() if e.alias == alias),
                        beside=sorted(e.original_name for e in tools.entries.values() if e.alias == "other"))
    if case.get("cancel"):
        for _ in range(SETTLE):  # turns for whatever the aggregator left running to move on
            await anyio.sleep(0)
        seen["left"] = server.waiting
    return seen


def never(seen: Dict[str, Any]) -> Told:
    """A history that never settled, said with the time the judge gave it on the loop's clock
    (virtual where a server is slow: no such time passed) and what that most often is."""
    return Told(f"never settled: the judge waited {seen['waited']:g} s on the event loop's clock for its re-lists to "
                "end (a re-list that never asked for the list, or never ended)")


async def final_table(package: Target, case: Dict[str, Any]) -> Told:
    seen = await run(package, case)
    if seen["never"]:
        return never(seen)
    beside = f", and the server beside it with {seen['beside']}" if case.get("other changes") else ""
    # A re-list whose answer the client stopped waiting for: most often a limit of the learner's own.
    gave_up = (f"; it gave up on {seen['abandoned']} re-list answer(s) before they came (the server takes "
               f"{case.get('slow', 0):g} s: a limit of its own on the re-list? the request's timeout is the "
               "server's)" if seen["abandoned"] else "")
    return Told(f"left the table with {seen['names']}{beside}{gave_up}")


def announcements(case: Dict[str, Any]) -> int:
    return len(case["versions"]) - 1 + int(case.get("burst", 0))


async def relists(package: Target, case: Dict[str, Any]) -> Told:
    seen = await run(package, case)
    if seen["never"]:
        return never(seen)
    return Told(f"listed that server again {seen['relists']} time(s) for {announcements(case)} announcement(s)")


async def others(package: Target, case: Dict[str, Any]) -> Told:
    seen = await run(package, case)
    if seen["never"]:
        return never(seen)
    asked = seen["others"]
    return Told(f"asked the server that announced nothing for its tools {asked} more time(s)" if asked
                else "asked no other server again")


async def owned(package: Target, case: Dict[str, Any]) -> Told:
    seen = await run(package, case)
    if seen.get("left"):
        return Told("left a re-list waiting on the server after the aggregator had ended: a task no one "
                    "owns (asyncio keeps only a weak reference to it), not one in self._task_group")
    return Told("ended its re-lists with the aggregator")


def show(case: Dict[str, Any]) -> str:
    steps = " -> ".join(str(v) for v in case["versions"])
    if case.get("cancel"):
        how = "and the aggregator's `async with` cancelled (a Ctrl-C) while that re-list's answer was on its way"
    elif case["during"]:
        how = "the later changes announced while the first re-list's answer was still on its way"
    else:
        how = "each change announced after the last re-list had ended"
    burst = f", then {case['burst']} more announcements of the last while it was" if case.get("burst") else ""
    named = f" named {case['alias']!r}" if "alias" in case else ""
    slow = f", each re-list's answer {case['slow']:g} s in coming" if case.get("slow") else ""
    beside = ("beside it, a server whose tools went ['steady'] -> ['steady', 'added'], announced while that first "
              "re-list ran" if case.get("other changes") else "beside it, a server whose tools never changed")
    return f"a server{named} whose tools went {steps} ({PAGE} a page), {how}{burst}{slow} ({beside})"


def histories(st: Any, during: bool) -> Any:
    names = st.lists(st.sampled_from(["read", "search", "add", "tag", "close", "export"]), unique=True, max_size=5)
    count = st.integers(3, 4) if during else st.integers(2, 3)
    return st.builds(lambda vs: {"versions": vs, "during": during},
                     count.flatmap(lambda n: st.lists(names, min_size=n, max_size=n)))


def bursts(st: Any) -> Any:
    """Histories whose changes come while a re-list runs, some with a burst of announcements after."""
    return st.builds(lambda case, burst: {**case, **({"burst": burst} if burst else {})},
                     histories(st, True), st.sampled_from([0, 0, 3, 20]))


def cancelled(st: Any) -> Any:
    """The first change's re-list in flight when the aggregator is cancelled."""
    return st.builds(lambda case: {**case, "versions": case["versions"][:2], "cancel": True}, histories(st, True))


READ_ADD_TAG = [["read"], ["read", "add"], ["read", "add", "tag"]]

CONTRACTS = (Contract("E2", "Aggregator.list_changed", (
    Clause("E2.1", "must bring the table to the server's latest list after each change, every page of it "
                   "(names that stay keep their names; new tools appear, removed ones go), for any alias as "
                   "configured and however long the server takes to answer (its timeout is the request's)",
           "MCP: notifications/tools/list_changed means the client should list again", final_table, show,
           edges=({"versions": [["read"], ["read", "add"]], "during": False},
                  {"versions": [["read"], ["read", "add", "tag"]], "during": False},
                  {"versions": [["read", "add"], []], "during": False},
                  {"versions": [["read"], ["read", "add"]], "during": False, "alias": "Tickets"},
                  {"versions": [["read"], ["read", "add"]], "during": False, "slow": 30.0}),
           inputs=lambda st: histories(st, False), count=25, loop="own"),
    Clause("E2.2", "must not lose a change announced while that server's re-list is still running: its "
                   "answer may predate the change, so the table must end with the latest list, not that one; "
                   "nor one another server announced meanwhile: each server's re-lists are its own (a flag, a "
                   "lock or a limit shared by every server loses one)",
           "lab rule (guide section 11.2): the race a server that changes twice in a row sets up",
           final_table, show,
           edges=({"versions": READ_ADD_TAG, "during": True},
                  {"versions": [*READ_ADD_TAG, ["tag"]], "during": True},
                  {"versions": READ_ADD_TAG, "during": True, "other changes": True}),
           inputs=lambda st: st.builds(lambda case, other: {**case, **({"other changes": True} if other else {})},
                                       histories(st, True), st.booleans()), count=25),
    Clause("E2.3", "must ignore, without raising, a change announced for a server that is not connected",
           "lab rule: a notification can come from a server already gone", final_table, show,
           edges=({"versions": [["read"], ["read", "add"]], "during": False, "ghost": True},),
           inputs=lambda st: histories(st, False).map(lambda c: {**c, "ghost": True}), count=10),
    Clause("E2.4", "must list a server at most once more however many changes it announces while its "
                   "re-list runs (self._relist does: hand it every announcement), not once for each",
           "lab rule (guide section 11.2): a server's notifications cost what it likes to send; 2,000 at "
           "once must not buy 2,000 listings", relists, show,
           edges=({"versions": READ_ADD_TAG, "during": True, "burst": 20},
                  {"versions": READ_ADD_TAG, "during": True}),
           inputs=bursts, count=20),
    Clause("E2.5", "must re-list only the server that announced the change: the others are not asked again",
           "lab rule (guide section 11.2): list that server again; a server that did not change may be "
           "slow, or break, for nothing", others, show,
           edges=({"versions": [["read"], ["read", "add"]], "during": False},), inputs=lambda st: histories(st, False),
           count=10),
    Clause("E2.6", "must start the re-list in the aggregator's task group (self._task_group), so that it "
                   "ends with the aggregator: not as a task no one owns (asyncio.ensure_future, "
                   "create_task), which outlives it and, under trio, never runs",
           "lab rule: structured concurrency; the aggregator owns what it starts", owned, show,
           edges=({"versions": [["read"], ["read", "add"]], "during": True, "cancel": True},),
           inputs=cancelled, count=10, loop="own"),  # there, a task no one owns ends with its loop
    Clause("E2.7", ON_TRIO.format(calls="asyncio.sleep(0) before the re-list, asyncio.get_running_loop()"),
           TRIO_SOURCE, final_table, show,
           edges=({"versions": [["read"], ["read", "add"]], "during": False}, {"versions": READ_ADD_TAG, "during": True},
                  {"versions": [["read"], ["read", "add"]], "during": False, "slow": 30.0}),
           inputs=lambda st: st.one_of(histories(st, False), bursts(st)), count=15, loop="own", backend="trio"),
)),)
