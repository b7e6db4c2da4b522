"""Writing a file whole, for the runner's own files (the page, kept bytecode)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Union


def write_whole(path: Path, data: Union[str, bytes], mode: int = 0o644) -> None:
    """`data` as the whole of `path`: written to a new file beside it, created by
    mkstemp (exclusively, under a random name, so nothing planted there, a link
    or a FIFO, is ever opened) and renamed over `path` (which replaces a link
    there rather than following it), so a reader at the same moment sees the old
    file or the new, never half. The approach of the client's own
    safe_files.replace; the checks import nothing from the package they judge."""
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        if hasattr(os, "fchmod"):  # mkstemp's 0600 is for secrets; these are not
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as file:
            file.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(partial, path)
    except BaseException:
        os.unlink(partial)
        raise
