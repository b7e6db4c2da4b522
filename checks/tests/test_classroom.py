"""labs/classroom/self-check.yml, its steps run here one by one as a runner
runs them: a green job for the reference and for a learner who finished the
nine and no extension, a red one for the shipped starter, whatever judge the
learner's repository or history holds.

The actions the workflow uses have stand-ins here: setup-python is a fresh
interpreter environment that sees this one's packages, checkout clones the
learner's repository, upload-artifact checks that the files it keeps are
there. pip runs offline (no index, no build isolation): the judge is the
only thing it installs."""

from __future__ import annotations

import json
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
import yaml

from checks.target import ROOT
from checks.tests.conftest import Variant

WORKFLOW = ROOT / "labs" / "classroom" / "self-check.yml"
STEP_LIMIT = 600  # seconds for one step; only a hang reaches it
FORGED_MAIN = "print('9/9 passed · the learner\\'s own judge'); raise SystemExit(0)\n"


def git(*args: str, cwd: Path, env: Dict[str, str] | None = None) -> str:
    return subprocess.run(["git", "-c", "user.name=learner", "-c", "user.email=learner@lab.invalid", *args],
                          cwd=cwd, check=True, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}).stdout.strip()


def learners_repository(judge: Path, starter: Path, into: Path) -> Path:
    """The template with `starter` as the learner's work, and a judge of the
    learner's own wherever a workflow might take one from: checks/ edited in the
    last commit, a compiled checks/__main__ committed, and a root commit of 1971
    holding a forged checks/ merged into the history."""
    shutil.copytree(judge, into, ignore=shutil.ignore_patterns(".git"))
    shutil.rmtree(into / "starter")
    shutil.copytree(starter, into / "starter", ignore=shutil.ignore_patterns("tests", "__pycache__"))
    git("init", "--quiet", "--initial-branch=main", cwd=into)
    git("add", "--all", cwd=into)
    git("commit", "--quiet", "--message", "the learner's work", cwd=into)
    git("checkout", "--quiet", "--orphan", "old", cwd=into)
    (into / "checks" / "__main__.py").write_text(FORGED_MAIN)
    git("add", "--all", cwd=into)
    dated = {"GIT_AUTHOR_DATE": "1971-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "1971-01-01T00:00:00Z"}
    git("commit", "--quiet", "--message", "the template, supposedly", cwd=into, env=dated)
    git("checkout", "--quiet", "main", cwd=into)
    git("merge", "--quiet", "--allow-unrelated-histories", "--strategy=ours", "--message", "history", "old", cwd=into)
    (into / "checks" / "__main__.py").write_text(FORGED_MAIN)
    compiled = into / "checks" / "__pycache__" / f"__main__.{sys.implementation.cache_tag}.pyc"
    compiled.parent.mkdir(exist_ok=True)
    source = into / "forged_main.py"
    source.write_text(FORGED_MAIN)
    py_compile.compile(str(source), cfile=str(compiled), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    source.unlink()
    git("add", "--all", "--force", cwd=into)
    git("commit", "--quiet", "--message", "a judge of my own", cwd=into)
    return into


def setup_python(workspace: Path, env: Dict[str, str]) -> int:
    """actions/setup-python: an interpreter environment of the job's own, which
    sees this environment's packages (pip, setuptools and the judge's needs)."""
    python = workspace.parent / "python"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(python)], check=True, timeout=120)
    sites = [entry for entry in sys.path if entry.endswith("site-packages")]
    (next(python.glob("lib/python*/site-packages")) / "outer.pth").write_text("\n".join(sites) + "\n")
    env["PATH"] = f"{python / 'bin'}{os.pathsep}{env['PATH']}"
    return 0


def checkout(step: Dict[str, Any], workspace: Path, learner: Path) -> int:
    """actions/checkout: the learner's repository, as a push to it is checked out."""
    git("clone", "--quiet", str(learner), str(workspace / step.get("with", {}).get("path", ".")), cwd=workspace)
    return 0


def upload_artifact(step: Dict[str, Any], workspace: Path) -> int:
    """actions/upload-artifact: every file it keeps must be there."""
    kept = [line.strip() for line in step["with"]["path"].splitlines() if line.strip()]
    return 0 if all((workspace / name).is_file() for name in kept) else 1


def run_job(judge: Path, learner: Path, workspace: Path) -> List[int]:
    """The job's steps one by one, as a runner takes them (a step after a failed
    one runs only with `if: always()`); each step's exit status, None when skipped."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    commit = git("rev-parse", "HEAD", cwd=judge)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))},
           **{k: str(v) for k, v in workflow.get("env", {}).items()}, "TEMPLATE": str(judge), "JUDGE_COMMIT": commit,
           "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    workspace.mkdir()
    statuses: List[int] = []
    for step in workflow["jobs"]["self-check"]["steps"]:
        if any(s != 0 for s in statuses) and step.get("if") != "always()":
            continue
        uses = str(step.get("uses", "")).split("@")[0]
        if uses == "actions/setup-python":
            status = setup_python(workspace, env)
        elif uses == "actions/checkout":
            status = checkout(step, workspace, learner)
        elif uses == "actions/upload-artifact":
            status = upload_artifact(step, workspace)
        elif uses:
            raise AssertionError(f"the workflow uses {uses}, which has no stand-in here")
        else:
            status = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                                    cwd=workspace, env=env, timeout=STEP_LIMIT, capture_output=True).returncode
        statuses.append(status)
    return statuses


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("learner", ["reference", "the nine", "shipped starter"])
def test_the_classroom_jobs_status_is_the_nines_judged_by_the_template(
        template: Path, variant: Variant, shipped: Path, tmp_path: Path, learner: str) -> None:
    starter = {"reference": lambda: ROOT / "solution", "the nine": lambda: variant("starter", from_solution=(1, 2, 3, 4)),
               "shipped starter": lambda: shipped}[learner]()
    repository = learners_repository(template, starter, tmp_path / "learner")
    statuses = run_job(template, repository, tmp_path / "job")
    green = all(status == 0 for status in statuses)
    assert green == (learner != "shipped starter"), statuses
    report = json.loads((tmp_path / "job" / "report.json").read_text())
    red = {str(i.get("name") or i["number"]) for i in report["items"] + report["extensions"] if i["status"] != "pass"}
    assert red == {"reference": set(), "the nine": {f"E{n}" for n in range(1, 12)},
                   "shipped starter": {"2", "3", "5", "6", "8", *(f"E{n}" for n in range(1, 12))}}[learner]
