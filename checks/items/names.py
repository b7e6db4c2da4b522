"""Items 4-7: the table. Translation for both model APIs, names for two servers' tools
that collide, names a model API takes, and the two kinds of error coming back as results.
"""

from __future__ import annotations

import re
from typing import Any

from checks.exercises import EXERCISES
from checks.fixtures import Lab
from checks.harness import Fail, HarnessError
from checks.items.evidence import aggregator_for, edit, refreshed, result_of
from checks.target import Target


MODEL_NAME = re.compile(r"\A[A-Za-z0-9_-]{1,64}\Z")  # \Z: `$` matches before a final "\n"
LONG = "summarize_open_tickets_by_queue_priority_and_assignee_for_weekly_review"
TWIN_CSV = "export_ticket_history_including_comments_and_attachments_for_audit_as_csv"
TWIN_JSON = "export_ticket_history_including_comments_and_attachments_for_audit_as_json"
DOTTED = "queue.stats"
UNDERSCORED = "queue_stats"  # the dotted name's twin once the dot is replaced


# Names the spec does not forbid but no model API takes: a space, '/', ':', '@'
# and a letter beyond ASCII (which \w would let through). Added for item 6 only.
ODD_NAMES = ("weekly report", "queue/open", "ticket:export", "owner@team", "résumé")


# Exactly 64 characters once prefixed: legal as it is, so it must stay as it is.
EXACT_FIT = "count_open_tickets_per_owner_and_queue_for_review_"
PREFIX = "mcp__tickets__"


async def translation(target: Target, lab: Lab) -> str:
    async with await aggregator_for(target, lab, [lab.server("tickets")]) as tools:
        await refreshed(target, tools)
        anthropic = {t["name"]: t for t in tools.model_tools()}
        openai = {t["function"]["name"]: t for t in tools.model_tools("openai")}
        listed = [t for _, reply in [(r, lab.journal("tickets").reply_to(r))
                                     for r in lab.journal("tickets").requests("tools/list")]
                  if reply for t in (reply.msg.get("result") or {}).get("tools", [])]
        for tool in listed:
            entry = tools.find("tickets", tool["name"])
            if entry is None:
                raise Fail(f"the server listed {tool['name']!r} but the registry has no entry for it")
            model_tool = anthropic.get(entry.model_name)
            if model_tool is None or set(model_tool) != {"name", "description", "input_schema"}:
                raise Fail(f"model tool for {tool['name']!r} should have exactly name, description "
                           f"and input_schema; got {sorted(model_tool or {})}")
            if model_tool["input_schema"] != tool["inputSchema"]:
                raise Fail(f"{entry.model_name}: input_schema differs from the server's inputSchema")
            if "tickets" not in model_tool["description"] or \
                    tool["description"] not in model_tool["description"]:
                raise Fail(f"{entry.model_name}: the description should keep the server's text and say "
                           f"where it comes from; got {model_tool['description']!r}")
            function = openai.get(entry.model_name, {}).get("function", {})
            if function.get("parameters") != tool["inputSchema"]:
                raise Fail(f"{entry.model_name}: the OpenAI-style tool needs 'parameters'")
            if entry.title != tool.get("title", tool["name"]):
                raise Fail(f"{entry.model_name}: registry title {entry.title!r}, server said "
                           f"{tool.get('title')!r}")
            if any(entry.annotations.get(k) != v for k, v in tool.get("annotations", {}).items()):
                raise Fail(f"{entry.model_name}: the registry lost the server's annotations")
            if entry.output_schema != tool.get("outputSchema"):
                raise Fail(f"{entry.model_name}: the registry lost the outputSchema")
        if not listed:
            raise HarnessError("the tickets server listed no tools")
    return (f"{len(listed)} tools translated for both API shapes with provenance; "
            "title, annotations and outputSchema kept in the registry")


async def collision(target: Target, lab: Lab) -> str:
    specs = [lab.server("notes"), lab.server("tickets")]
    async with await aggregator_for(target, lab, specs) as tools:
        await refreshed(target, tools)
        entries = {alias: tools.find(alias, "search") for alias in ("notes", "tickets")}
        names = {alias: entry.model_name if entry else None for alias, entry in entries.items()}
        where = edit(target, EXERCISES[3])
        if None in names.values() or names["notes"] == names["tickets"]:
            dropped = "; ".join(getattr(tools, "dropped", [])) or "nothing recorded"
            raise Fail(f"expected: both 'search' tools under distinct model-facing names\n"
                       f"got: {names}; one search shadows the other (left out: {dropped}){where}")
        for alias, name in names.items():
            result = await tools.call(name, {"query": "timeouts"})
            received = [c.msg["params"]["name"] for c in lab.journal(alias).calls()]
            if received != ["search"]:
                raise Fail(f"expected: calling {name} sends 'search' to {alias}\n"
                           f"journal: {alias} received {received}\ngot: {result!r:.100}{where}")
    return f"{names['notes']} -> notes/search and {names['tickets']} -> tickets/search, each as 'search'"


async def names_fit(target: Target, lab: Lab) -> str:
    odd = [arg for name in (*ODD_NAMES, EXACT_FIT) for arg in ("--add-tool", name)]
    specs = [lab.server("notes"), lab.server("tickets", None, *odd)]
    where = edit(target, EXERCISES[3])
    async with await aggregator_for(target, lab, specs) as tools:
        await refreshed(target, tools)
        bad = [n for n in tools.entries if not MODEL_NAME.match(n)]
        if bad:
            shown = ", ".join(f"{n!r} ({why_illegal(n)})" for n in bad)
            raise Fail(f"expected: every model-facing name matches {MODEL_NAME.pattern}: every character "
                       f"outside it replaced, not only dots\ngot: {shown}{where}")
        originals = (LONG, TWIN_CSV, TWIN_JSON, DOTTED, UNDERSCORED, *ODD_NAMES, EXACT_FIT)
        picked = {original: tools.find("tickets", original) for original in originals}
        missing = [o for o, e in picked.items() if e is None]
        if missing:
            raise Fail(f"expected: a model-facing name for each of {missing}\n"
                       f"got: left out: {'; '.join(tools.dropped) or 'nothing recorded'}{where}")
        if len({e.model_name for e in picked.values()}) != len(picked):
            raise Fail(f"expected: long, twin and dotted names stay unique (append a hash)\n"
                       f"got: {[e.model_name for e in picked.values()]}{where}")
        kept = [e for e in tools.entries.values() if e.alias == "tickets"
                and MODEL_NAME.match(f"{PREFIX}{e.original_name}") and e.model_name != f"{PREFIX}{e.original_name}"]
        if kept:
            raise Fail(f"expected: a name that is legal and fits ({MODEL_NAME.pattern}) stays exactly "
                       f"mcp__<alias>__<tool>\ngot: {kept[0].original_name!r} "
                       f"({len(PREFIX + kept[0].original_name)} chars once prefixed) became {kept[0].model_name!r}"
                       f"{where}")
        cut = [e for e in picked.values() if len(PREFIX + e.original_name) > 64]
        short = [e for e in cut if len(e.model_name) != 64 or not e.model_name.startswith(PREFIX)]
        if short:
            raise Fail(f"expected: a name that is too long is cut only as far as it must be: it keeps the prefix "
                       f"{PREFIX!r} and, with its hash, is exactly 64 characters\ngot: "
                       f"{short[0].original_name!r} became {short[0].model_name!r} ({len(short[0].model_name)} "
                       f"chars){where}")
        for original, entry in picked.items():
            plain = f"{PREFIX}{original}"
            suffix = "_" + target.naming.short_hash("tickets", original)
            if entry.model_name != plain and not entry.model_name.endswith(suffix):
                raise Fail(f"expected: whenever the name had to change (cut, or a character "
                           f"replaced), it ends with \"_\" + short_hash(alias, tool)\n"
                           f"got: {original!r} became {entry.model_name!r}, without {suffix!r}"
                           f"{wrong_hash(target, original, entry.model_name) or clash_of(original, entry.model_name, tools)}"
                           f"{where}")
        for original, entry in picked.items():
            await tools.call(entry.model_name, {})
            received = lab.journal("tickets").calls()[-1].msg["params"]["name"]
            if received != original:
                raise Fail(f"expected: {entry.model_name} reaches tickets as {original!r}\n"
                           f"journal: tickets received {received!r}{where}")
    return (f"{len(tools.entries)} legal names; {DOTTED} -> {picked[DOTTED].model_name} and {UNDERSCORED} -> "
            f"{picked[UNDERSCORED].model_name}; long and twin names cut and hashed; all reached tickets as named")


def why_illegal(name: str) -> str:
    """What makes a model-facing name illegal, in a few words."""
    odd = sorted({c for c in name if not MODEL_NAME.match(c)})
    said = [f"{len(name)} chars"] + ([f"{', '.join(repr(c) for c in odd)} not allowed"] if odd else [])
    return "; ".join(said)


def wrong_hash(target: Target, original: str, model_name: str) -> str:
    """When the name does end in a hash, but not of the original alias and name:
    say what it hashed instead, where that can be told."""
    found = re.search(r"_([0-9a-f]{8})\Z", model_name)
    if found is None:
        return ""
    hashed = found.group(1)
    legal = re.sub(r"[^A-Za-z0-9_-]", "_", original)
    for what, text in (("the changed name", legal), ("the prefixed name", f"{PREFIX}{original}"),
                       ("the changed prefixed name", re.sub(r"[^A-Za-z0-9_-]", "_", f"{PREFIX}{original}"))):
        if target.naming.short_hash("tickets", text) == hashed or target.naming.short_hash(text, "") == hashed:
            return (f"; it ends with a hash of {what} ({text!r}), where short_hash takes the alias and the "
                    f"tool's name as the server sent it")
    return "; it ends with a hash, but not short_hash(alias, tool_name) of the name the server sent"


def clash_of(original: str, model_name: str, tools: Any) -> str:
    """Why a changed name needs the hash, when another tool shows it: the tool
    whose name would come out the same without one."""
    for entry in tools.entries.values():
        other = entry.original_name
        if other != original and entry.alias == "tickets" and \
                re.sub(r"[^A-Za-z0-9_-]", "_", other) == re.sub(r"[^A-Za-z0-9_-]", "_", original):
            return f"; {original!r} and {other!r} would then share a name"
    return "; a name that was changed needs the hash, or two tools may share it"


async def error_classes(target: Target, lab: Lab) -> str:
    async with await aggregator_for(target, lab, [lab.server("tickets")]) as tools:
        await refreshed(target, tools)
        entry = tools.find("tickets", "schedule_followup")
        if entry is None:
            raise Fail("schedule_followup from tickets is missing from the registry")
        journal = lab.journal("tickets")
        fixable = await tools.call(entry.model_name, {"ticket_id": "T-101", "date": "next friday"})
        served = result_of(journal, "schedule_followup")
        if not served.get("isError"):
            raise HarnessError("the tickets server did not return its date error")
        if not isinstance(fixable, dict) or fixable.get("content") != served.get("content") \
                or fixable.get("isError") is not True:
            raise Fail(f"the server's isError result must come back verbatim so the model can fix its "
                       f"call; server sent {served.get('content')!r:.120}, call() returned {fixable!r:.120}")
        unknown = await tools.call("mcp__nowhere__nothing", {})
        calls_before = len(journal.calls())
        invalid = await tools.call(entry.model_name, {"ticket_id": "T-101"})
        for label, result in (("an unknown tool name", unknown), ("arguments missing 'date'", invalid)):
            if not isinstance(result, dict) or result.get("isError") is not True or not result.get("content"):
                raise Fail(f"{label} should give an isError result with a text the model can read; "
                           f"got {result!r:.120}")
        if len(journal.calls()) != calls_before:
            raise Fail("arguments that fail the inputSchema reached the server; check them locally "
                       "before sending")
    return "the date error came back verbatim; unknown name and bad arguments became isError results, " \
           "the latter without reaching the server"
