import os
import sys

try:
    # >>> reference: the reference client's full command line (solution/commands/)
    from .commands.cli import main
    # <<< reference
except ModuleNotFoundError as missing:  # a fresh terminal, without the lab's virtual environment
    if (missing.name or "").split(".")[0] in ("checks", "solution", "starter", "servers"):
        raise
    print(f"python -m {__package__}: the package {missing.name!r} is not installed for {sys.executable}: "
          "activate the lab's virtual environment (. .venv/bin/activate), or set it up as README.md says",
          file=sys.stderr)
    sys.exit(2)

try:
    sys.exit(main())
except BrokenPipeError:  # the reader went away (`| head`): stop quietly
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(1)
except KeyboardInterrupt:
    sys.exit(130)
