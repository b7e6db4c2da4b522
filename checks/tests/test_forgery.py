"""The servers' accounts the runner holds, and what a pass needs them to show
(checks.accounts, checks.items.proofs)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, List

import pytest

STARTER_RED = {2, 3, 5, 6, 8}  # the items the shipped starter fails


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
    from checks.accounts import proven
    from checks.target import ROOT
    starter, starter_journals = kept_accounts(ROOT / "starter", number, monkeypatch)
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
