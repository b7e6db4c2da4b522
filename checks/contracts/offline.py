"""Exercise 4's contract: `Aggregator.refresh` with every server's discovery
scripted in memory: one answers, one raises (each kind of failure a client
meets, some whose text is empty), one never answers. Judged by what ends up
in the tables. (Whether discovery overlapped is evidence item 8 shows, not a
duty: one server after another is slow, not wrong.)
"""

from __future__ import annotations

from typing import Any, Dict, List

import anyio

from checks.contracts.clause import Clause, Contract, Told
from checks.target import Target

LIMIT = 0.25  # discovery_timeout: only a server that never answers reaches it (see `scripted`)
BOUND = 5.0  # a refresh still running then is one that waits without a limit
FAILURES = ("McpError", "RequestTimeout", "ServerGone", "ProtocolViolation", "TimeoutError",
            "ValueError", "OSError", "RuntimeError", "KeyError")
BEHAVIOURS = ("answers", "hangs", *(f"raises {kind}" for kind in FAILURES))


def failure(package: Target, kind: str) -> Exception:
    errors = package.errors
    made: Dict[str, Exception] = {
        "McpError": errors.McpError(-32603, "internal error"),
        "RequestTimeout": errors.RequestTimeout("tools/list", 5.0),
        "ServerGone": errors.ServerGone("the server exited with status 1"),
        "ProtocolViolation": errors.ProtocolViolation("a reply with neither member"),
        "TimeoutError": TimeoutError(),  # no text at all: the reason must still say something
        "ValueError": ValueError(""),
        "OSError": OSError(2, "No such file or directory"),
        "RuntimeError": RuntimeError("boom"),
        "KeyError": KeyError("serverInfo"),
    }
    return made[kind]


async def scripted(package: Target, case: Dict[str, Any]) -> Any:
    """The learner's refresh over scripted servers: the tables it left. A
    server that answers or raises does so at once, passing no checkpoint, so
    no deadline can cut it short however slow the machine; only "hangs" ever
    meets the limit."""
    servers = case["servers"]
    ServerSpec = package.config.ServerSpec
    config = package.config.config_of([ServerSpec(s["alias"], "python") for s in servers], "<contract>")
    behaviour = {s["alias"]: s["does"] for s in servers}
    Connection = package.module("connector").Connection
    ServerInfo = package.discovery.ServerInfo

    class Scripted(package.aggregator.Aggregator):  # type: ignore[misc, name-defined]
        async def connect(self, spec: Any) -> Any:
            does = behaviour[spec.alias]
            if does == "hangs":
                await anyio.sleep_forever()
            if does.startswith("raises "):
                raise failure(package, does.split(" ", 1)[1])
            return Connection(spec.alias, None, ServerInfo(spec.alias, "1"), [])

    tools = Scripted(config, request_timeout=LIMIT, discovery_timeout=LIMIT)
    async with tools:
        with anyio.move_on_after(BOUND) as bound:
            await tools.refresh()
        if bound.cancelled_caught:
            return None
        return dict(tools.connections), dict(tools.offline)


NEVER = Told(f"refresh() had not returned after {BOUND:g} s: a server that never answers held it up")


async def tables(package: Target, case: Dict[str, Any]) -> Told:
    seen = await scripted(package, case)
    if seen is None:
        return NEVER
    connected, offline = seen
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
    return Told("left " + ", ".join(fates))


async def reasons(package: Target, case: Dict[str, Any]) -> Told:
    seen = await scripted(package, case)
    if seen is None:
        return NEVER
    empty = [alias for alias, why in seen[1].items() if not (isinstance(why, str) and why.strip())]
    return Told(f"gave {', '.join(empty)} an empty reason" if empty else "gave every offline server a reason")


def show(case: Dict[str, Any]) -> str:
    return "servers " + ", ".join(f"{s['alias']} ({s['does']})" for s in case["servers"])


def server_sets(st: Any) -> Any:
    def build(does: List[str]) -> Dict[str, Any]:
        return {"servers": [{"alias": f"s{i + 1}", "does": d} for i, d in enumerate(does)]}
    return st.builds(build, st.lists(st.sampled_from(BEHAVIOURS), min_size=1, max_size=4))


def servers(*does: str) -> Dict[str, Any]:
    return {"servers": [{"alias": f"s{i + 1}", "does": d} for i, d in enumerate(does)]}


CONTRACTS = (Contract("4", "Aggregator.refresh", (
    Clause("4.1", "must put every server that answered in the connections and every other one in the "
                  "offline table, whatever it raised and however long it stayed silent, and must not "
                  "let one server's failure reach the others or the caller",
           "lab rule (guide section 6): failure isolation per server", tables, show,
           edges=(servers("answers", "raises McpError"), servers("raises ValueError", "answers"),
                  servers("hangs", "answers"), servers("answers", "raises TimeoutError"),
                  servers("answers", "hangs", "raises OSError"), servers("raises KeyError")),
           inputs=server_sets, count=40),
    Clause("4.2", "must give every offline server a reason that is not empty, also for an error "
                  "whose own text is empty (a TimeoutError has none): use reason(exc)",
           "lab rule: the offline table says why, and the model is told it", reasons, show,
           edges=(servers("raises TimeoutError"), servers("hangs"), servers("raises ValueError")),
           inputs=server_sets, count=40),
)),)
