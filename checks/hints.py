"""Three hints per item, from a nudge to the exact construct to the guide.

`python -m checks --hint N` shows the next rung for item N (where each item
stands is kept in `.checks-state.json` at the project root, ignored by git);
`--hint N --all` shows all three.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

from checks.target import ROOT

STATE = ROOT / ".checks-state.json"

HINTS: Dict[int, List[str]] = {
    1: ["Connecting is start, request, close. Which of those does your change touch?",
        "Replies are matched in StdioClient.on_line by the reply's 'id', looked up in the pending "
        "table; close() must end with the process reaped (aclose waits, then terminates, then kills).",
        "labs/GUIDE.md, section 8 (the walkthrough): read solution/stdio_client.py first."],
    2: ["The server answered at once. What did your client do with that answer?",
        "In on_line, a reply has either 'result' or 'error'. For 'error', call "
        "slot.reject(McpError.from_reply(message['error'])) so the waiting request raises now; "
        "a reply with neither gets slot.reject(ProtocolViolation(...)).",
        "labs/GUIDE.md, section 4 (two kinds of error)."],
    3: ["How does a server say 'there is more'? And how does it say 'that was all'?",
        "Loop at most max_pages times: request tools/list with {'cursor': cursor} (none the first "
        "time), add the page's tools, take page.get('nextCursor'); stop only when it is None (not on "
        "a short or empty page, not on ''); past max_pages, raise ProtocolViolation.",
        "labs/GUIDE.md, section 2 (discovery)."],
    4: ["What does a model API's tool look like, and which MCP fields have no place in it?",
        "translate.to_anthropic_tool gives name, description ('[from alias] ...') and input_schema; "
        "title, annotations and outputSchema stay on the ToolEntry.",
        "labs/GUIDE.md, section 3 (what translation loses)."],
    5: ["Two servers, one tool name. Who can tell them apart?",
        "model_tool_name(alias, tool) returns f'mcp__{alias}__{tool}'; the alias comes from the "
        "config, never from serverInfo.name.",
        "labs/GUIDE.md, section 5 (several servers, one table)."],
    6: ["Which characters and lengths do model APIs accept in a tool name?",
        "Replace [^A-Za-z0-9_-] with '_'; if anything changed (a replaced dot counts: queue.stats "
        "and queue_stats) or the name is over 64, cut to 64 - 9 characters and append "
        "'_' + short_hash(alias, tool_name).",
        "labs/GUIDE.md, section 5, the paragraph on name shape."],
    7: ["Which errors are for the program, and which are for the model?",
        "Aggregator.call must return a result for every failure: the server's isError result "
        "as it came, and error_result(...) for unknown names and arguments that fail the schema.",
        "labs/GUIDE.md, section 4 (two kinds of error)."],
    8: ["If one server fails during discovery, what should the others see?",
        "In refresh, wrap each server's whole connect in its own try/except and anyio.fail_after("
        "self.discovery_timeout) (per-request timeouts alone let a slow server through); on "
        "failure, offline[spec.alias] = reason(exc).",
        "labs/GUIDE.md, section 6 (failure isolation)."],
    9: ["Follow one turn: the model's tool call, the call through the aggregator, the result back.",
        "run_agent loops at most max_steps turns: ask the model, run each tool call with "
        "tools.call(name, arguments), append the result as a 'tool' message.",
        "labs/GUIDE.md, section 4, the paragraph on the step limit."],
}


def next_hints(item: int, show_all: bool = False, state_file: Path = STATE) -> List[str]:
    """The hint lines to show now, advancing the item's rung unless showing all."""
    ladder = HINTS[item]
    labels = ["nudge", "construct", "read"]
    if show_all:
        return [f"hint {i + 1}/3 ({labels[i]}): {text}" for i, text in enumerate(ladder)]
    state = load_state(state_file)
    seen = state.get(str(item), 0)
    rung = min(seen, len(ladder) - 1)
    state[str(item)] = seen + 1
    try:
        state_file.write_text(json.dumps({"hints": state}, indent=1))
    except OSError:
        pass  # a read-only checkout still gets its hint
    lines = [f"hint {rung + 1}/3 ({labels[rung]}): {ladder[rung]}"]
    if seen >= len(ladder) - 1:
        lines.append("(that was the last hint for this item; --all shows the three together)")
    return lines


def load_state(path: Path = STATE) -> Dict[str, int]:
    try:
        return {str(k): int(v) for k, v in json.loads(path.read_text()).get("hints", {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}
