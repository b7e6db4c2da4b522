"""The items `python -m checks` judges, each defined once here: its number,
id, title, the function that proves it, where a learner edits, and what it
may wait on. The nine come first; E1-E11 (`--extensions`) after them.

Each item starts its own fixture servers and proves one claim from their
journals and the process table; it returns a one-line account when the claim
holds and raises `Fail` with expected / journal / got / edit when it does not.
The modules, by what they judge: `wire` (1-3), `names` (4-7), `offline` (8),
`loop` (9), `extensions` (E1-E5), `tasks` (E6, E7), `code` (E8), `remote` (E9); `evidence` is
what they share.
"""

from __future__ import annotations

from typing import Dict, Optional

from checks.contracts import contracted
from checks.exercises import EXERCISES
from checks.harness import Item
from checks.items import proofs
from checks.items.code import ENDLESS_LIMIT as ENDLESS_SCRIPT_LIMIT, code_mode
from checks.items.extensions import consent, list_changes, many_tools, progress, structured
from checks.items.lifecycle import resources, sampling
from checks.items.loop import agent_loop
from checks.items.names import collision, error_classes, names_fit, translation
from checks.items.offline import SILENT_TIMEOUT, SLOW_DISCOVERY_LIMIT, offline
from checks.items.remote import remote
from checks.items.tasks import elicitation, tasks
from checks.items.wire import connects, paging, protocol_error

ITEMS = [
    Item(1, "connect", "connects over stdio; replies matched by id; close leaves no process",
         connects, "stdio_client.py", "StdioClient", proof=proofs.connects),
    Item(2, "protocol-error", "a protocol error rejects its request at once with the server's code",
         contracted("1", protocol_error), "stdio_client.py", "StdioClient.on_line", EXERCISES[1], proof=proofs.protocol_error),
    Item(3, "paging", "all three note tools found across pages; cursors sent back verbatim",
         contracted("2", paging), "discovery.py", "list_all_tools", EXERCISES[2], proof=proofs.paging),
    Item(4, "translation", "MCP tools become model tools; title, annotations, outputSchema stay client-side",
         translation, "translate.py", "to_anthropic_tool", proof=proofs.translation),
    Item(5, "collision", "both search tools under distinct names, each reaching its own server",
         contracted("3", collision), "naming.py", "model_tool_name", EXERCISES[3], proof=proofs.collision),
    Item(6, "model-names", "every model-facing name is legal; long, twin and dotted names stay unique",
         contracted("3", names_fit), "naming.py", "model_tool_name", EXERCISES[3], proof=proofs.names_fit),
    Item(7, "error-classes", "isError results come back verbatim; unknown names and bad arguments too",
         error_classes, "aggregator.py", "Aggregator.call", proof=proofs.error_classes),
    Item(8, "offline", "a broken server goes to the offline table with a reason; the rest keep working",
         contracted("4", offline), "aggregator.py", "Aggregator.refresh", EXERCISES[4],
         waits=f"a silent server ({SILENT_TIMEOUT:g} s per request) and a slow one "
               f"({SLOW_DISCOVERY_LIMIT:g} s for its whole discovery)", floor=3.0, proof=proofs.offline),
    Item(9, "agent-loop", "the agent loop: model picks a name, server gets the original, a step limit",
         agent_loop, "agent.py", "run_agent", proof=proofs.agent_loop),
]

EXTENSION_ITEMS = [
    Item(11, "E1-consent", "consent: annotations decide when to ask; declines and approvals are kept",
         contracted("E1", consent), "consent.py", "runs_without_asking", proof=proofs.consent),
    Item(12, "E2-list-changes", "a changed tool list is re-listed; old names stay, new tools appear",
         contracted("E2", list_changes), "aggregator.py", "Aggregator.list_changed",
         waits="a list change, up to 2 s", floor=5.0, proof=proofs.list_changes),
    Item(13, "E3-progress", "progress reaches the caller in order, stops at the reply, resets the timeout",
         contracted("E3", progress), "stdio_client.py", "StdioClient._on_progress",
         waits="a call that outlasts its timeout", floor=8.0, proof=proofs.progress),
    Item(14, "E4-many-tools", "stable meta-tools find a tool among 500 by words and call it",
         contracted("E4", many_tools), "meta_tools.py", "rank", proof=proofs.many_tools),
    Item(15, "E5-structured", "structured results reach the program as data; the model gets text",
         contracted("E5", structured), "tool_calls.py", "structured_data", proof=proofs.structured),
    Item(16, "E6-tasks", "tasks: polled to the end, failed and cancelled said plainly, both eras",
         contracted("E6", tasks), "tasks.py", "settled", waits="a task past its limit, 1 s", floor=8.0,
         proof=proofs.tasks),
    Item(17, "E7-elicitation", "a server's question becomes a form; the answer is checked and sent back",
         contracted("E7", elicitation), "elicitation.py", "field_from_schema", proof=proofs.elicitation),
    Item(18, "E8-code-mode", "code mode: a script checked against typed stubs, run in the sandbox, calls consented",
         contracted("E8", code_mode), "stubs.py", "literal",
         waits=f"an endless script, {ENDLESS_SCRIPT_LIMIT:g} s of running time", floor=8.0, proof=proofs.code_mode),
    Item(19, "E9-remote", "remote servers: event streams read into messages; an ended stream resumed",
         contracted("E9", remote), "sse.py", "EventStream._line",
         waits="the server's retry before resuming, 1.5 s", floor=6.0, proof=proofs.remote),
    Item(20, "E10-resources", "resources: every page listed; a link read only from the server that offered it",
         contracted("E10", resources), "resource_links.py", "Offers.resolve", proof=proofs.resources),
    Item(21, "E11-sampling", "sampling: the person approves the request, then sees and approves the reply",
         contracted("E11", sampling), "sampler.py", "TerminalSampler.__call__", proof=proofs.sampling),
]


def label(number: int) -> str:
    return f"E{number - 10}" if number > 10 else str(number)


def by_number(number: int) -> Optional[Item]:
    return next((item for item in ITEMS + EXTENSION_ITEMS if item.number == number), None)


def by_name() -> Dict[str, Item]:
    return {item.id.split("-")[0]: item for item in EXTENSION_ITEMS}
