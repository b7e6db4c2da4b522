"""Extension items E1-E5 (`python -m checks --extensions`): consent, list changes,
progress, many tools, structured results. Each proves its claim from journals, like the nine.
"""

from __future__ import annotations

import json
import time
from typing import Any, Dict, List, Tuple

import anyio

from checks.exercises import EXTENSIONS
from checks.fixtures import Lab
from checks.harness import CannotJudgeHere, Fail, HarnessError
from checks.items.evidence import aggregator_for, found, is_number, point, refreshed, result_of
from checks.target import Target
from checks.trace import short


async def consent(target: Target, lab: Lab) -> str:
    asked: List[Tuple[str, str]] = []
    answers = {"close_ticket": "no", "schedule_followup": "session"}

    async def ask(request: Any) -> str:
        asked.append((request.alias, request.original_name))
        return answers.get(request.original_name, "once")

    # read_note is listed bare: with no annotations, every hint takes the spec's
    # default, and readOnlyHint's is false.
    # search claims read-only with a 1, not true: a hint is a boolean or nothing.
    # One page, so the item needs no exercise 2.
    specs = [lab.server("notes", None, "--annotations", "read_note=null", "--annotations", 'search={"readOnlyHint": 1}',
                        "--add-tool", "list_tags", "--page-size", "10"), lab.server("tickets", trusted=False)]
    audit = lab.directory / "audit.jsonl"
    where = point(target, EXTENSIONS["E1"])
    async with await aggregator_for(target, lab, specs, reference=True) as tools:
        await refreshed(target, tools)
        tools.consent = target.consent.Consent(ask, {"notes": True, "tickets": False})
        tools.audit = target.module("host.audit").AuditLog(audit)

        def name(alias: str, original: str) -> str:
            return str(found(tools, alias, original, EXTENSIONS["E1"]).model_name)
        await tools.call(name("notes", "list_tags"), {})
        if asked:
            raise Fail("expected: a read-only tool (readOnlyHint true) of a trusted server runs without asking\n"
                       f"got: asked {asked}{where}")
        # Each of these must ask, for its own reason.
        for alias, original, arguments, expected in (
                ("notes", "add_note", {"title": "t", "body": "b"},
                 "a tool that is not read-only asks first, even on a trusted server"),
                ("notes", "search", {"query": "paging"}, "only readOnlyHint true (the boolean) lets a call run "
                 "without asking\njournal: notes listed search with readOnlyHint 1, a number"),
                ("notes", "read_note", {"id": "n-1"}, "a tool listed without annotations asks first, even on a "
                 "trusted server: a missing readOnlyHint means false (the spec's default), never true\n"
                 "journal: notes listed read_note with no annotations"),
                ("tickets", "queue.stats", {}, "tickets is untrusted, so even its read-only queue.stats asks first")):
            asked.clear()
            result = await tools.call(name(alias, original), arguments)
            if asked != [(alias, original)]:
                # Not asked, and not run either: the consent gate failed (the learner's code raised).
                ran = "it ran without asking" if lab.journal(alias).calls(original) else \
                    f"the call never reached {alias}; it came back {short(json.dumps(result), 120)}"
                raise Fail(f"expected: {expected}\ngot: asked {asked or 'nobody'}; {ran}{where}")
        declined = await tools.call(name("tickets", "close_ticket"), {"ticket_id": "T-101"})
        closes = lab.journal("tickets").calls("close_ticket")
        if closes or not declined.get("isError") or "declined" not in json.dumps(declined):
            raise Fail(f"expected: a declined call never reaches the server and comes back as isError\n"
                       f"journal: tickets received close_ticket {len(closes)} time(s)\ngot: {declined!r:.120}{where}")
        for date in ("2026-12-01", "2026-12-02"):
            await tools.call(name("tickets", "schedule_followup"), {"ticket_id": "T-101", "date": date})
        if asked.count(("tickets", "schedule_followup")) != 1:
            raise Fail(f"expected: approved for the session, the second call does not ask again\n"
                       f"got: asked {asked}{where}")
    lines = [json.loads(line) for line in audit.read_text().splitlines()] if audit.exists() else []
    refused = [e for e in lines if e.get("tool") == "close_ticket" and e.get("decision") == "no"]
    if len(lines) != 8 or not refused:
        raise Fail(f"expected: all 8 calls in the audit log, the declined one with decision 'no'\n"
                   f"got: {len(lines)} line(s){where}")
    return ("trusted read-only ran; a write, a tool without annotations and a readOnlyHint of 1 asked; "
            "untrusted asked; declined never sent; session approval held; 8 calls audited")


RELIST_LIMIT = 10.0  # a re-list is one request: only a client that never re-lists waits this out


async def list_changes(target: Target, lab: Lab) -> str:
    where = point(target, EXTENSIONS["E2"])
    async with await aggregator_for(target, lab, [lab.server("notes"), lab.server("tickets")]) as tools:
        await refreshed(target, tools)
        before = {name: (e.alias, e.original_name) for name, e in tools.entries.items()}
        version = tools.version
        await tools.call(found(tools, "tickets", "install_plugin", EXTENSIONS["E2"]).model_name, {})
        # Until the new tool is in the table: a client that also rebuilt for another server
        # (the clause E2.5 says it must not) is judged by the clause, not by which rebuild came first.
        changed = False
        while tools.find("tickets", "plugin.weekly_report") is None:
            changed = await tools.wait_for_change(version, RELIST_LIMIT)
            if not changed:
                break
            version = tools.version
        sent = [e for e in lab.journal("tickets").entries()
                if e.kind == "out" and e.msg.get("method") == "notifications/tools/list_changed"]
        if not sent:
            raise HarnessError("the tickets server did not announce its list change")
        restarted = [alias for alias in ("notes", "tickets")
                     if any(len(lab.journal(alias).requests(m)) > 1 for m in ("server/discover", "initialize"))]
        if not changed and restarted:
            raise Fail("expected: only the server that announced the change re-listed, on its open connection "
                       "(clause E2.5)\n"
                       f"journal: {' and '.join(restarted)} started again (discovered anew) after tickets sent "
                       "notifications/tools/list_changed\n"
                       f"got: the servers were started again (a whole refresh), and the table never changed in "
                       f"{RELIST_LIMIT:g} s{where}")
        if not changed:
            raise Fail("expected: the table is rebuilt after a server announces a list change\n"
                       f"journal: tickets sent notifications/tools/list_changed; then "
                       f"{len(lab.journal('tickets').requests('tools/list')) - 1} new tools/list\n"
                       f"got: the table never changed in {RELIST_LIMIT:g} s{where}")
        after = {name: (e.alias, e.original_name) for name, e in tools.entries.items()}
        moved = {n: v for n, v in before.items() if after.get(n) != v}
        if moved:
            raise Fail(f"expected: tools that still exist keep their names\ngot: changed {moved}{where}")
        plugin = tools.find("tickets", "plugin.weekly_report")
        if plugin is None or plugin.model_name not in {t["name"] for t in tools.model_tools()}:
            raise Fail(f"expected: the new tool in the model's next table\ngot: {sorted(after)}{where}")
        await tools.call(plugin.model_name, {})
        if not lab.journal("tickets").calls("plugin.weekly_report"):
            raise Fail(f"expected: {plugin.model_name} reaches tickets as plugin.weekly_report{where}")
    return f"re-listed after the announcement; {len(before)} names unchanged; {plugin.model_name} added and called"
LONG_WORK_STEPS, LONG_WORK_GAP = 60, 0.025  # 1.5 s of work, a progress report every 25 ms
LONG_WORK_TIMEOUT = 1.0  # shorter than the work, forty times any gap between reports
STALLS = 5  # runs of the long call at most: one given up on with no report for a whole timeout is run again


def machine_stalled(began: float, handed: List[float], ended: float) -> bool:
    """Whether, somewhere in a call that reports every LONG_WORK_GAP, from its start through
    each report handed on to its end, a whole timeout passed with nothing handed on: the
    machine's doing. (Reports that waited out a stall come in a burst, often just before
    the client, waking late, gives up: the last gap alone would not show it.)"""
    times = [began, *handed, ended]
    return max(later - earlier for earlier, later in zip(times, times[1:])) >= LONG_WORK_TIMEOUT


async def progress(target: Target, lab: Lab) -> str:
    where = point(target, EXTENSIONS["E3"])
    seen: List[Tuple[float, float, Any, str]] = []  # when, progress, total, message
    long_seen: List[float] = []  # when each report of the long call reached its callback
    outcome: Dict[str, Any] = {}

    async def long_call() -> None:  # alone in its table, so it needs no exercise 3
        # Judged by cause: a client that gives up on the call while a report reached it
        # less than a timeout before ignores the reports. One that hands reports on (here
        # or to the other call) and gave up after none for a whole timeout met a stalled
        # machine (the work reports every 25 ms): the call is made again, with a server
        # of its own. One that hands none on at all is judged as it is.
        for _ in range(STALLS):
            long_seen.clear()
            # The call's own timeout, not the server's: its start and discovery keep the
            # client's default, however long a busy machine takes.
            long_spec = lab.server("tickets", "long-tickets", "--progress-steps", str(LONG_WORK_STEPS),
                                   "--progress-gap", str(LONG_WORK_GAP), progress_resets_timeout=True,
                                   tool_timeouts={"rebuild_index": LONG_WORK_TIMEOUT})
            async with await aggregator_for(target, lab, [long_spec], reference=True) as tools:
                await refreshed(target, tools)
                long_entry = found(tools, "long-tickets", "rebuild_index", EXTENSIONS["E3"])
                began = time.monotonic()
                outcome["long"] = await tools.call(long_entry.model_name, {}, on_progress=lambda value, total,
                                                   text: long_seen.append(time.monotonic()))
                ended = time.monotonic()
            stalled = machine_stalled(began, long_seen, ended) and bool(long_seen or seen)
            if not outcome["long"].get("isError") or not stalled:
                return
        outcome["stalled"] = True  # every run: judged below, once the other duties have had their say

    async with anyio.create_task_group() as group:
        group.start_soon(long_call)
        # Two malformed reports come first: a client must ignore them and read on.
        async with await aggregator_for(target, lab, [lab.server("tickets", None, "--bad-progress")], reference=True) as tools:
            await refreshed(target, tools)
            entry = found(tools, "tickets", "rebuild_index", EXTENSIONS["E3"])
            result = await tools.call(entry.model_name, {},
                                      on_progress=lambda value, total, text: seen.append((time.time(), value, total, text)))
            returned = time.time()
    long_result = outcome["long"]
    journal = lab.journal("tickets")
    reports = [e for e in journal.entries() if e.kind == "out" and e.msg.get("method") == "notifications/progress"]
    sent = [e for e in reports if is_number((e.msg.get("params") or {}).get("progress"))]
    malformed = [json.dumps(e.msg.get("params"))[:80] for e in reports if e not in sent]
    request = journal.calls("rebuild_index")[-1]
    token = ((request.msg.get("params") or {}).get("_meta") or {}).get("progressToken")
    if token is None:
        raise Fail(f"expected: the call asks for progress (a progressToken in _meta)\n"
                   f"journal: the request carried none{where}")
    values = [value for _, value, _, _ in seen]
    if result.get("isError") and malformed:
        raise Fail(f"expected: a malformed progress report is ignored; the call goes on\n"
                   f"journal: tickets sent {len(malformed)} malformed report(s) first ({'; '.join(malformed)}), "
                   f"then {len(sent)} good ones and the result\n"
                   f"got: {json.dumps(result)[:200]}; check that progress is a number before using it{where}")
    if len(values) != len(sent) or values != sorted(set(values)) or result.get("isError"):
        raise Fail(f"expected: every progress notification reaches the callback, in order\n"
                   f"journal: the server sent {len(sent)}\ngot: {values}{where}")
    said = [((e.msg.get("params") or {}).get("progress"), (e.msg.get("params") or {}).get("total"),
             (e.msg.get("params") or {}).get("message")) for e in sent]
    heard = [(value, total, text) for _, value, total, text in seen]
    if heard != said:
        raise Fail(f"expected: each report reaches the callback as the server sent it: progress, total, message\n"
                   f"journal: the server sent {said[:2]}...\ngot: {heard[:2]}...{where}")
    if any(at > returned for at, *_ in seen):
        raise Fail(f"expected: progress stops at the reply\ngot: progress after the result{where}")
    # progressResetsTimeout: the work outlasts the timeout, but no gap between
    # reports comes near it, so only a client that ignores the reports gives up.
    long_journal = lab.journal("long-tickets")
    call_id = long_journal.calls("rebuild_index")[-1].msg.get("id")
    cancelled = [e for e in long_journal.entries() if e.kind == "in"
                 and e.msg.get("method") == "notifications/cancelled"
                 and (e.msg.get("params") or {}).get("requestId") == call_id]
    reported = [e for e in long_journal.entries() if e.kind == "out"
                and e.msg.get("method") == "notifications/progress"]
    if (cancelled or long_result.get("isError")) and outcome.get("stalled"):
        # Every run met a machine too busy to hand on a report within a timeout, though the
        # client hands every report on: that says nothing of it (never a red for the machine).
        raise CannotJudgeHere(f"the machine stalled the event loop for over {LONG_WORK_TIMEOUT:g} s in each of "
                              f"{STALLS} runs of a call that reports every {LONG_WORK_GAP * 1000:.0f} ms; run E3 "
                              "again when it is less busy")
    if cancelled or long_result.get("isError"):
        raise Fail(f"expected: with progressResetsTimeout, each progress report starts the "
                   f"{LONG_WORK_TIMEOUT:g} s timeout again, so a call that keeps reporting is not cut off\n"
                   f"journal: long-tickets sent {len(reported)} progress report(s), one every "
                   f"{LONG_WORK_GAP * 1000:.0f} ms, then the client cancelled the call\n"
                   f"got: {json.dumps(long_result)[:160]}; note when each report came "
                   f"(self._progress_at) so the wait can be extended{where}")
    return (f"{len(malformed)} malformed progress reports ignored; {len(values)} progress notifications, in order, all before the reply (token {token!r}); "
            f"a {LONG_WORK_STEPS * LONG_WORK_GAP:g} s call outlived its {LONG_WORK_TIMEOUT:g} s timeout "
            f"on {len(long_seen)} progress reports")
RANKING_QUERY = "alpha beta gamma"
RANKING_ORDER = ["beta_gamma_seven", "gamma_nine", "rank_four", "alpha_ten", "alpha_two", "rank_three", "rank_one",
                 "rank_eight", "rank_five"]


async def many_tools(target: Target, lab: Lab) -> str:
    where = point(target, EXTENSIONS["E4"])
    specs = [lab.server("notes"), lab.server("misbehave", "shop", "--scenario", "catalogue"),
             lab.server("misbehave", "lab", "--scenario", "ranking")]
    async with await aggregator_for(target, lab, specs) as tools:
        await refreshed(target, tools)
        if not target.meta_tools.too_many(tools):
            raise Fail(f"expected: {len(tools.entries)} tools count as too many for one table{where}")
        meta = target.meta_tools.MetaTools(tools)
        table = [t["name"] for t in meta.model_tools()]
        hits = await meta.call("search_tools", {"query": "export invoice pdf"})
        listed = (hits.get("structuredContent") or {}).get("tools") or []
        wanted = found(tools, "shop", "export_invoice", EXTENSIONS["E4"])
        if not listed or listed[0].get("name") != wanted.model_name:
            raise Fail(f"expected: search_tools finds export_invoice first among {len(tools.entries)} tools "
                       f"for the query 'export invoice pdf'\n"
                       f"got: {[t.get('name') for t in listed][:3] or 'nothing'}{where}")
        ranked = await meta.call("search_tools", {"query": RANKING_QUERY, "limit": 10})
        order = [tools.entries[t["name"]].original_name if t.get("name") in tools.entries else t.get("name")
                 for t in (ranked.get("structuredContent") or {}).get("tools") or []]
        if order != RANKING_ORDER:
            raise Fail(f"expected: for {RANKING_QUERY!r}, lab's tools in this order: {', '.join(RANKING_ORDER)} "
                       f"(3 points per query word in the name, 2 in the title, 1 in the description; ties "
                       f"keep the catalogue's order; no match, not listed)\ngot: {', '.join(map(str, order))}"
                       f"{where}")
        await meta.call("call_tool", {"name": listed[0]["name"], "arguments": {}})
        received = [c.msg["params"]["name"] for c in lab.journal("shop").calls()]
        if received != ["export_invoice"] or [t["name"] for t in meta.model_tools()] != table:
            raise Fail(f"expected: call_tool sends the original name; the two meta-tools never change\n"
                       f"journal: shop received {received}{where}")
    return (f"{len(tools.entries)} tools behind {table}; export_invoice found first and called by its original "
            f"name; {len(RANKING_ORDER)} tools ranked by the rule")


async def structured(target: Target, lab: Lab) -> str:
    where = point(target, EXTENSIONS["E5"])
    async with await aggregator_for(target, lab, [lab.server("notes")]) as tools:
        await refreshed(target, tools)
        run = await target.agent.run_agent("Read note n-2", tools, target.mock_model.MockModel(), max_steps=3)
        served = result_of(lab.journal("notes"), "read_note").get("structuredContent")
        # A note that does not exist: the error result carries data too, which no
        # outputSchema vouches for and no program may take for the note.
        missing = await target.agent.run_agent("Read note n-9", tools, target.mock_model.MockModel(), max_steps=3)
        failed = result_of(lab.journal("notes"), "read_note")
    step = run.steps[0] if run.steps else None
    if step is None or step.structured != served:
        raise Fail(f"expected: the step carries the checked structuredContent as data\n"
                   f"journal: the server sent {served!r}\ngot: {getattr(step, 'structured', None)!r}{where}")
    wrong = missing.steps[0] if missing.steps else None
    if not failed.get("isError") or wrong is None:
        raise HarnessError("the notes server did not answer read_note for n-9 with an error")
    if wrong.structured is not None:
        raise Fail(f"expected: an isError result gives the program no data (None), even when it carries "
                   f"structuredContent\njournal: notes answered read_note n-9 with isError and "
                   f"structuredContent {json.dumps(failed.get('structuredContent'))[:80]}\n"
                   f"got: {wrong.structured!r:.120}; the program would take it for the note{where}")
    message = target.model.Message("tool", tool_call_id="c1", result=step.result)
    blocks = target.module("model_apis").anthropic_messages([message])[0]["content"][0]["content"]
    if any(b.get("type") != "text" for b in blocks) or "structuredContent" in json.dumps(blocks):
        raise Fail(f"expected: the model still gets the text block only\ngot: {blocks!r:.120}{where}")
    return "the program got the note as data, and no data from an error result; the model got its text"
