"""Exercise 4's contract: `Aggregator.refresh` with every server's discovery
scripted in memory: one answers, one answers late, one raises (each kind of
failure a client meets, some whose text is empty, one whose telling part is
at the end), one never answers. Judged by what ends up in the tables, each
input on an event loop of its own whose clock is virtual (ownloop.py): a
time limit is met in its turn, at no cost, however slow the machine, and a
KeyboardInterrupt out of a server's task ends only that input's loop.
Discovering the servers at the same time is a duty (4.5), judged by that
clock: a refresh takes as long as its slowest server. Item 8's journals
show the same on real servers, as evidence.
"""

from __future__ import annotations

from typing import Any, Dict, List

import anyio

from checks.contracts.clause import ON_TRIO, TRIO_SOURCE, Clause, Contract, Told
from checks.target import Target

LIMIT = 10.0  # discovery_timeout, on the virtual clock
BOUND = 60.0  # a refresh still running then is one that waits without a limit
LATE = 2.5  # seconds a late server's discovery takes: within LIMIT, past its own (per-request) timeout
TIMEOUT = 1.0  # a late server's own timeout (ServerSpec.timeout: for each request, not for a discovery)
ABOVE = 30.0  # a server's own timeout past LIMIT: a discovery still ends at LIMIT
REQUEST_TIMEOUT = 2.0  # the aggregator's request_timeout: for each request too, and short of LATE
FAILURES = ("McpError", "RequestTimeout", "ServerGone", "ProtocolViolation", "TimeoutError",
            "ValueError", "OSError", "RuntimeError", "KeyError")
BEHAVIOURS = ("answers", "hangs", *(f"raises {kind}" for kind in FAILURES))


def failure(package: Target, kind: str) -> BaseException:
    errors = package.errors
    made: Dict[str, BaseException] = {
        "McpError": errors.McpError(-32603, "internal error"),
        "RequestTimeout": errors.RequestTimeout("tools/list", 5.0),
        # The part that says why comes last: a reason cut short loses it.
        "ServerGone": errors.ServerGone("server exited with status 1; stderr: Traceback (most recent call "
                                        "last):\n  File \"/srv/notes/server.py\", line 12, in <module>\n    "
                                        "import notes_db\nModuleNotFoundError: No module named 'notes_db'"),
        "ProtocolViolation": errors.ProtocolViolation("a reply with neither member"),
        "TimeoutError": TimeoutError(),  # no text at all: the reason must still say something
        "ValueError": ValueError(""),
        "OSError": OSError(2, "No such file or directory"),
        "RuntimeError": RuntimeError("boom"),
        "KeyError": KeyError("serverInfo"),
        "KeyboardInterrupt": KeyboardInterrupt(),  # the user's Ctrl-C: no server's failure
    }
    return made[kind]


async def scripted(package: Target, case: Dict[str, Any]) -> Any:
    """The learner's refresh over scripted servers: the tables it left. A
    server that answers or raises does so at once; a late one after LATE
    seconds on the loop's clock; one that hangs, never."""
    servers = case["servers"]
    ServerSpec = package.module("host.config").HostServerSpec  # onDemand is the reference's
    config = package.config.config_of([ServerSpec(s["alias"], "python", timeout=s.get("timeout"),
                                                  on_demand=bool(s.get("on demand")))
                                       for s in servers], "<contract>")
    behaviour = {s["alias"]: s["does"] for s in servers}
    Connection = package.aggregator.Connection
    ServerInfo = package.discovery.ServerInfo

    connects: Dict[str, int] = {}

    # The reference's aggregator, on the learner's refresh: it starts only the eager servers.
    class Scripted(package.module("host.aggregator").Aggregator):  # type: ignore[misc]
        async def connect(self, spec: Any) -> Any:
            connects[spec.alias] = connects.get(spec.alias, 0) + 1
            does = behaviour[spec.alias]
            if does == "hangs":
                await anyio.sleep_forever()
            if does == "answers late":
                await anyio.sleep(LATE)
            if does == "fails once" and connects[spec.alias] == 1:
                raise RuntimeError("exit status 3 (database locked)")
            if does == "raises KeyboardInterrupt":
                # After a turn: every server's discovery has begun, so the loop this
                # ends leaves no task that never started (Python would warn of each).
                await anyio.sleep(0)
            if does.startswith("raises "):
                raise failure(package, does.split(" ", 1)[1])
            return Connection(spec.alias, None, ServerInfo(spec.alias, "1"), [])

    # A request's timeout of its own, shorter than a late server's discovery: neither limit is the other.
    tools = Scripted(config, request_timeout=REQUEST_TIMEOUT, discovery_timeout=LIMIT)
    late = 0.0  # how long refresh went on after the caller cancelled it
    took: List[float] = []  # how long each refresh took, on the loop's clock
    async with tools:
        with anyio.move_on_after(BOUND) as bound:
            for _ in range(2 if case.get("again") else 1):  # again: the user asks to try every server again
                began = anyio.current_time()
                with anyio.move_on_after(case.get("cancel", BOUND)):
                    await tools.refresh()
                took.append(anyio.current_time() - began)
                late = max(late, took[-1] - case.get("cancel", BOUND))
        if bound.cancelled_caught:
            return None
        return dict(tools.connections), dict(tools.offline), connects, late, took[0]


NEVER = Told(f"refresh() had not returned after {BOUND:g} s: a server that never answers held it up")


async def tables(package: Target, case: Dict[str, Any]) -> Told:
    seen = await scripted(package, case)
    return NEVER if seen is None else fates(case, seen)


async def tables_in_time(package: Target, case: Dict[str, Any]) -> Told:
    """The tables, and whether the refresh ended by discovery_timeout on the loop's clock: a
    limit other than that one (a server's own, when it is longer) shows in the time alone.
    (How long within it is 4.5's to judge: servers discovered in turn add up.)"""
    seen = await scripted(package, case)
    if seen is None:
        return NEVER
    took = seen[4]
    ended = "ended within discovery_timeout" if took <= LIMIT + 0.001 else f"took {round(took, 1):g} s, past it"
    return Told(f"{fates(case, seen).text}; {ended}")


def fates(case: Dict[str, Any], seen: Any) -> Told:
    """Which table each server ended in, and any discovery made too often or too late."""
    connected, offline, connects, late, _ = seen
    again = [f"discovered {alias} {times} times; " for alias, times in connects.items()
             if times > (2 if case.get("again") else 1)]
    if late > 0.001:
        again.insert(0, f"went on {late:g} s after it was cancelled; ")
    fates = []
    for server in case["servers"]:
        alias = server["alias"]
        if alias in connected and alias in offline:
            fates.append(f"{alias} both connected and offline")
        elif alias in connected:
            fates.append(f"{alias} connected")
        elif alias in offline:
            fates.append(f"{alias} offline")
        else:
            fates.append(f"{alias} in neither table")
    return Told("".join(again) + "left " + ", ".join(fates))


async def reasons(package: Target, case: Dict[str, Any]) -> Told:
    seen = await scripted(package, case)
    if seen is None:
        return NEVER
    empty = [alias for alias, why in seen[1].items() if not (isinstance(why, str) and why.strip())]
    if empty:
        return Told(f"gave {', '.join(empty)} an empty reason")
    reason = package.module("errors").reason
    timed_out = []
    for server in case["servers"]:
        why, does = seen[1].get(server["alias"]), server["does"]
        if why is None:
            continue
        if does in ("hangs", "raises TimeoutError"):
            # Reworded after the region (which step it was waiting for) when it is
            # reason(exc) as it came: so the words themselves are what is compared.
            timed_out.append(f"{server['alias']}: {why!r}")
            continue
        if not does.startswith("raises "):
            continue
        whole = reason(failure(package, does.split(" ", 1)[1]))
        if whole not in why:
            return Told(f"gave {server['alias']} the reason {why[:60]!r}{'…' if len(why) > 60 else ''}, short "
                        f"of reason(exc), whose end says why: …{whole[-60:]!r}")
    return Told("gave every offline server a reason" + (f"; a timeout's: {', '.join(timed_out)}" if timed_out else ""))


async def duration(package: Target, case: Dict[str, Any]) -> Told:
    """How long the refresh took on the loop's clock: a server's discovery after another's adds up."""
    seen = await scripted(package, case)
    if seen is None:
        return NEVER
    return Told(f"took {round(seen[4], 1):g} s")


def show(case: Dict[str, Any]) -> str:
    def one(server: Dict[str, Any]) -> str:
        late = f" after {LATE:g} s" if server["does"] == "answers late" else ""
        timeout = f", its own timeout {server['timeout']:g} s" if server.get("timeout") else ""
        demand = ", marked onDemand" if server.get("on demand") else ""
        return f"{server['alias']} ({server['does'].replace(' late', '')}{late}{timeout}{demand})"
    then = (", refreshed twice" if case.get("again") else "") + \
        (f", the refresh cancelled after {case['cancel']:g} s" if "cancel" in case else "")
    return f"servers {', '.join(one(s) for s in case['servers'])}, discovery_timeout={LIMIT:g}{then}"


def server_sets(st: Any) -> Any:
    def build(does: List[str]) -> Dict[str, Any]:
        return {"servers": [{"alias": f"s{i + 1}", "does": d} for i, d in enumerate(does)]}
    return st.builds(build, st.lists(st.sampled_from(BEHAVIOURS), min_size=1, max_size=4))


def servers(*does: str) -> Dict[str, Any]:
    return {"servers": [{"alias": f"s{i + 1}", "does": d} for i, d in enumerate(does)]}


def with_timeouts(st: Any) -> Any:
    """Servers some of which answer late, past their own timeout but within the discovery's,
    and some whose own timeout is longer than the discovery's limit."""
    def build(does: List[str], timeouts: List[Any]) -> Dict[str, Any]:
        return {"servers": [{"alias": f"s{i + 1}", "does": d, **({"timeout": t} if t else {})}
                            for i, (d, t) in enumerate(zip(does, timeouts))]}
    does = st.lists(st.sampled_from(["answers late", "answers", "hangs", "raises TimeoutError", "raises ServerGone"]),
                    min_size=1, max_size=4)
    return st.builds(build, does, st.lists(st.sampled_from([None, TIMEOUT, ABOVE]), min_size=4, max_size=4))


def interrupted(st: Any) -> Any:
    """Server sets in which one server's discovery meets the user's Ctrl-C."""
    def build(does: List[str], at: int) -> Dict[str, Any]:
        does.insert(at % (len(does) + 1), "raises KeyboardInterrupt")
        return servers(*does)
    return st.builds(build, st.lists(st.sampled_from(BEHAVIOURS), max_size=3), st.integers(0, 3))


def slow_sets(st: Any) -> Any:
    """Two to six servers, some slow to answer or never answering: a refresh that discovers them in
    turn, or a few at a time, takes longer than its slowest one."""
    def build(does: List[str]) -> Dict[str, Any]:
        return servers(*does)
    return st.builds(build, st.lists(st.sampled_from(["answers", "answers late", "hangs", "raises ServerGone"]),
                                     min_size=2, max_size=6))


def late(*timeouts: Any) -> Dict[str, Any]:
    return {"servers": [{"alias": f"s{i + 1}", "does": "answers late", **({"timeout": t} if t else {})}
                        for i, t in enumerate(timeouts)]}


CONTRACTS = (Contract("4", "Aggregator.refresh", (
    Clause("4.1", "must put every server that answered in the connections and every other one in the "
                  "offline table, whatever it raised and however long it stayed silent, discovering each "
                  "once (each eager one: one marked onDemand waits for a search), and a server offline before "
                  "again at the next refresh, and must not let one server's failure reach the others "
                  "(cutting their discovery short) or the caller",
           "lab rule (guide section 6): failure isolation per server", tables, show,
           edges=(servers("answers", "raises McpError"), servers("raises ValueError", "answers"),
                  servers("hangs", "answers"), servers("answers", "raises TimeoutError"),
                  servers("answers", "hangs", "raises OSError"), servers("raises KeyError"),
                  servers("answers late", "raises McpError"), servers("raises ServerGone", "answers late"),
                  {**servers("answers", "fails once"), "again": True},
                  {"servers": [{"alias": "s1", "does": "answers"}, {"alias": "s2", "does": "answers",
                                                                    "on demand": True}]}),
           inputs=server_sets, count=40, loop="own"),
    Clause("4.2", "must give every offline server a reason that is not empty, also for an error "
                  "whose own text is empty (a TimeoutError has none): use reason(exc), all of it (its "
                  "end, a server's exit status and stderr, is often the part that says why)",
           "lab rule: the offline table says why, and the model is told it", reasons, show,
           edges=(servers("raises TimeoutError"), servers("hangs"), servers("raises ValueError"),
                  servers("raises ServerGone")),
           inputs=server_sets, count=40, loop="own"),
    Clause("4.3", "must hold each server's whole discovery to self.discovery_timeout, not to the "
                  "server's own timeout: that one is for each request, and a discovery is several, so "
                  "a server whose discovery outlasts its timeout but not the limit has not failed, and "
                  "one whose own timeout is longer than the limit is still given up on at the limit",
           "lab rule (guide section 6): the time limit is on the whole discovery, not on each request",
           tables_in_time, show,
           edges=(late(TIMEOUT), late(None, TIMEOUT),
                  {"servers": [{"alias": "s1", "does": "hangs", "timeout": ABOVE}]},
                  {"servers": [{"alias": "s1", "does": "answers"}, {"alias": "s2", "does": "hangs", "timeout": ABOVE}]}),
           inputs=with_timeouts, count=30,
           loop="own"),
    Clause("4.4", "must let the user's Ctrl-C (KeyboardInterrupt) during a discovery out of refresh, not "
                  "write it down as that server's failure (catch Exception, not BaseException), and end "
                  "at once when the refresh is cancelled (no shield around a server's discovery)",
           "lab rule: failure isolation is for what a server does; in Python a KeyboardInterrupt is not "
           "an Exception, so the user can stop the client", tables, show,
           edges=(servers("raises KeyboardInterrupt"), servers("answers", "raises KeyboardInterrupt"),
                  {**servers("hangs", "answers late"), "cancel": 1.0}),
           inputs=interrupted, count=20, raises=("KeyboardInterrupt",), loop="alone"),
    Clause("4.5", "must discover every server at the same time, so that a refresh takes as long as its slowest "
                  "server's discovery, not the sum: one after another, or a few at a time (a limiter shared by "
                  "the servers), a server that never answers holds up every one behind it for its whole limit",
           "lab rule (guide section 6): one server's silence must not cost the others their start", duration, show,
           edges=(servers("answers late", "answers late"), servers("hangs", "answers late"),
                  servers("hangs", "hangs", "hangs", "answers late"),
                  servers("hangs", "hangs", "hangs", "hangs", "hangs", "answers late")),
           inputs=slow_sets, count=30, loop="own"),
    Clause("4.6", ON_TRIO.format(calls="asyncio.wait_for around a server's discovery, asyncio.sleep, "
                                       "asyncio.create_task"),
           TRIO_SOURCE, tables, show,
           edges=(servers("answers", "hangs", "raises OSError"), late(TIMEOUT), servers("answers late", "hangs"),
                  {**servers("hangs", "answers late"), "cancel": 1.0}),
           inputs=server_sets, count=20, loop="own", backend="trio"),
)),)
