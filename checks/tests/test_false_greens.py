"""Wrong solutions a learner would write (and lazy and faked ones): each is red
on the right item, for the right reason. A check that one of these passes is a bug."""

from __future__ import annotations

from checks.exercises import regions
from checks.harness import Verdict
from checks.target import ROOT
from checks.tests.conftest import Variant, verdicts_for

# The reference pager, as the solution has it; each test below breaks it one way.
PAGER = regions((ROOT / "solution" / "discovery.py").read_text())[2]


def pager(body: str) -> "dict[str, tuple[str, str]]":
    return {"discovery.py": (PAGER, body)}


def test_a_pager_that_fakes_the_missing_tools_is_red_on_item_3(variant: Variant) -> None:
    faked = '''    page = await server.request("tools/list", {})
    tools.extend(page_tools(page))
    known = {t["name"] for t in tools}
    tools.extend({"name": n, "inputSchema": {"type": "object"}} for n in ("add_note",) if n not in known)
    return tools
'''
    verdict = verdicts_for(variant("solution", edits=pager(faked)), only={3})[3]
    assert verdict.status == "fail"
    assert "1 tools/list request(s)" in verdict.message and "nextCursor ''" in verdict.message


def test_a_pager_that_stops_on_an_empty_cursor_is_red_on_item_3(variant: Variant) -> None:
    falsy = PAGER.replace("        if cursor is None:\n", "        if not cursor:\n")
    assert falsy != PAGER
    verdict = verdicts_for(variant("solution", edits=pager(falsy)), only={3})[3]
    assert verdict.status == "fail"
    assert "nextCursor ''" in verdict.message and 'or "")' in verdict.message


def test_a_pager_without_a_page_limit_is_red_on_item_3(variant: Variant) -> None:
    unguarded = PAGER.replace("    for _ in range(max_pages):\n", "    while True:\n")
    unguarded = unguarded[:unguarded.index("    raise ProtocolViolation")]
    assert "max_pages" not in unguarded
    verdict = verdicts_for(variant("solution", edits=pager(unguarded)), only={3})[3]
    assert verdict.status == "fail"
    assert "stopped after max_pages=5 pages" in verdict.message
    assert "received 40 tools/list requests" in verdict.message


def test_a_namer_that_hashes_only_when_it_cuts_is_red_on_item_6(variant: Variant) -> None:
    old = "    if legal == name and len(name) <= MAX_MODEL_NAME:\n        return name\n"
    new = "    if len(legal) <= MAX_MODEL_NAME:\n        return legal\n"
    verdicts = verdicts_for(variant("solution", edits={"naming.py": (old, new)}), only={5, 6})
    assert verdicts[5].status == "pass"
    assert verdicts[6].status == "fail"
    assert "queue_stats" in verdicts[6].message and "exercise 3" in verdicts[6].message


def test_a_refresh_without_a_per_server_limit_is_red_on_item_8(variant: Variant) -> None:
    old = ("                with anyio.fail_after(self.discovery_timeout):\n"
           "                    found[spec.alias] = await self.connect(spec)\n")
    new = "                found[spec.alias] = await self.connect(spec)\n"
    verdict = verdicts_for(variant("solution", edits={"aggregator.py": (old, new)}), only={8})[8]
    assert verdict.status == "fail"
    assert "it came online" in verdict.message and "self.discovery_timeout" in verdict.message


BARE_BRANCH = "            slot.reject(ProtocolViolation(\"a reply with neither 'result' nor 'error'\"))\n"


def item_2_with_bare_branch(variant: Variant, old: str, new: str) -> Verdict:
    return verdicts_for(variant("solution", edits={"stdio_client.py": (old, new)}), only={2})[2]


def test_an_on_line_that_drops_a_reply_with_neither_member_is_red_on_item_2(variant: Variant) -> None:
    verdict = item_2_with_bare_branch(variant, "        else:\n" + BARE_BRANCH, "")
    assert verdict.status == "fail"
    assert "notes/status was still waiting: that reply was dropped" in verdict.message


def test_an_on_line_that_resolves_a_bare_reply_as_a_result_is_red_on_item_2(variant: Variant) -> None:
    new = '            slot.resolve(message.get("result", {"resultType": "complete"}))\n'
    verdict = item_2_with_bare_branch(variant, BARE_BRANCH, new)
    assert verdict.status == "fail"
    assert "expected: ProtocolViolation" in verdict.message and "a result {" in verdict.message


def test_progress_that_does_not_note_its_time_is_red_on_e3(variant: Variant) -> None:
    old = "        self._progress_at[token] = anyio.current_time()\n"
    verdicts = verdicts_for(variant("solution", edits={"stdio_client.py": (old, "")}),
                            only=set(), extensions=True)
    assert verdicts[13].status == "fail"
    assert "progressResetsTimeout" in verdicts[13].message and "_progress_at" in verdicts[13].message
    assert all(v.status == "pass" for n, v in verdicts.items() if n != 13)


def test_an_agent_loop_that_stops_at_an_error_result_is_red_on_item_9(variant: Variant) -> None:
    old = "            messages.append(Message(\"tool\", tool_call_id=call.id, result=result))\n"
    new = old + "            if result.get(\"isError\"):\n                run.answer = \"failed\"\n                return run\n"
    verdict = verdicts_for(variant("solution", edits={"agent.py": (old, new)}), only={9})[9]
    assert verdict.status == "fail"
    assert "tickets received 1 schedule_followup call(s)" in verdict.message
