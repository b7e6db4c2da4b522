"""What every item uses: fixture specs for the target, the one learner value every table
depends on, the words of a failure (where to edit), and what a journal says a result was.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from checks.exercises import EXERCISES, Exercise, Extension
from checks.fixtures import Entry, Journal, Lab
from checks.harness import Fail, HarnessError, leaves
from checks.target import Target


# Limits only a wrong path ever reaches: a correct client never waits for them,
# however busy the machine, so they can be generous.
GENEROUS = 30.0
JOURNAL_POLL = 0.005


def edit(target: Target, exercise: Exercise) -> str:
    return (f"\nedit: {target.display_path(exercise.file)}, {exercise.function} "
            f"(exercise {exercise.number}: {exercise.summary})")


def started(journal: Journal) -> None:
    if journal.pid is None:
        raise HarnessError(f"the fixture server '{journal.alias}' never started "
                           f"(no journal at {journal.path})")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def aggregator_for(target: Target, lab: Lab, specs: List[Any], *, timeout: float = GENEROUS,
                         discovery_timeout: float = GENEROUS, reference: bool = False) -> Any:
    """The learner's aggregator over `specs`; with `reference`, the reference client's,
    built on the learner's core (host/aggregator.py), for an item whose duty lives in a
    layer (consent's audit, per-tool timeouts, tasks, forms, code mode, HTTP, resources)."""
    config = target.config.config_of(specs, "<checks>")
    made = target.module("host.aggregator") if reference else target.aggregator
    return made.Aggregator(config, request_timeout=timeout, discovery_timeout=discovery_timeout)


async def refreshed(target: Target, tools: Any) -> None:
    """Refresh, then check the one learner value every table depends on."""
    await tools.refresh()
    for name, entry in tools.entries.items():
        if not isinstance(name, str):
            raise Fail(f"expected: model_tool_name() returns a str\n"
                       f"got: {name!r} ({type(name).__name__}) for {entry.alias}/{entry.original_name}"
                       f"{edit(target, EXERCISES[3])}")


def result_of(journal: Journal, tool: str) -> Dict[str, Any]:
    """What the server answered to its last call of `tool`."""
    calls = journal.calls(tool)
    reply = journal.reply_to(calls[-1]) if calls else None
    return dict(reply.msg.get("result") or {}) if reply else {}


def describe(exc: BaseException) -> str:
    return " + ".join(f"{type(leaf).__name__} ({leaf})" for leaf in leaves(exc))


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def found(tools: Any, alias: str, original: str, extension: Extension) -> Any:
    """The entry for a tool the item needs, or a failure that says why it is missing."""
    entry = tools.find(alias, original)
    if entry is None:
        offline = getattr(tools, "offline", None)  # the learner's table: it may be anything
        offline = offline if isinstance(offline, dict) else {}
        why = (f"{alias} is offline: {offline[alias]}" if alias in offline
               else f"left out: {'; '.join(tools.dropped) or 'nothing'}")
        raise Fail(f"expected: {alias}/{original} in the tool table\ngot: it is missing "
                   f"({why}); finish the nine first (python -m checks), then extension {extension.name}")
    return entry


def point(target: Target, extension: Extension) -> str:
    return (f"\nedit: {target.display_path(extension.file)}, {extension.function} "
            f"(extension {extension.name}: {extension.summary}); read labs/GUIDE.md {extension.guide}")


def text(result: Dict[str, Any]) -> str:
    return " ".join(str(b.get("text", "")) for b in result.get("content") or [] if isinstance(b, dict))


def sent(journal: Journal, method: Optional[str] = None) -> List[Entry]:
    return [e for e in journal.entries() if e.kind == "out" and (method is None or e.msg.get("method") == method)]
