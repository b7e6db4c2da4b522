"""One learner's `python -m checks --json` report, read with bounds, as a row of
the gradebook (`checks/gradebook.py` lays the rows out as a table).

A report comes from a learner's repository or a CI artifact, so it is read as
hostile input: a regular file only (a FIFO would block the read, a link to
/dev/zero would never end), at most MAX_BYTES, nested at most MAX_DEPTH deep,
and valid against checks/report.schema.json. A file that fails any of these is
named with the reason and skipped; it never ends the gradebook for the others.

What the row claims is no more than the report holds. A run the runner could
not judge (the target did not load, the run itself went wrong, exit status 2
with no reason given, or a report that contradicts itself) shows no verdict at
all, only why. An item listed twice shows both verdicts, never the later one.
A commit or date the report does not carry is shown as missing, not guessed.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from checks.items import EXTENSION_ITEMS, ITEMS, label

SCHEMA = Path(__file__).resolve().parent / "report.schema.json"
MAX_BYTES = 16 * 1024 * 1024  # a report of all twenty items with --trace is about 60 KB
MAX_DEPTH = 16  # containers inside containers; the runner's report goes 4 deep
MAX_ITEMS = 40  # every item listed twice: more is no report the runner wrote
BULK = ("output", "trace", "problems", "killed")  # lists of text a report may hold by the million
REASON_WIDTH = 200  # characters of a reason shown from a report's own text
GENERIC = {"report", "checks", "results", "self-check"}  # file names that say nothing about who

CORE = [item.number for item in ITEMS]
EXTENSIONS = [item.number for item in EXTENSION_ITEMS]
TITLES = {item.number: item.title for item in ITEMS + EXTENSION_ITEMS}

# What a cell says. A verdict the runner did not give is never shown as one.
PASS, FAIL, NOT_JUDGED, TWICE, NOT_RUN = "pass", "fail", "not judged", "listed twice", "not run"  # twice or more

# Unicode categories shown as escapes: controls (C0, C1, tab, DEL), format characters
# (the bidirectional overrides and isolates such as U+202E, zero-width ones), line and
# paragraph separators, and lone surrogates (a file name that is not UTF-8, or "\ud800"
# in JSON), which no UTF-8 file can hold.
HIDDEN = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def shown(text: str, width: int = REASON_WIDTH) -> str:
    """`text` on one line, every character that could hide, reorder or break what
    is around it written as an escape (`\\u202e`), cut to `width` characters."""
    cut = text[:width]
    escaped = "".join(repr(char)[1:-1] if unicodedata.category(char) in HIDDEN else char for char in cut)
    return escaped + ("…" if len(text) > width else "")


def first_line(text: str) -> str:
    line = next((line for line in text.splitlines() if line.strip()), "").strip()
    return line.removeprefix("not judged: ")  # the runner's own prefix on an unjudged item


class Unreadable(Exception):
    """Why a file is not read as a report (the text follows "it")."""


@dataclass
class Learner:
    name: str
    report: Path
    page: Optional[Path]
    exit_status: int
    verdicts: Dict[int, List[str]] = field(default_factory=dict)  # item number -> every status given it
    why_not_judged: Dict[int, str] = field(default_factory=dict)  # item number -> the runner's reason
    unjudged: Optional[str] = None  # why the run as a whole was not judged
    commit: Optional[str] = None  # as the report gives it, made visible; None: the report has none
    date: Optional[str] = None
    ran_extensions: bool = False

    def status(self, number: int) -> str:
        given = self.verdicts.get(number)
        if self.unjudged is not None:
            return NOT_JUDGED
        if not given:
            return NOT_RUN
        if len(given) > 1:
            return TWICE
        return NOT_JUDGED if given[0] == "error" else given[0]

    def passed(self, numbers: List[int]) -> int:
        return sum(self.status(number) == PASS for number in numbers)

    def score(self) -> str:
        """"core 9/9 · extensions 3/11", or why there is no score."""
        if self.unjudged is not None:
            return NOT_JUDGED
        parts = [f"core {self.passed(CORE)}/{len(CORE)}",
                 f"extensions {self.passed(EXTENSIONS)}/{len(EXTENSIONS)}" if self.ran_extensions
                 else "extensions not run"]
        gaps = sum(self.status(number) in (NOT_JUDGED, TWICE) for number in CORE + EXTENSIONS)
        return " · ".join(parts + ([f"{gaps} not judged"] if gaps else []))

    def judged(self) -> str:
        """"yes", or "no: why", or "partly: " and what was left out."""
        if self.unjudged is not None:
            return f"no: {self.unjudged}"
        gaps: List[str] = []
        for number in CORE + EXTENSIONS:
            status = self.status(number)
            if status == NOT_JUDGED:
                gaps.append(f"{label(number)} not judged: {self.why_not_judged.get(number) or 'no reason given'}")
            elif status == TWICE:
                given = self.verdicts[number]
                times = "twice" if len(given) == 2 else f"{len(given)} times"
                gaps.append(f"{label(number)} listed {times} ({', then '.join(given)}); "
                            "the runner lists each item once")
        missing = [label(number) for number in CORE + (EXTENSIONS if self.ran_extensions else [])
                   if self.status(number) == NOT_RUN]
        if missing:
            gaps.append(f"not run: {', '.join(missing)}")
        return f"partly: {'; '.join(gaps)}" if gaps else "yes"


def learner_name(path: Path) -> str:
    return path.parent.name if path.stem.lower() in GENERIC and path.parent.name else path.stem


def read(path: Path) -> Tuple[Optional[Learner], Optional[str]]:
    """A learner from one report, or why the file was skipped."""
    try:
        report = parsed(read_bounded(path))
    except Unreadable as exc:
        return None, str(exc)
    page = path.with_suffix(".html")
    learner = Learner(learner_name(path), path, page if page.is_file() else None,
                      exit_status=int(report["exit_status"]), ran_extensions=bool(report.get("extensions")),
                      commit=fact(report, "commit"), date=fact(report, "date"))
    for item in [*report["items"], *report.get("extensions", [])]:
        number = int(item["number"])
        learner.verdicts.setdefault(number, []).append(str(item["status"]))
        if item["status"] == "error":
            learner.why_not_judged.setdefault(number, shown(first_line(str(item["message"]))))
    learner.unjudged = whole_run_unjudged(report, learner.verdicts)
    return learner, None


def read_bounded(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_BYTES: a link, FIFO, device or
    folder is refused before it is opened (so nothing blocks, nothing is endless),
    and a file that grows past the bound while it is read is refused too."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise Unreadable(f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable(f"is {kind(info.st_mode)}; only regular files are read")
    if info.st_size > MAX_BYTES:
        raise Unreadable(too_big(info.st_size))
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)  # O_NOFOLLOW, O_NONBLOCK: a file swapped since the lstat cannot block or lead on
    except OSError as exc:
        raise Unreadable("is a symbolic link; only regular files are read" if exc.errno == errno.ELOOP
                         else f"cannot be read ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Unreadable("was replaced by something other than a regular file while it was read")
        chunks: List[bytes] = []
        size = 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_BYTES:
            raise Unreadable(too_big(size))
        return b"".join(chunks)
    except OSError as exc:
        raise Unreadable(f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def kind(mode: int) -> str:
    kinds: List[Tuple[Callable[[int], bool], str]] = [
        (stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def too_big(size: int) -> str:
    return f"is {size:,} bytes or more; a report is read only up to {MAX_BYTES:,}"


def parsed(data: bytes) -> Dict[str, Any]:
    """The report in `data`, checked against the schema, or Unreadable."""
    try:
        report = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise Unreadable("is not UTF-8 text") from None
    except RecursionError:  # json's own guard, raised long before the stack is at risk
        raise Unreadable(f"is nested far deeper than a report ({MAX_DEPTH} levels at most)") from None
    except ValueError as exc:
        raise Unreadable(f"is not JSON ({exc})") from None
    depth = nesting(report)
    if depth > MAX_DEPTH:  # the schema check recurses; nothing this deep reaches it
        raise Unreadable(f"is nested {depth} levels deep or more; a report is at most {MAX_DEPTH}")
    listed = sum(len(report.get(key) or []) for key in ("items", "extensions")
                 if isinstance(report, dict) and isinstance(report.get(key), list))
    if listed > MAX_ITEMS:
        raise Unreadable(f"lists {listed:,} items; a report lists at most {len(TITLES)}, each once")
    error = next(iter(validator().iter_errors(lightened(report))), None)
    if error is not None:
        raise Unreadable(f"is not a python -m checks --json report ({shown(error.message, 120)})")
    checked: Dict[str, Any] = report
    return checked


def nesting(value: Any) -> int:
    """How deep containers go in `value`, walked a level at a time (no recursion,
    and only containers are held); it stops counting one level past MAX_DEPTH."""
    level, containers = 0, [value] if isinstance(value, (dict, list)) else []
    while containers and level <= MAX_DEPTH:
        level += 1
        containers = [child for node in containers for child in (node.values() if isinstance(node, dict) else node)
                      if isinstance(child, (dict, list))]
    return level


def lightened(report: Any) -> Any:
    """`report` with each long list of text cut to its first line for the schema
    check, once every line is seen to be text: jsonschema takes about 30 s to check
    a million lines one by one, a plain look at their type 30 ms."""
    def cut(holder: Any) -> Any:
        if not isinstance(holder, dict):
            return holder
        light = dict(holder)
        for key in BULK:
            lines = light.get(key)
            if isinstance(lines, list) and len(lines) > 1 and all(isinstance(line, str) for line in lines):
                light[key] = lines[:1]
        return light

    light = cut(report)
    for key in ("items", "extensions"):
        if isinstance(light, dict) and isinstance(light.get(key), list):
            light[key] = [cut(item) for item in light[key]]
    return light


@lru_cache(maxsize=1)
def validator() -> Any:
    import jsonschema  # only a gradebook pays for it

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def fact(report: Dict[str, Any], key: str) -> Optional[str]:
    """A fact of the run the report may carry (its commit, its date), made visible."""
    value = report.get(key)
    if value is None:
        return None
    return shown(value, 40) if isinstance(value, str) and value.strip() else "unreadable in the report"


def whole_run_unjudged(report: Dict[str, Any], verdicts: Dict[int, List[str]]) -> Optional[str]:
    """Why no verdict of this run stands, or None when its verdicts do."""
    if report.get("status") == "error":
        why = first_line(str(report.get("message", "")))
        return f"the runner could not load the submission: {shown(why) if why else 'the report gives no reason'}"
    problems = report.get("problems") or []
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return f"the run itself went wrong: {shown(first_line(problems[0]))}{more}"
    if not verdicts:
        return "the report holds no verdict"
    if any(len(given) > 1 for given in verdicts.values()):
        return None  # flagged item by item; the exit status cannot be checked against two verdicts
    statuses = [given[0] for given in verdicts.values()]
    expected = 2 if "error" in statuses else 0 if all(status == "pass" for status in statuses) else 1
    recorded = int(report["exit_status"])
    if recorded == 2 and expected != 2:
        return "the runner could not judge the run (exit status 2) and the report does not say why"
    if recorded != expected:
        return (f"the report contradicts itself (exit status {recorded} with verdicts that make {expected}); "
                "the runner never writes that")
    return None
