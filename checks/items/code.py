"""Extension item E8 (code mode): one script against typed stubs, run in the
sandbox, every call inside it still the client's own.

Each part uses one fixture server alone in its table, so no exercise 3 is
needed, and is judged from that server's journal: which calls reached it,
with which arguments, and which never did.
"""

from __future__ import annotations

import ast
import json
from typing import Any, Dict, List, Optional

import anyio

from checks.exercises import EXTENSIONS
from checks.fixtures import Lab
from checks.harness import CannotJudgeHere, Fail
from checks.items.evidence import aggregator_for, found, point, refreshed, text
from checks.target import Target


RUN_SCRIPT = "run_script"


# A script that never ends meets this much running time and is stopped; a
# correct script uses a few milliseconds of it, however busy the machine,
# because the clock runs only while the script itself executes.
ENDLESS_LIMIT = 1.0


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


# A tool whose enums no Literal can hold (a float, a list, none at all): its stub
# must still be valid Python that passes the type check, or no script can run.
ODD_ENUMS = "tune_alerts=" + json.dumps({
    "type": "object", "additionalProperties": False,
    "properties": {"threshold": {"type": "number", "enum": [0.5, 0.9]},
                   "layout": {"type": "array", "enum": [[1, 2], [3]]},
                   "retired": {"type": "string", "enum": []},
                   "mode": {"enum": ["quiet", "loud", None]}},  # null is a value a Literal can hold
    "required": ["mode"]})
MODE_VALUES = {"quiet", "loud", None}


def stub_problem(source: str) -> Optional[str]:
    """What makes one generated stub module unfit for the model and the checker:
    it is not Python, or a Literal holds a value no Literal can (PEP 586: str,
    int, bool, None; never a float, a list, or nothing at all)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"it is not valid Python: line {exc.lineno}: {(exc.text or '').strip()[:160]}"
    for function in ast.walk(tree):
        if not isinstance(function, ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
                values = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                if not values or not all(literal_value(v) for v in values):
                    return f"in {function.name}(), {ast.unparse(node)[:120]} is not a valid type"
    return None


def allowed_values(source: str, function: str, parameter: str) -> Optional[set[Any]]:
    """The values a stub's parameter annotation allows, when it is a Literal
    (or a union of Literals and None); None when it allows anything."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.AsyncFunctionDef) and node.name == function:
            for arg in node.args.args + node.args.kwonlyargs:
                if arg.arg == parameter and arg.annotation is not None:
                    return union_values(arg.annotation)
    return None


def union_values(node: ast.expr) -> Optional[set[Any]]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = union_values(node.left), union_values(node.right)
        return None if left is None or right is None else left | right
    if isinstance(node, ast.Constant) and node.value is None:
        return {None}
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
        values = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return {v.value for v in values if isinstance(v, ast.Constant)}
    return None


def literal_value(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand  # Literal[-1] is an int
    return isinstance(node, ast.Constant) and not isinstance(node.value, (float, complex, bytes)) \
        and (node.value is None or isinstance(node.value, (str, int)))


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
    module = target.module("code_mode.run_script")
    missing = target.module("code_mode.sandbox").missing()
    if missing:  # the machine lacks the sandbox: nothing is known about the learner's code
        raise CannotJudgeHere(f"code mode cannot run a script here: {missing}")
    # Parts 3 and 4 (the notes server) run beside parts 1 and 2 (tickets): the
    # endless script's running time is the item's longest wait, and nothing in
    # one part depends on the other. Parts 1 and 2 are judged first.
    on_notes: Dict[str, Any] = {}

    async def scripts_on_notes() -> None:
        try:
            # 3. Many results in, one printed line out.
            async with await aggregator_for(target, lab, [lab.server("notes")], reference=True) as tools:
                await refreshed(target, tools)
                code = module.CodeMode(tools)
                on_notes["digest"] = await run_script(code, DIGEST)
                on_notes["reads"] = arguments_sent(lab, "notes", "read_note")
                # 4. Limits: an endless script is stopped, and the client carries on.
                code.limits = target.module("code_mode.sandbox").Limits(seconds=ENDLESS_LIMIT)
                on_notes["endless"] = await run_script(code, ENDLESS)
                on_notes["after"] = await run_script(code, DIGEST)
        except Exception as raised:  # noqa: BLE001 - raised in its turn, after parts 1 and 2 are judged
            on_notes["raised"] = raised

    async def scripts_on_tickets() -> None:
        # 1. Types from the schema: a value outside an enum is refused before anything runs.
        async with await aggregator_for(target, lab, [lab.server("tickets", None, "--add-tool", ODD_ENUMS)], reference=True) as tools:
            gate = Gate()
            tools.consent = gate  # the client's consent gate, answered here (E1 owns its policy)
            await refreshed(target, tools)
            found(tools, "tickets", "set_priority", EXTENSIONS["E8"])
            code = module.CodeMode(tools)
            for stubs in code.modules():  # what the model reads, and the checker takes as the truth
                problem = stub_problem(stubs.source)
                if problem:
                    raise Fail(f"expected: every stub is valid Python whose Literals hold only str, int, bool or None, "
                               f"written as Python values (an enum of floats, lists or no values at all falls back "
                               f"to Any)\ngot: the stubs of {stubs.alias}: {problem}{where}")
            tickets_stubs = next((m for m in code.modules() if m.alias == "tickets"), None)
            mode = allowed_values(tickets_stubs.source, "tune_alerts", "mode") if tickets_stubs else None
            if mode != MODE_VALUES:
                raise Fail(f"expected: an enum that includes null is still a Literal: tune_alerts(mode=...) allows "
                           f"exactly 'quiet', 'loud' and None\ngot: it allows {sorted(map(repr, mode)) if mode else 'anything'}"
                           f"{where}")
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

    async with anyio.create_task_group() as group:
        group.start_soon(scripts_on_notes)
        try:
            await scripts_on_tickets()
        except BaseException:
            group.cancel_scope.cancel()  # parts 1 and 2 have their verdict; stop the rest
            raise
    if "raised" in on_notes:
        raise on_notes["raised"]
    digest, reads = on_notes["digest"], on_notes["reads"]
    if text(digest).strip() != f"{len(reads)} notes read" or len(reads) != 3:
        raise Fail("expected: the script reads three notes and only its printed line comes back\n"
                   f"journal: {len(reads)} read_note call(s)\ngot: {text(digest)[:200]}{where}")
    endless, after = on_notes["endless"], on_notes["after"]
    if not endless.get("isError") or text(after).strip() != "3 notes read":
        raise Fail(f"expected: a script that never ends is stopped after {ENDLESS_LIMIT:g} s of running "
                   f"time, and the next script runs\ngot: {text(endless)[:160]} / then {text(after)[:80]}"
                   f"{where}")
    return ("priority='urgent' refused by the type check (nothing sent), 'high' sent; a declined close_ticket "
            "raised inside the script; 3 notes read, one line printed; an endless script stopped")
