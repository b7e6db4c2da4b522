"""A submission that forges its verdicts: each forgery runs from inside a copy of
the shipped starter (a few lines added to its `__init__.py`, with checks/ and
servers/ untouched), and none of them is a pass or exit 0. The honest paths stay
as they were (test_isolation, test_integrity, test_false_greens)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from checks.tests.conftest import Variant
from checks.tests.test_isolation import checks

STARTER_RED = {2, 3, 5, 6, 8}  # the items the shipped starter fails


def forged(variant: Variant, code: str) -> Path:
    """The shipped starter with `code` run when the package is imported."""
    return variant("starter", edits={"__init__.py": ('"""\n', '"""\n' + code + "\n")})


def statuses(report: Dict[str, Any]) -> Dict[int, str]:
    return {int(i["number"]): str(i["status"]) for i in report["items"]}


# A process started by the submission that connects where the servers send
# their accounts, and sends one that says every request was answered: after
# waiting for the runner's word as a server does (WAITS), or at once, ending
# before the runner may have looked at it.
IMPOSTOR = '''
import os, subprocess, sys
script = """
import json, os, socket, time
runner = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
runner.settimeout(30)
runner.connect(os.environ["MCP_LAB_EVIDENCE"])
WAITS
place = os.path.join(os.environ["MCP_LAB_RUN_DIR"], "mcp-lab-3-forged", "notes-0.jsonl")
try:
    runner.sendall((json.dumps({"journal": place}) + "\\\\n").encode())
    runner.sendall((json.dumps({"t": time.time(), "kind": "start", "pid": os.getpid()}) + "\\\\n").encode())
except OSError:
    pass
"""
subprocess.run([sys.executable, "-c", script], timeout=60)
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runner names a peer from /proc")
@pytest.mark.parametrize("waits", [True, False])
def test_a_process_that_is_no_fixture_server_cannot_send_an_account(variant: Variant, waits: bool) -> None:
    code = IMPOSTOR.replace("WAITS", "runner.recv(1)" if waits else "")
    status, report, _ = checks(forged(variant, code), "1")
    assert status == 2
    refused = [p for p in report["problems"] if "not one of the run's fixture servers" in p]
    assert refused, report["problems"]
    if waits:  # alive while the runner looks: named by its command line
        assert any("-c" in p for p in refused), refused


# The worker's verdict carries a wire of its own making.
PLANTED_WIRE = '''
from checks.harness import Verdict
_plain = Verdict.to_json
def _to_json(self, *args, **kwargs):
    data = _plain(self, *args, **kwargs)
    data["wire"] = [{"ms": 0.0, "server": "notes", "kind": "reply", "toward": "client", "label": "PLANTED",
                     "full": "PLANTED", "id": "1"}]
    data["trace"] = ["PLANTED"]
    return data
Verdict.to_json = _to_json
'''


def test_the_wire_shown_is_the_servers_own_account_not_the_workers(variant: Variant, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    _, report, _ = checks(forged(variant, PLANTED_WIRE), "1", "--trace", "--html", str(page))
    trace: List[str] = report["items"][0]["trace"]
    assert trace and not any("PLANTED" in line for line in trace)
    assert any("server/discover" in line for line in trace)
    assert "PLANTED" not in page.read_text(encoding="utf-8")


# The whole run, written by the submission on the worker's channel at import,
# before any item ran: nine passes, and a clean exit.
TRANSCRIPT = '''
import json, os, sys
frame = sys._getframe()
while "channel" not in frame.f_locals:
    frame = frame.f_back
fd = frame.f_locals["channel"].fd
def say(**event):
    os.write(fd, (json.dumps(event) + "\\n").encode())
say(event="start", model="model: mock", display="starter")
for number in range(1, 10):
    say(event="begin", number=number)
    say(event="end", number=number)
    say(event="verdict", verdict={"number": number, "id": "x", "title": "x", "status": "pass", "duration": 0.1,
                                  "message": "fine", "where": None}, hung=False)
say(event="done", threads=[])
os._exit(0)
'''


def test_a_run_written_on_the_channel_by_the_submission_counts_no_pass(variant: Variant) -> None:
    status, report, _ = checks(forged(variant, TRANSCRIPT))
    assert status == 2 and report["passed"] == 0
    assert all("none sent the runner its account" in i["message"] for i in report["items"]), report["items"]


def kept_accounts(directory: Path, number: int, monkeypatch: pytest.MonkeyPatch) -> "tuple[Any, List[Any]]":
    """Item `number` judged here, and its servers' journals as the runner would
    hold them (the lab is kept until they are read)."""
    from checks import harness
    from checks.accounts import Account, HeldJournal
    from checks.fixtures import Lab
    from checks.items import by_number
    from checks.target import load_target
    labs: List[Lab] = []

    class Kept(Lab):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            labs.append(self)

        def close(self) -> None:
            pass
    monkeypatch.setattr(harness, "Lab", Kept)
    item = by_number(number)
    assert item is not None
    verdict = harness.run_item(item, load_target(str(directory)))
    journals = [HeldJournal(j.alias, Account(None, None, j.path, j.entries())) for j in labs[0].journals]
    Lab.close(labs[0])
    return verdict, journals


@pytest.mark.parametrize("number", sorted(STARTER_RED - {2}))
def test_a_pass_claimed_where_the_servers_accounts_do_not_show_it_is_not_counted(
        number: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from checks.outcome import proven
    from checks.target import ROOT
    starter, starter_journals = kept_accounts(ROOT / "starter", number, monkeypatch)
    assert starter.status == "fail"
    starter.status = "pass"  # what a forger would say
    proven(starter, starter_journals)
    assert starter.status == "error" and "do not show" in starter.message
    solution, solution_journals = kept_accounts(ROOT / "solution", number, monkeypatch)
    proven(solution, solution_journals)
    assert solution.status == "pass", solution.message


def test_every_pass_of_the_reference_is_shown_by_its_servers_accounts() -> None:
    from checks.target import ROOT
    status, report, _ = checks(ROOT / "solution", "--extensions")
    assert status == 0, [(i["number"], i["message"]) for i in report["items"] + report["extensions"]
                         if i["status"] != "pass"]


# The forgeries of the judge in memory, each as a submission would write it.
FORGERIES = {
    # The six lines of the review: every verdict says pass.
    "Verdict.to_json": ('''
from checks.harness import Verdict as _Verdict
_plain = _Verdict.to_json
def _passing(self, *args, **kwargs):
    return {**_plain(self, *args, **kwargs), "status": "pass", "where": None}
_Verdict.to_json = _passing
''', "checks.harness.Verdict.to_json was replaced"),
    "harness.judge": ('''
import checks.harness as _harness
_real = _harness.judge
def _judge(item, target, outcome):
    outcome.pop("error", None)
    return _real(item, target, outcome)
_harness.judge = _judge
''', "checks.harness.judge was replaced"),
    "Fail, caught": ('''
import checks.harness as _harness, checks.items as _items
for _item in _items.ITEMS:
    async def _body(target, lab, _inner=_item.body):
        try:
            return await _inner(target, lab)
        except _harness.Fail:
            return "fine"
    _item.body = _body
''', "checks.items.ITEMS[1].body was replaced"),
    "sys.modules": ('''
import sys, types, checks.harness as _harness
_fake = types.ModuleType("checks.harness")
_fake.__dict__.update(vars(_harness))
_fake.Fail = type("Fail", (Exception,), {})
sys.modules["checks.harness"] = _fake
''', "sys.modules['checks.harness'] was replaced"),
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_judge_changed_in_memory_counts_no_pass_and_is_named(variant: Variant, name: str) -> None:
    code, named = FORGERIES[name]
    status, report, _ = checks(forged(variant, code))
    assert status == 2 and report["passed"] == 0, statuses(report)
    assert any(named in p for p in report["problems"]), report["problems"]
    assert all("tampered with the judging" in i["message"] for i in report["items"])


# The reference solution's modules read from disk and put in place of the
# learner's; with the import refused, the submission carries on with its own.
WITH_THE_SOLUTION = '''
import importlib, sys
from checks.target import ROOT
sys.path.insert(0, str(ROOT))
try:
    for _name in ("errors", "config", "stdio_client", "discovery", "naming", "translate", "aggregator"):
        sys.modules[__name__ + "." + _name] = importlib.import_module("solution." + _name)
except Exception:
    pass
'''


def test_the_reference_solution_read_in_place_of_the_learners_code_is_refused_and_said(variant: Variant) -> None:
    status, report, _ = checks(forged(variant, WITH_THE_SOLUTION))
    assert status == 2 and report["passed"] == 0
    assert any("read the reference solution (solution/__init__.py)" in p for p in report["problems"])


COPIES = {"a command": ("import subprocess\nsubprocess.run('cd ' + str(ROOT) + ' && cat solution/discovery.py', "
                        "shell=True, capture_output=True)", "started a command naming the reference solution"),
          "a copy of the folder": ("import shutil, tempfile\nshutil.copytree(ROOT / 'solution', tempfile.mkdtemp() + "
                                   "'/s')", "listed the reference solution (solution)")}


@pytest.mark.parametrize("way", sorted(COPIES))
def test_the_reference_solution_copied_another_way_is_refused_and_said(variant: Variant, way: str) -> None:
    code, named = COPIES[way]
    body = "".join(f"    {line}\n" for line in code.splitlines())
    code = f"from checks.target import ROOT\ntry:\n{body}except OSError:\n    pass"
    status, report, _ = checks(forged(variant, code), "1")
    assert status == 2 and report["passed"] == 0
    assert any(named in p for p in report["problems"]), report["problems"]


# Inside item 3, the journal the judge reads rewritten to show every page asked for.
REWRITTEN_JOURNAL = '''
    import glob, json, os, time
    for path in glob.glob(os.path.join(os.environ["MCP_LAB_RUN_DIR"], "mcp-lab-3-*", "notes-0.jsonl")):
        try:
            with open(path, "w") as journal:
                journal.write(json.dumps({"t": time.time(), "kind": "start", "pid": os.getpid()}) + "\\n")
        except PermissionError:
            pass
'''


def test_a_journal_rewritten_by_the_code_under_test_is_refused_and_said(variant: Variant) -> None:
    directory = variant("starter", edits={"discovery.py": ('    page = await server.request("tools/list", {})\n',
                                                           REWRITTEN_JOURNAL.lstrip("\n")
                                                           + '    page = await server.request("tools/list", {})\n')})
    status, report, _ = checks(directory, "3")
    assert status == 2 and report["passed"] == 0
    assert any("wrote to a server's journal (notes-0.jsonl)" in p for p in report["problems"]), report["problems"]


def said(number: int, status: str = "pass") -> Dict[str, Any]:
    return {"event": "verdict", "hung": False, "verdict": {"number": number, "id": "x", "title": "x", "status": status,
                                                           "duration": 0.1, "message": "fine", "where": None}}


def ran(number: int) -> List[Dict[str, Any]]:
    return [{"event": "begin", "number": number}, {"event": "end", "number": number}]


def test_the_runner_takes_one_verdict_per_item_asked_for_and_only_after_it_ran() -> None:
    from checks.outcome import Account
    account = Account([1, 2, 3])
    for event in [said(1), *ran(2), said(2), said(2), said(7), *ran(3), said(3)]:
        account.apply(event)
    found = {v.number: (v.status, v.message) for v in account.outcome.verdicts}
    assert found == {1: ("error", "not counted: it came before the item had run"),
                     2: ("error", "not counted: the runner was sent two verdicts for this item"),
                     3: ("pass", "fine")}
    assert len(account.outcome.problems) == 3


def test_once_the_worker_finds_the_judge_changed_no_pass_of_the_run_counts() -> None:
    from checks.outcome import Account
    account = Account([1, 2, 3])
    for event in [*ran(1), said(1), *ran(2), said(2, "fail"),
                  {"event": "tampered", "found": ["checks.harness.judge was replaced"]}, *ran(3), said(3)]:
        account.apply(event)
    assert [v.status for v in account.outcome.verdicts] == ["error", "fail", "error"]
    assert account.outcome.problems == \
        ["the code under test tampered with the judging: checks.harness.judge was replaced"]


def test_the_servers_reach_the_runner_from_a_temporary_directory_too_long_for_a_socket(tmp_path: Path) -> None:
    import os
    import subprocess
    from checks.target import ROOT
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    done = subprocess.run([sys.executable, "-m", "checks", "--target", "solution", "1", "--json"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env={**os.environ, "MOCK": "1", "TMPDIR": str(deep)})
    assert done.returncode == 0, done.stdout[-600:] + done.stderr[-600:]


def test_a_server_that_ended_before_the_runner_looked_at_it_is_gone_not_an_impostor() -> None:
    # A client may end a server it has just started (item 8's, under load): its
    # connection is then from a process that is gone, or a zombie, and must be
    # dropped quietly: refusing it made a correct run exit 2 on a busy machine.
    import os
    import subprocess as sp
    from checks.accounts import gone
    child = sp.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, and left a zombie until reaped
    assert gone(child.pid)  # a zombie
    child.wait(timeout=30)
    assert gone(child.pid)  # reaped: no longer there
    assert not gone(os.getpid())


# Bytecode planted where the import system caches the judge's, under the temporary
# name it writes through first: refused, as the import system's own write is, and
# quietly, since a learner's first run makes that write too (a fresh clone).
PLANTED_BYTECODE = '''
import sys
from checks.target import ROOT
_place = ROOT / "checks" / "items" / "__pycache__" / ("loop." + sys.implementation.cache_tag + ".pyc.4242")
try:
    _place.parent.mkdir(exist_ok=True)
    _place.write_bytes(b"planted")
except OSError:
    pass
'''


def test_bytecode_planted_under_the_judges_cache_is_refused_and_the_run_stays_honest(variant: Variant) -> None:
    from checks.target import ROOT
    status, report, _ = checks(forged(variant, PLANTED_BYTECODE))
    assert not list((ROOT / "checks" / "items" / "__pycache__").glob("loop.*.pyc.4242"))
    assert status == 1 and {n for n, s in statuses(report).items() if s != "pass"} == STARTER_RED


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runner names a peer from /proc")
def test_an_account_sent_unasked_by_a_process_that_has_ended_is_refused(tmp_path: Path) -> None:
    import subprocess
    from checks.accounts import Accounts
    accounts = Accounts(str(tmp_path))
    try:
        for sends in (True, False):
            script = ("import socket, sys\nrunner = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                      "runner.connect(sys.argv[1])\n" + ("runner.sendall(b'{}\\n')\n" if sends else ""))
            subprocess.run([sys.executable, "-c", script, accounts.path], timeout=60, check=True)
            accounts.drain()  # looked at only once it has ended
        assert len(accounts.refused) == 1 and "without waiting to be taken" in accounts.refused[0]
        assert accounts.accounts == []  # nothing of either was taken
    finally:
        accounts.close()
