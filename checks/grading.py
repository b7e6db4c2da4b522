"""Grading mode: `python -m checks --grade --target DIR`, for an instructor's
collected submissions and for CI, with verdicts a submission cannot forge.

    python -m checks --grade --target DIR [--judge-commit REV] [--judge-repo REPO]
                     [ITEM ...] [--extensions] [--json] [--html FILE] [--limit S]

What judges is a pristine judge: the runner clones the template repository
(REPO, by default the one this judge runs from) at the commit REV into a
folder of its own and runs again from that clone (`enter`), so nothing of
the grader's checkout or of the submission's checks/ or solution/ is used.
What is judged is DIR's starter/ (or DIR itself when it is a package), as
checks/intake.py takes it: its regular top-level .py files only.

Each item runs in a worker of its own, in a sandbox (checks/sandbox.py): a
user of its own that owns nothing else, a view of the machine without the
reference solution, the contracts' recorded observations or any other
copy of the lab, without the network, and holding only that item's package
(the learner's files, every region but the item's own the reference's). The
runner holds the evidence: a pass counts only when the item's region does
what the reference does on every recorded input (the worker is sent the
inputs and sends back what it observed; the runner compares, checks.contracts)
and when the servers' accounts, sent to the runner, show what the pass rests
on (checks/accounts.py, checks/items/proofs.py). labs/INSTRUCTORS.md says
what that proves and what it does not.

Where it cannot run that way (not Linux, not root, no namespaces), it says so
in one line and exits 2 rather than grade weakly.
"""

from __future__ import annotations

import compileall
import json
import os
import pwd
import grp
import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from checks.accounts import Accounts, Peer
from checks.contracts import contracts, inputs_of
from checks.harness import Item
from checks.hybrid import Package, region_of
from checks.intake import IntakeError, commit_of, place
from checks.isolation import run_isolated
from checks.items import label
from checks.outcome import Outcome
from checks.target import ROOT
from checks.witness import Evidence

# Where the worker sees what the runner gives it.
JUDGE, PACKAGE, RUN, DOOR, REQUEST = "/lab/judge", "/lab/package", "/lab/run", "/lab/door", "/lab/request.json"
EVIDENCE = f"{DOOR}/evidence.sock"
USERS = (1 << 30, (1 << 31) - 2)  # the range a worker's user is drawn from, far from every account's
GIT_PATIENCE = 600.0  # seconds a clone of the judge may take (a large repository over the network)
# Run by the interpreter the grader started, from the clone: every module that judges is the clone's.
BOOT = ("import sys\n"
        "workspace, commit, *argv = sys.argv[1:]\n"
        "sys.path[:] = [workspace + '/judge'] + [entry for entry in sys.path if entry]\n"
        "from checks.cli import main\n"
        "from checks.grading import graded\n"
        "sys.exit(graded(workspace, commit, argv, main))\n")


class CannotGrade(Exception):
    """Grading mode cannot run here, or cannot make its judge: one line."""


def cannot_grade_here() -> Optional[str]:
    """Why this machine cannot grade as grading mode must, or None."""
    if not sys.platform.startswith("linux"):
        return "grading mode runs on Linux only: each worker needs namespaces and a user of its own"
    if os.geteuid() != 0:
        return ("grading mode runs as root, to run each worker as a user of its own "
                "(sudo -E .venv/bin/python -m checks --grade ...); the self-check needs no root")
    if shutil.which("git") is None:
        return "git is needed to clone the judge"
    return None


def enter(options: Any, argv: List[str]) -> int:
    """The grader's command: make the judge's clone, then run again from it."""
    why = cannot_grade_here()
    if why is not None:
        print(f"cannot grade here: {why}", file=sys.stderr)
        return 2
    workspace = Path(tempfile.mkdtemp(prefix="mcp-lab-grade-", dir="/tmp"))
    try:
        commit = clone(options.judge_repo or str(ROOT), options.judge_commit, workspace / "judge")
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, "-E", "-s", "-c", BOOT, str(workspace), commit, *argv])
    except (CannotGrade, OSError) as exc:
        shutil.rmtree(workspace, ignore_errors=True)
        print(f"cannot grade: {exc}", file=sys.stderr)
        return 2
    return 2  # not reached: execv does not return


def git(*args: str, cwd: Optional[Path] = None) -> str:
    """A git command of the runner's own (never in a submission's repository)."""
    try:
        done = subprocess.run(["git", "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null", *args],
                              capture_output=True, text=True, timeout=GIT_PATIENCE, cwd=cwd,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        raise CannotGrade(f"git {args[0]}: {exc}") from exc
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise CannotGrade(f"git {args[0]} failed: {said}")
    return done.stdout.strip()


def clone(repository: str, revision: str, into: Path) -> str:
    """The template at `revision`, checked out in `into`; its full commit."""
    git("clone", "--quiet", "--no-checkout", "--template=", repository, str(into))
    for name in (revision, f"origin/{revision}"):
        try:
            commit = git("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", cwd=into)
            break
        except CannotGrade:
            continue
    else:
        raise CannotGrade(f"--judge-commit {revision}: no such commit in {repository}")
    git("checkout", "--quiet", "--detach", commit, cwd=into)
    missing = [name for name in ("checks", "servers", "solution") if not (into / name).is_dir()]
    if missing or not (into / "checks" / "grading.py").is_file():
        raise CannotGrade(f"{repository} at {commit[:12]} is not the lab with a grading mode "
                          f"(missing: {', '.join(missing) or 'checks/grading.py'})")
    return commit


@dataclass
class Workspace:
    """The runner's folder for one grading run (only root can enter it): the
    judge's clone, and what the workers are given."""

    root: Path
    commit: str

    @property
    def judge(self) -> Path:
        return self.root / "judge"


_HERE: List[Workspace] = []  # set by `graded`: this process runs from a judge's clone


def graded(workspace: str, commit: str, argv: List[str], main: Callable[[List[str]], int]) -> int:
    """The run from the judge's clone (`enter` starts it with the command line's
    `main`); the workspace goes at the end."""
    _HERE[:] = [Workspace(Path(workspace), commit)]
    try:
        return main(argv)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def inside_clone() -> bool:
    return bool(_HERE)


def submission_of(target: str, judge: Path) -> Tuple[Path, Path, Path]:
    """The package to judge, the repository it came from, and the folder its
    paths are shown under: DIR/starter for a learner's repository DIR, DIR
    itself for a package (starter and solution name the judge's own)."""
    if target in ("starter", "solution"):
        return judge / target, judge, Path(target)
    given = Path(target).resolve()
    if (given / "starter").is_dir() or (given / "starter").is_symlink():
        return given / "starter", given, Path(target) / "starter"
    return given, given, Path(target)


def judge_items(options: Any, items: List[Item], on_event: Callable[[str, Outcome], None],
                on_idle: Optional[Callable[[], None]]) -> Tuple[Outcome, Dict[str, Any]]:
    """Every item in a sandboxed worker of its own; the merged outcome, and the
    report's facts (the submission's commit, the date, the judge's commit)."""
    here = _HERE[0]
    package, repository, shown = submission_of(options.target, here.judge)
    facts: Dict[str, Any] = {"commit": commit_of(repository, up=False),
                             "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                             "judge_commit": here.commit}
    try:
        if not (package / "__init__.py").is_file():
            raise IntakeError(f"--target {options.target}: neither a learner's repository (with starter/) "
                              "nor a package directory")
        learner = Package(package)
        public = public_judge(here)
        python = python_folders(here)
        sandbox_works(here, python)
    except (IntakeError, CannotGrade) as exc:
        return Outcome(load_error=str(exc)), facts
    merged = Outcome()
    for item in items:
        outcome = judge_one(here, item, learner, public, python, shown, options.limit, on_event, on_idle)
        merge(merged, outcome, item)
        if outcome.load_error is not None:  # the package does not load: no item will
            break
    return merged, facts


def merge(merged: Outcome, outcome: Outcome, item: Item) -> None:
    merged.verdicts += outcome.verdicts
    merged.outputs.update(outcome.outputs)
    merged.model = merged.model or outcome.model
    merged.display = merged.display or outcome.display
    if outcome.load_error is not None and merged.load_error is None:
        merged.load_error = outcome.load_error
    merged.problems += [f"item {label(item.number)}: {problem}" for problem in outcome.problems]
    merged.killed += outcome.killed
    if outcome.outside.strip():
        merged.outside += outcome.outside


def public_judge(here: Workspace) -> Path:
    """The judge's files a worker may read: checks/ (but its recorded observations,
    its tests and its maintainers' tools) and servers/, compiled, read-only."""
    public = here.root / "public"
    if public.is_dir():
        return public
    shutil.copytree(here.judge / "checks", public / "checks",
                    ignore=shutil.ignore_patterns("__pycache__", "corpus", "tests", "dev"))
    shutil.copytree(here.judge / "servers", public / "servers", ignore=shutil.ignore_patterns("__pycache__", "tests"))
    compileall.compile_dir(str(public), quiet=1)
    return public


def python_folders(here: Workspace) -> List[str]:
    """The folders of the Python installations the workers run (read-only in
    their view); none may hold a copy of the lab's reference."""
    folders = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    folders.add(os.path.dirname(os.path.realpath(sys.executable)))
    folders = {f for f in folders if not f.startswith("/usr/")}
    for entry in sys.path:
        place = Path(entry)
        if not any(os.path.realpath(entry).startswith(f + os.sep) for f in folders):
            continue
        for copy in (place / "solution" / "__init__.py", place / "checks" / "contracts" / "corpus"):
            if copy.exists():
                raise CannotGrade(f"the Python environment holds a copy of the lab ({copy.parent}), which every "
                                  "worker would read: grade from an environment with the lab installed editable "
                                  "(pip install -e) or not at all")
    if any(here.root.is_relative_to(f) for f in folders):
        raise CannotGrade(f"the grading folder {here.root} is inside a Python installation the workers see")
    return sorted(folders)


def sandbox_works(here: Workspace, python: List[str]) -> None:
    """A sandbox made once and left at once, before any item: CannotGrade with
    its one line when this machine will not make one (a container without the
    right to make namespaces, say)."""
    folder = here.root / "trial"
    (folder / "root").mkdir(parents=True)
    spec = {"root": str(folder / "root"), "binds": [[f, f, False] for f in python], "uid": fresh_user(),
            "gid": 0, "cwd": "/", "argv": [sys.executable, "-E", "-s", "-c", "pass"], "env": {}}
    spec["gid"] = spec["uid"]
    (folder / "sandbox.json").write_text(json.dumps(spec), encoding="utf-8")
    try:
        done = subprocess.run([sys.executable, "-I", "-S", str(here.judge / "checks" / "sandbox.py"),
                               str(folder / "sandbox.json")], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        raise CannotGrade(f"cannot grade here: the sandbox could not be started ({exc})") from exc
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise CannotGrade(f"cannot grade here: {said}")


def search_path() -> str:
    """PATH in a worker: the Python installations' programs (code mode's sandbox
    binary is installed beside the interpreter), then the system's."""
    first = [os.path.dirname(sys.executable), *(os.path.join(p, "bin") for p in (sys.prefix, sys.base_prefix))]
    return ":".join(dict.fromkeys([*first, "/usr/local/bin", "/usr/bin", "/bin"]))


def fresh_user() -> int:
    """A uid (and gid) no account, group or process of this machine has."""
    taken: set[int] = set()
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text(encoding="ascii", errors="replace") if entry.name.isdigit() else ""
        except OSError:
            continue
        taken.update(int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:"))
    while True:
        uid = random.randint(*USERS)
        if uid in taken:
            continue
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        try:
            grp.getgrgid(uid)
            continue
        except KeyError:
            return uid


def judge_one(here: Workspace, item: Item, learner: Package, public: Path, python: List[str], shown: Path,
              limit: float, on_event: Callable[[str, Outcome], None],
              on_idle: Optional[Callable[[], None]]) -> Outcome:
    """One item, in a worker of its own."""
    region = region_of(item)
    folder = here.root / f"item-{label(item.number)}"
    folder.mkdir()
    package = learner.copy_for(region, folder / "copy")
    package_dir = Path(str(package["dir"])) if package is not None else place(learner.texts, folder / "copy")
    run_dir, door, root = folder / "run", folder / "door", folder / "root"
    for made in (run_dir, door, root):
        made.mkdir()
    uid = fresh_user()
    os.chown(run_dir, uid, uid)
    os.chmod(run_dir, 0o700)
    contract = region if region in contracts() else None
    request = {"target": PACKAGE, "shown": str(shown), "items": [item.number], "limit": limit, "regions": {},
               "inputs": {contract: inputs_of(contract)} if contract else {}}
    if package is not None:
        request["lines"] = package["lines"]
    accounts = Accounts(door / "evidence.sock", Peer(uid, Path(JUDGE) / "servers", Path(RUN), EVIDENCE))
    binds = [[str(public), JUDGE, False], [str(package_dir), PACKAGE, False], [str(run_dir), RUN, True],
             [str(door), DOOR, False], [str(folder / "request.json"), REQUEST, False],
             *([folder_, folder_, False] for folder_ in python)]

    def launch(with_fd: Dict[str, Any]) -> Tuple[List[str], Dict[str, str]]:
        (folder / "request.json").write_text(json.dumps(with_fd), encoding="utf-8")
        spec = {"root": str(root), "binds": binds, "uid": uid, "gid": uid, "cwd": JUDGE,
                "argv": [sys.executable, "-B", "-E", "-s", "-m", "checks.worker", "--request", REQUEST],
                "env": {"PATH": search_path(), "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                        "MOCK": "1", "MCP_LAB_RUN_DIR": RUN, "MCP_LAB_EVIDENCE": EVIDENCE}}
        (folder / "sandbox.json").write_text(json.dumps(spec), encoding="utf-8")
        os.chmod(folder / "sandbox.json", 0o600)
        return [sys.executable, "-I", "-S", str(here.judge / "checks" / "sandbox.py"), str(folder / "sandbox.json")], {}

    witness = Evidence(accounts, item, contract, shown)
    try:
        outcome = run_isolated(request, str(run_dir), on_event, on_idle, launch=launch, witness=witness)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    refused = [line for line in outcome.outside.splitlines() if line.startswith("sandbox: ")]
    if refused and not outcome.verdicts and not outcome.model:  # the sandbox itself failed: nothing ran
        return Outcome(load_error=f"cannot grade here: {refused[-1]}")
    return outcome
