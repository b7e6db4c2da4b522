"""Extension item E8 (code mode): one script against typed stubs, run in the
sandbox, every call inside it still the client's own.

Each part uses one fixture server alone in its table, so no exercise 3 is
needed, and is judged from that server's journal: which calls reached it,
with which arguments, and which never did.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List

from checks.exercises import EXTENSIONS
from checks.extensions import found, point
from checks.fixtures import Lab
from checks.harness import Fail
from checks.items import aggregator_for, refreshed
from checks.task_items import text
from checks.target import Target

RUN_SCRIPT = "run_script"
# A script that never ends meets this much running time and is stopped; a
# correct script uses a few milliseconds of it, however busy the machine,
# because the clock runs only while the script itself executes.
ENDLESS_LIMIT = 2.0

# The search on line 3 is the witness: if it reaches the server, the script ran.
WRONG_CHOICE = ("from tickets import search, set_priority\n\n"
                "await search(query='login')\n"
                "await set_priority(ticket_id='T-101', priority='urgent')\n")
RIGHT_CHOICES = ("from tickets import set_priority, export_tickets\n\n\n"
                 "async def later() -> None:  # never called, but checked: each enum has its own values\n"
                 "    await export_tickets(format='csv')\n\n\n"
                 "print(await set_priority(ticket_id='T-102', priority='high'))\n")
DIGEST = ("from notes import search, read_note\n\n"
          "found = await search(query='timeouts naming paging')\n"
          "bodies = [(await read_note(id=hit['id']))['body'] for hit in found['results']]\n"
          "print(len(bodies), 'notes read')\n")
DECLINED = ("from tickets import close_ticket\n\n"
            "try:\n"
            "    await close_ticket(ticket_id='T-101')\n"
            "except RuntimeError as error:\n"
            "    print('kept open:', error)\n")
ENDLESS = "n = 0\nwhile True:\n    n += 1\n"


class Gate:
    """Stands in for the client's Consent: records what it was asked to decide;
    declines close_ticket and allows everything else once."""

    def __init__(self) -> None:
        self.asked: List[Any] = []

    async def decide(self, entry: Any, arguments: Any) -> str:
        self.asked.append((entry.original_name, arguments))
        return "no" if entry.original_name == "close_ticket" else "once"


async def run_script(code: Any, script: str) -> Dict[str, Any]:
    result: Dict[str, Any] = await code.call(RUN_SCRIPT, {"script": script})
    return result


def arguments_sent(lab: Lab, alias: str, tool: str) -> List[Any]:
    return [(e.msg.get("params") or {}).get("arguments") for e in lab.journal(alias).calls(tool)]


async def code_mode(target: Target, lab: Lab) -> str:
    where = point(target, EXTENSIONS["E8"])
    module = target.module("code_mode")
    missing = target.module("sandbox").missing()
    if missing:
        raise Fail(f"expected: code mode can run a script\ngot: {missing}{where}")
    # 1. Types from the schema: a value outside an enum is refused before anything runs.
    async with await aggregator_for(target, lab, [lab.server("tickets")]) as tools:
        gate = Gate()
        tools.consent = gate  # the client's consent gate, answered here (E1 owns its policy)
        await refreshed(target, tools)
        found(tools, "tickets", "set_priority", EXTENSIONS["E8"])
        code = module.CodeMode(tools)
        refused = await run_script(code, WRONG_CHOICE)
        ran = arguments_sent(lab, "tickets", "search")
        if ran or not refused.get("isError") or "script.py:4" not in text(refused):
            raise Fail("expected: priority='urgent' is refused by the type check before the script runs, "
                       "because the schema allows only 'low', 'normal' or 'high' (a Literal type), and the "
                       "refusal names script.py line 4\njournal: "
                       + (f"the script ran: its search on line 3 reached the server ({len(ran)} call)"
                          if ran else "no call reached the server")
                       + f"\ngot: {text(refused)[:200]}{where}")
        allowed = await run_script(code, RIGHT_CHOICES)
        sent = arguments_sent(lab, "tickets", "set_priority")
        if allowed.get("isError") or sent != [{"ticket_id": "T-102", "priority": "high"}]:
            raise Fail("expected: a script with allowed values (priority='high') type-checks and runs\n"
                       f"journal: set_priority received {json.dumps(sent)[:120]}\n"
                       f"got: {text(allowed)[:200]}{where}")
        # 2. Consent inside the script: asked as for a direct call; a decline raises there.
        declined = await run_script(code, DECLINED)
        asked = [q for q in gate.asked if q[0] == "close_ticket"]
        closed = arguments_sent(lab, "tickets", "close_ticket")
        if closed or asked != [("close_ticket", {"ticket_id": "T-101"})] or \
                not text(declined).startswith("kept open:"):
            raise Fail("expected: close_ticket inside a script goes to the consent gate with its arguments, "
                       "like a direct call, and the decline raises RuntimeError in the script, which catches it\n"
                       f"journal: close_ticket reached the server {len(closed)} time(s); the gate was asked "
                       f"{asked!r:.120}\ngot: {text(declined)[:200]}{where}")
    # 3. Many results in, one printed line out.
    async with await aggregator_for(target, lab, [lab.server("notes")]) as tools:
        await refreshed(target, tools)
        code = module.CodeMode(tools)
        digest = await run_script(code, DIGEST)
        reads = arguments_sent(lab, "notes", "read_note")
        if text(digest).strip() != f"{len(reads)} notes read" or len(reads) != 3:
            raise Fail("expected: the script reads three notes and only its printed line comes back\n"
                       f"journal: {len(reads)} read_note call(s)\ngot: {text(digest)[:200]}{where}")
        # 4. Limits: an endless script is stopped, and the client carries on.
        code.limits = target.module("sandbox").Limits(seconds=ENDLESS_LIMIT)
        endless = await run_script(code, ENDLESS)
        after = await run_script(code, DIGEST)
        if not endless.get("isError") or text(after).strip() != "3 notes read":
            raise Fail(f"expected: a script that never ends is stopped after {ENDLESS_LIMIT:g} s of running "
                       f"time, and the next script runs\ngot: {text(endless)[:160]} / then {text(after)[:80]}"
                       f"{where}")
    return ("priority='urgent' refused by the type check (nothing sent), 'high' sent; a declined close_ticket "
            "raised inside the script; 3 notes read, one line printed; an endless script stopped")
