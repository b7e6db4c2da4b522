"""Three hints per item, from a nudge to the guide's section to the construct.

`python -m checks --hint N` shows the next rung for item N (1-9, or E1-E11);
where each item stands is kept in `.checks-state.json` at the project root,
ignored by git. `--hint N --all` shows all three. The construct comes last,
after the learner has been sent to read: the ladder teaches before it tells.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

from checks.target import ROOT

STATE = ROOT / ".checks-state.json"
LABELS = ["nudge", "read", "construct"]

HINTS: Dict[str, List[str]] = {
    "1": ["Connecting is start, request, close. Which of those does your change touch?",
          "labs/GUIDE.md, section 8 (the walkthrough): follow one request through your own "
          "starter/stdio_client.py.",
          "Replies are matched in StdioClient.on_line by the reply's 'id', looked up in the pending "
          "table; close() must end with the process reaped (aclose waits, then terminates, then kills)."],
    "2": ["The server answered at once. What did your client do with that answer?",
          "labs/GUIDE.md, section 4 (two kinds of error).",
          "In on_line, a reply has either 'result' or 'error': test for the key ('result' in message), "
          "since {} is a result too. For 'error', reject the waiting slot with the server's error "
          "(McpError.from_reply) so the request raises now; a reply with neither gets a ProtocolViolation."],
    "3": ["How does a server say 'there is more'? And how does it say 'that was all'?",
          "labs/GUIDE.md, section 2 (discovery).",
          "Loop at most max_pages times: request tools/list with {'cursor': cursor} (no cursor the "
          "first time: {} or no params, the same on the wire), add the page's tools, take page.get('nextCursor'); stop only when it is None (not on "
          "a short or empty page, not on ''); past max_pages, raise ProtocolViolation."],
    "4": ["What does a model API's tool look like, and which MCP fields have no place in it?",
          "labs/GUIDE.md, section 3 (what translation loses).",
          "translate.to_anthropic_tool gives name, description ('[from alias] ...') and input_schema; "
          "title, annotations and outputSchema stay on the ToolEntry."],
    "5": ["Two servers, one tool name. Who can tell them apart?",
          "labs/GUIDE.md, section 5 (several servers, one table).",
          "model_tool_name(alias, tool) starts from f'mcp__{alias}__{tool}'; the alias comes from the "
          "config, never from serverInfo.name."],
    "6": ["Which characters and lengths do model APIs accept in a tool name?",
          "labs/GUIDE.md, section 5, the paragraph on name shape.",
          "Replace every character outside [A-Za-z0-9_-] with '_' (spaces, '/', 'é' too, not only dots); "
          "if anything changed (a replaced dot counts: queue.stats and queue_stats) or the name is too "
          "long, cut it to MAX_MODEL_NAME - HASH_LENGTH - 1 and append '_' + short_hash(alias, tool_name). "
          "A name that is legal and fits stays as it is."],
    "7": ["Which errors are for the program, and which are for the model?",
          "labs/GUIDE.md, section 4 (two kinds of error).",
          "Aggregator.call must return a result for every failure: the server's isError result "
          "as it came, and error_result(...) for unknown names and arguments that fail the schema."],
    "8": ["If one server fails during discovery, what should the others see?",
          "labs/GUIDE.md, section 6 (failure isolation).",
          "In refresh, wrap each server's whole connect in its own try/except and anyio.fail_after("
          "self.discovery_timeout) (per-request timeouts alone let a slow server through; asyncio.wait_for "
          "fails on trio, which the checks run it on too); on failure, offline[spec.alias] = reason(exc). "
          "Keep the task group, so every server's discovery starts at once."],
    "9": ["Follow one turn: the model's tool call, the call through the aggregator, the result back.",
          "labs/GUIDE.md, section 4, the paragraph on the step limit.",
          "run_agent loops at most max_steps turns: ask the model, run each tool call with "
          "tools.call(name, arguments), append the result as a 'tool' message."],
    "E1": ["An annotation is a server describing itself. What may it decide?",
           "labs/GUIDE.md, section 11.1 (consent).",
           "runs_without_asking: only a trusted server's tool whose readOnlyHint is the boolean true "
           "(entry.annotations fills in the spec's defaults; test with `is True`) runs without asking; "
           "everything else, and every tool of an untrusted server, asks."],
    "E2": ["A server said its tools changed. What must the model's next turn see?",
           "labs/GUIDE.md, section 11.2 (changes).",
           "list_changed must not block: start self._relist(alias) in the task group, which lists "
           "again and rebuilds the table; names that still exist keep their names."],
    "E3": ["Progress comes with a token. Whose request was it, and what does it do to the timeout?",
           "labs/GUIDE.md, section 11.3 (progress).",
           "In _on_progress, find the handler in self._progress for params['progressToken'] (a token is an "
           "int or a str: true, 1.0 or a list is none, and a list cannot be looked up); if progress is not "
           "a number (is_number), ignore the notification; else note the time (anyio.current_time()) in "
           "self._progress_at[token] and call the handler with progress, total (None unless a number) "
           "and message ('' unless a str)."],
    "E4": ["500 tools do not fit in a table. How would you find the right one by words?",
           "labs/GUIDE.md, section 11.4 (many tools).",
           "rank scores each entry 3 per query word in its name (the tool's own, entry.original_name, "
           "split on _ and .), 2 per word in its title, 1 per word in its description (the tool's own, "
           "in entry.tool: not ToolEntry.title or .description, not annotations.title; one that is not a str is "
           "none); it leaves out score 0 and returns the best first, equal scores in catalogue order, at most "
           "`limit`."],
    "E5": ["The program wants data, the model wants text. Where does each come from?",
           "labs/GUIDE.md, section 11.5 (structured results).",
           "structured_data returns a successful result's structuredContent as it came (None when it "
           "has none), with or without an outputSchema: call_tool has already turned a result that breaks "
           "its schema into an isError. For an isError result (any true isError, even one that carries "
           "structuredContent), or no entry (entry is None), None."],
    "E6": ["A task can say working, input_required, completed, failed or cancelled. Which ones end the wait?",
           "labs/GUIDE.md, section 11.6 (tasks).",
           "settled returns state.result for completed (a dict, isError or not), an error_result naming "
           "the server's error (code and message; the statusMessage when there is no error) for failed, "
           "one saying it was cancelled (with the statusMessage) for cancelled, and None for working "
           "and input_required. The server's words in the text through shown(text, limit), which cuts after "
           "it shows (slice before it and each escape grows 4-6 times): a task id, if you name it, with "
           "ID_CHARS; its code, message or statusMessage with REASON_CHARS (the code and message as one text "
           "or each on its own). McpError.from_reply reads the error (a code that is no int is none); what "
           "its data holds must not push the code and message out of the cut."],
    "E7": ["A form field is one small schema. Which kinds can a person fill in, and what must be refused?",
           "labs/GUIDE.md, section 11.7 (elicitation).",
           "field_from_schema: string (format from FORMATS, or 'choice' with _options), number/integer "
           "with minimum and maximum (bound() keeps numbers only), boolean, an array of choices ('choices'); anything "
           "else raises Unsupported. The title is the schema's title as text (str()), or the property's name "
           "when it has none; the description is '' unless a str. Set secret when SECRET_NAME matches the "
           "name, or SECRET_WORDS matches the title, description or format (the schema's, whatever the kind), "
           "each on its own ('pin' alone is a PIN only as a name; 'pin the version' is no secret). Leave the "
           "schema as it came."],
    "E8": ["A type checker can only refuse a wrong value if the stub names the values that are right. "
           "Which Python type lists exact values?",
           "labs/GUIDE.md, section 11.8 (code mode).",
           "literal: for str, int, bool and None values, return 'Literal[' + the values' repr() joined by "
           "', ' + ']'; if any value is something else (a float, a list, an object), return None."],
    "E9": ["An event stream is lines: which line ends an event, which lines are not fields at all, and "
           "what belongs to a field's value after the colon?",
           "labs/GUIDE.md, section 11.9 (remote servers).",
           "_line: '' -> return self._dispatch(); ':...' -> None; else split at the first ':', drop one "
           "leading space of the value; data appends to self._data, event sets self._type, id sets "
           "self.last_id (not if it holds '\\0'), retry sets self.retry_ms when it is all ASCII digits (str.isdigit() "
           "is true for '²' too) and no longer than RETRY_DIGITS; return None."],
    "E10": ["A link is one server's word. Which servers may a URI be read from, and what if more than one "
            "offered it?",
            "labs/GUIDE.md, section 11.10 (resources).",
            "resolve: not a non-empty str -> (None, NO_URI); holders = self._by_uri.get(uri, []); none -> "
            "(None, offered_by_none(uri)), whatever server is named; a server named (a non-empty str) -> "
            "(server, '') if it is in holders, else (None, not_offered_by(...)); one holder -> (it, ''); "
            "several -> (None, offered_by_several(...)). The helpers cut and escape the server's words."],
    "E11": ["Who must say yes, and when, before a server's request reaches the model, and before the "
            "model's words go back?",
            "labs/GUIDE.md, section 11.11 (sampling).",
            "__call__: self.budget.take(); ask = sampling_ask(alias, params, self.cap); inside "
            "self.terminal.turn(...): say(describe_ask(ask)); not approved(await self._read(...)) -> raise "
            "Declined; system, messages = conversation(ask, new_fence()); turn = await capped("
            "self.model, ask.max_tokens).next_turn(system, [], messages); text, cut = cut_reply(turn.text, "
            "ask.max_tokens); say(describe_reply(ask, text, ...)) with the text that goes back; not "
            "approved(...) -> raise Declined; after the turn, return reply_result(text, self.model.name, cut) "
            "(cut from cut_reply: maxTokens only when the reply was cut). A model that fails: let its error "
            "out, not Declined."],
}


def next_hints(item: "int | str", show_all: bool = False, state_file: Path = STATE) -> List[str]:
    """The hint lines to show now, advancing the item's rung unless showing all."""
    ladder = HINTS[str(item).upper()]
    labels = LABELS
    if show_all:
        return [f"hint {i + 1}/3 ({labels[i]}): {text}" for i, text in enumerate(ladder)]
    state = load_state(state_file)
    seen = state.get(str(item).upper(), 0)
    rung = min(seen, len(ladder) - 1)
    state[str(item).upper()] = seen + 1
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
