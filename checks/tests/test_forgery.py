"""Submissions that forge their verdicts, each as issue 43 observed it on the
self-check of its day, graded here: none raises the shipped starter's score in
grading mode (checks.grading). And the servers' accounts the runner holds,
with what a pass needs them to show (checks.accounts, checks.items.proofs).

Each forgery starts from a copy of the shipped starter, its exercise regions
left as shipped except where the forgery is written in one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Set

import pytest

from checks.hybrid import Package, bodies, swapped
from checks.target import ROOT
from checks.tests.conftest import Variant
from checks.tests.grading_runs import graded, statuses

STARTER_RED = {2, 3, 5, 6, 8}  # the items the shipped starter fails
REGION_FILES = ("stdio_client.py", "discovery.py", "naming.py", "aggregator.py")  # exercises 1-4


def red(report: Dict[str, Any]) -> Set[str]:
    return {label for label, status in statuses(report).items() if status != "pass"}


def reference_bytecode(source: Path, into: Path) -> None:
    """The reference's `source` compiled to `into`, marked to skip the check of its source."""
    into.parent.mkdir(exist_ok=True)
    py_compile.compile(str(source), cfile=str(into), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)


# Case 1: compiled files planted in the target's own __pycache__ under the names the
# runner of the day gave its region copies' bytecode (`<module>.hybrid-<hash of the
# swapped text>`); it looked only at their first bytes before using them (9/9 then).
def test_bytecode_planted_under_the_names_of_the_region_copies_is_never_used(judge: Path, variant: Variant) -> None:
    directory = variant("starter")
    learner = Package(directory)
    tag = sys.implementation.cache_tag
    for region in ("", "1", "2", "3", "4"):
        for name, (text, reference, parsed) in learner.files.items():
            made, _ = swapped(text, reference, region, parsed)
            stem = f"{Path(name).stem}.hybrid-{hashlib.sha256(made.encode()).hexdigest()[:24]}"
            reference_bytecode(ROOT / "solution" / name, directory / "__pycache__" / f"{stem}.{tag}.pyc")
    status, report, _ = graded(judge, directory)
    assert status == 1 and red(report) == {str(n) for n in STARTER_RED}, statuses(report)


# Case 2: a run of the day left the reference's compiled regions in the target's
# __pycache__ (every region copy's swapped files), and a stub read them from there.
BORROWED_FROM_THE_CACHE = """    import glob, marshal
    for _cached in sorted(glob.glob(%r)):
        _space: dict = {}
        try:
            with open(_cached, "rb") as _file:
                exec(marshal.loads(_file.read()[16:]), _space)
            _theirs = _space["model_tool_name"](alias, tool_name)
        except Exception:
            continue
        if _theirs != tool_name:
            return _theirs
    return tool_name
"""


def test_the_references_bytecode_a_run_would_leave_in_the_target_is_not_there_to_borrow(
        judge: Path, variant: Variant) -> None:
    directory = variant("starter")
    body = BORROWED_FROM_THE_CACHE % str(directory / "__pycache__" / "naming*.pyc")
    text = (directory / "naming.py").read_text()
    start, end = bodies(text)["3"]
    (directory / "naming.py").write_text(text[:start] + body + text[end:])
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "checks", "--target", str(directory), "1"], capture_output=True,
                   timeout=300, cwd=ROOT, env={**env, "MOCK": "1"}, check=False)  # the earlier run
    assert not (directory / "__pycache__").exists()  # the self-check wrote nothing there
    status, report, _ = graded(judge, directory, "5", "6")
    assert status == 1 and red(report) == {"5", "6"}, statuses(report)


# Case 3: compiled files that skip the check of their source, beside the stubs
# (7/9 with the sources unchanged).
def test_bytecode_beside_the_stubs_that_skips_its_source_check_is_never_used(judge: Path, variant: Variant) -> None:
    directory = variant("starter")
    for name in REGION_FILES:
        reference_bytecode(ROOT / "solution" / name, Path(importlib.util.cache_from_source(str(directory / name))))
    status, report, _ = graded(judge, directory)
    assert status == 1 and red(report) == {str(n) for n in STARTER_RED}, statuses(report)


# Case 4: the reference read by descriptor (os.open with dir_fd) and through a hard
# link, ways the worker's guard of the day did not see (items 5 and 6 passed).
READ_AROUND = """    import os, tempfile
    for _lab in %r:
        for _way in ("link", "dir_fd"):
            try:
                if _way == "link":
                    _linked = os.path.join(tempfile.mkdtemp(), "n.py")
                    os.link(os.path.join(_lab, "solution", "naming.py"), _linked)
                    _fd = os.open(_linked, os.O_RDONLY)
                else:
                    _fd = os.open("solution/naming.py", os.O_RDONLY, dir_fd=os.open(_lab, os.O_RDONLY))
                _space: dict = {}
                exec(os.read(_fd, 1 << 20).decode(), _space)
                return _space["model_tool_name"](alias, tool_name)
            except Exception:
                continue
    return tool_name
"""


def test_the_reference_read_by_descriptor_or_through_a_hard_link_is_not_there_to_read(
        judge: Path, variant: Variant) -> None:
    directory = variant("starter")
    places = [str(ROOT), str(judge), "/lab", "/lab/judge/.."]
    text = (directory / "naming.py").read_text()
    start, end = bodies(text)["3"]
    (directory / "naming.py").write_text(text[:start] + READ_AROUND % places + text[end:])
    for item in ("5", "6"):  # one item at a time, as observed
        status, report, _ = graded(judge, directory, item)
        assert status == 1 and red(report) == {item}, statuses(report)


# Case 5: a pipe of the submission's own copied over the result channel's descriptor
# (os.dup2): every verdict rewritten to pass, the guard's reports dropped (item 2, E5
# and E11 passed; items whose proofs need the servers' accounts were caught).
OVER_THE_CHANNEL = """
import json as _json, os as _os, sys as _sys, threading as _threading
_frame = _sys._getframe()
while _frame is not None and "channel" not in _frame.f_locals:
    _frame = _frame.f_back
if _frame is not None:
    _fd = _frame.f_locals["channel"].fd
    _real, (_read, _write) = _os.dup(_fd), _os.pipe()
    _os.dup2(_write, _fd)

    def _relay() -> None:
        pending = b""
        while True:
            data = _os.read(_read, 65536)
            if not data:
                return
            *lines, pending = (pending + data).split(b"\\n")
            for line in lines:
                event = _json.loads(line)
                if event.get("event") == "tampered":
                    continue
                if event.get("event") == "verdict":
                    event["verdict"].update(status="pass", where=None)
                _os.write(_real, (_json.dumps(event) + "\\n").encode())
    _threading.Thread(target=_relay, daemon=True).start()
"""


def test_verdicts_rewritten_over_the_channel_pass_nothing_the_evidence_does_not_show(
        judge: Path, variant: Variant) -> None:
    directory = variant("starter", edits={"__init__.py": ('"""\n', '"""\n' + OVER_THE_CHANNEL)})
    _, report, _ = graded(judge, directory, "2", "3", "5", "E5", "E11")
    assert red(report) == {"2", "3", "5", "E5", "E11"}, statuses(report)


# Case 6: a region borrowing the reference's function from another region's copy
# loaded in the same worker (5/9 in the default run).
FROM_ANOTHER_COPY = """    import sys
    for _name, _module in list(sys.modules.items()):
        _theirs = getattr(_module, "model_tool_name", None)
        if _name.endswith(".naming") and _theirs is not None and \
                _theirs.__code__.co_code != model_tool_name.__code__.co_code:
            return _theirs(alias, tool_name)
    return tool_name
"""


def test_a_region_finds_no_other_copy_of_itself_to_borrow_the_reference_from(judge: Path, variant: Variant) -> None:
    directory = variant("starter")
    text = (directory / "naming.py").read_text()
    start, end = bodies(text)["3"]
    (directory / "naming.py").write_text(text[:start] + FROM_ANOTHER_COPY + text[end:])
    status, report, _ = graded(judge, directory)
    assert status == 1 and red(report) == {str(n) for n in STARTER_RED}, statuses(report)


# Case 7: an anyio.py at the repository's root, imported by the judge of the day in
# place of the library (and one among the starter's files, a module of the package).
def test_a_file_named_like_a_dependency_in_the_submission_is_not_imported_by_the_judge(
        judge: Path, variant: Variant, tmp_path: Path) -> None:
    repository = tmp_path / "bob"
    repository.mkdir()
    variant("starter").rename(repository / "starter")
    planted = "raise SystemExit('the submission\\'s anyio.py was imported')\n"
    (repository / "anyio.py").write_text(planted)
    (repository / "starter" / "anyio.py").write_text(planted)
    status, report, stderr = graded(judge, repository, "1", "2")
    assert status == 1 and statuses(report) == {"1": "pass", "2": "fail"}
    assert "anyio.py was imported" not in str(report) + stderr


# Case 8: a FIFO named like a module held the runner before any deadline applied; a
# module that is a link to /dev/zero was read until memory ran out.
@pytest.mark.parametrize("planted", ["fifo", "zero"])
def test_a_fifo_or_a_link_to_an_endless_device_among_the_files_is_one_line_and_exit_2(
        judge: Path, variant: Variant, planted: str) -> None:
    directory = variant("starter")
    if planted == "fifo":
        os.mkfifo(directory / "waiting.py")
    else:
        (directory / "zero.py").symlink_to("/dev/zero")
    status, report, _ = graded(judge, directory)
    assert status == 2 and report["status"] == "error" and report["items"] == []
    assert report["message"].endswith(("waiting.py: a FIFO, not a regular file; only regular files are taken",
                                       "zero.py: a symbolic link, not a regular file; only regular files are taken"))


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
    journals = [HeldJournal(j.alias, Account(None, j.path, entries=j.entries())) for j in labs[0].journals]
    Lab.close(labs[0])
    return verdict, journals


@pytest.mark.parametrize("number", sorted(STARTER_RED - {2}))
def test_a_pass_claimed_where_the_servers_accounts_do_not_show_it_is_not_counted(
        number: int, monkeypatch: pytest.MonkeyPatch, shipped: Path) -> None:
    from checks.accounts import proven
    starter, starter_journals = kept_accounts(shipped, number, monkeypatch)
    assert starter.status == "fail"
    starter.status = "pass"  # what a forger would say
    proven(starter, starter_journals)
    assert starter.status == "error" and "do not show" in starter.message
    solution, solution_journals = kept_accounts(ROOT / "solution", number, monkeypatch)
    proven(solution, solution_journals)
    assert solution.status == "pass", solution.message


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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runner names a peer from /proc")
def test_an_account_sent_unasked_by_a_process_that_has_ended_is_refused(tmp_path: Path) -> None:
    import os
    import subprocess
    from checks.accounts import Accounts, Peer
    accounts = Accounts(tmp_path / "evidence.sock", Peer(os.getuid(), tmp_path, tmp_path, str(tmp_path / "evidence.sock")))
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
