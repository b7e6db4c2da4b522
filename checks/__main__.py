import os
import sys

# `python -m checks` puts the working directory, the learner's repository, first on the
# module path: a file there named like one of the judge's dependencies (anyio.py) would
# be imported in its place. The judge itself is found already; the folder goes last.
here = os.path.realpath(os.getcwd())
first = [entry for entry in sys.path if os.path.realpath(entry or ".") != here]
sys.path[:] = first + [entry for entry in sys.path if entry not in first]

try:
    from checks.cli import main
except ModuleNotFoundError as missing:  # a fresh terminal, without the lab's virtual environment
    if (missing.name or "").split(".")[0] in ("checks", "solution", "starter", "servers"):
        raise
    print(f"python -m checks: the package {missing.name!r} is not installed for {sys.executable}: "
          "activate the lab's virtual environment (. .venv/bin/activate), or set it up as README.md says",
          file=sys.stderr)
    sys.exit(2)

try:
    sys.exit(main())
except BrokenPipeError:  # the reader went away (`| head`): stop quietly
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(1)
