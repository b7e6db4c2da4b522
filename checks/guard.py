"""The judge's watch over itself inside the worker, set before the code under
test is imported.

The worker judges in the process the code under test runs in, so a submission
can reach the judge. Two defences here catch the ways it would: by rebinding
names, and by touching files.

- A fingerprint of the judge: the identity of every module of checks/ in
  `sys.modules`, of every name each one binds, of each of its functions' code,
  defaults and closures, of its classes' attributes and of the items in its
  tables, and of the standard functions it relies on (`os.write`,
  `json.dumps`...). A verdict is sent only after the fingerprint is found
  unchanged; otherwise it is ERROR and the runner is told what changed.
- An audit hook (`sys.addaudithook`: once added, it cannot be removed) that
  refuses, and notes, what only a forgery does: reading the reference solution
  (when it is not the target), writing to checks/ or servers/, writing a
  server's journal, connecting to where the servers send the runner their
  accounts, swapping the code of a judge's function.

Neither is proof against a submission that edits the judge's objects found on
the heap or rewrites memory with native code: against that, what holds is the
runner's own check of every pass against the servers' accounts
(checks.items.proofs). labs/INSTRUCTORS.md says what a verdict proves.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import types
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from checks.target import ROOT

SOLUTION, CHECKS, SERVERS = (str(ROOT / name) for name in ("solution", "checks", "servers"))
JOURNAL = re.compile(r"-\d+\.jsonl$")  # how checks.fixtures.Lab names a server's journal
# How the import system caches a module's bytecode: written first under a temporary
# name (`x.cpython-311.pyc.<number>`), then renamed into place.
BYTECODE = re.compile(r"__pycache__[\\/][^\\/]+\.pyc(\.\d+)?$")
WRITING = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
# The standard functions the judge's verdicts pass through, by module.
RELIED_ON = {"os": ("write", "read", "_exit", "kill", "waitpid", "pipe", "fork", "getpid"),
             "json": ("dumps", "loads"), "json.encoder": ("c_make_encoder", "JSONEncoder"),
             "threading": ("Thread", "enumerate", "Lock"), "time": ("perf_counter", "monotonic", "time"),
             "traceback": ("extract_tb", "format_exception_only"), "dataclasses": ("asdict", "dataclass"),
             "builtins": ("isinstance", "issubclass", "open", "getattr", "setattr", "type", "str", "int", "float",
                          "dict", "list", "len", "any", "all", "sorted", "print", "BaseException", "Exception")}
WATCHED = frozenset({"open", "os.rename", "os.remove", "os.truncate", "os.chmod", "os.symlink", "os.link",
                     "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "socket.connect",
                     "object.__setattr__", "os.listdir", "os.scandir"})
FUNCTION_PARTS = ("__code__", "__defaults__", "__kwdefaults__")  # what swaps a function's behaviour in place
SHOWN = 5  # changes named in a verdict's message; the runner is told all of them


class Guard:
    """Armed once per worker, before the target is imported."""

    def __init__(self, target: Path, run_dir: Optional[str], evidence: Optional[str], keep: Iterable[Any] = ()) -> None:
        self.kept = list(keep)  # objects of the worker's own (its channel) to fingerprint too
        self.solution_is_target = target.resolve() == Path(SOLUTION)
        self.run_dir = os.path.realpath(run_dir) if run_dir else None
        self.evidence = evidence
        self.noted: List[str] = []
        self._inside = threading.local()
        self.marks = fingerprint(self.kept)
        sys.addaudithook(self._audit)

    def breaches(self, target: Optional[Tuple[str, Path]] = None) -> List[str]:
        """Everything the code under test did to the judge so far (empty: nothing);
        `target`: the package's importable name and directory, once it is loaded."""
        now = fingerprint(self.kept)
        changed = [name for name, mark in self.marks.items() if name not in now or now[name] is not mark]
        found = [f"{name} was replaced" for name in outermost(changed)]
        found += [f"a module of the reference solution was loaded: {m}" for m in foreign(Path(SOLUTION))
                  if not self.solution_is_target]
        if target is not None:
            found += [f"the target's module {name} was not loaded from the target ({where})"
                      for name, where in strays(*target)]
        return found + list(self.noted)

    def _audit(self, event: str, args: Tuple[Any, ...]) -> None:
        if event not in WATCHED or getattr(self._inside, "busy", False):  # first: it runs on every audited event
            return
        self._inside.busy = True
        try:
            why = self._refusal(event, args)
        finally:
            self._inside.busy = False
        if why is not None:
            if why not in self.noted:
                self.noted.append(why)
            raise PermissionError(f"refused by the lab's judge: {why}")

    def _refusal(self, event: str, args: Tuple[Any, ...]) -> Optional[str]:
        """What makes this audited event a forgery (None: it is not one)."""
        if event == "open":
            return self._opened(args[0], args[1] if len(args) > 1 else None, args[2] if len(args) > 2 else 0)
        if event in ("os.rename", "os.remove", "os.truncate", "os.chmod", "os.symlink", "os.link"):
            return next((f"{event} of {p}" for p in map(real, args[:2]) if p and under(p, CHECKS, SERVERS)), None) \
                or next((f"{event} onto a server's journal, {p}" for p in map(real, args[1:2])
                         if p and self._journal(p)), None)
        if event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"):
            return self._started(args)
        if event in ("os.listdir", "os.scandir") and not self.solution_is_target and args and \
                under(real(args[0] if args[0] is not None else ".") or "", SOLUTION):
            return f"listed the reference solution ({os.path.relpath(real(args[0]) or '', ROOT)})"
        if event == "socket.connect" and self.evidence and len(args) > 1 and args[1] == self.evidence:
            return "connected to where the servers send the runner their accounts"
        if event == "object.__setattr__" and len(args) > 1 and args[1] in FUNCTION_PARTS:
            owner = getattr(args[0], "__module__", None) or ""
            if isinstance(args[0], types.FunctionType) and owner.startswith("checks"):
                return f"swapped {args[1]} of the judge's {owner}.{args[0].__qualname__}"
        return None

    def _opened(self, path: Any, mode: Any, flags: Any) -> Optional[str]:
        place = real(path)
        if place is None:
            return None
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
            (isinstance(flags, int) and bool(flags & WRITING))
        if not self.solution_is_target and under(place, SOLUTION):
            return f"read the reference solution ({os.path.relpath(place, ROOT)})"
        if writes and under(place, CHECKS, SERVERS):
            if BYTECODE.search(place):  # the import system caching: refused quietly
                raise PermissionError("the judge's files are read-only to the code under test")
            return f"wrote to the judge's files ({os.path.relpath(place, ROOT)})"
        if writes and self._journal(place):
            return f"wrote to a server's journal ({os.path.basename(place)})"
        return None

    def _journal(self, place: str) -> bool:
        return bool(self.run_dir and under(place, self.run_dir) and JOURNAL.search(place))

    def _started(self, args: Tuple[Any, ...]) -> Optional[str]:
        """A command that names the reference solution (when it is not the target)."""
        if self.solution_is_target:
            return None
        words = [w for a in args for w in (a if isinstance(a, (list, tuple)) else [a]) if isinstance(w, (str, bytes))]
        tokens = [token for w in words for token in os.fsdecode(w).split()]  # a shell's command line too
        named = [token for token in tokens if under(real(token) or "", SOLUTION)]
        return f"started a command naming the reference solution ({named[0][:120]})" if named else None


def outermost(names: List[str]) -> List[str]:
    """`names` without those inside another of them (`f.__code__` when `f` itself was replaced)."""
    kept: List[str] = []
    for name in sorted(names):
        if not any(name.startswith(outer) and name[len(outer)] in ".[" for outer in kept if len(name) > len(outer)):
            kept.append(name)
    return kept


def real(path: Any) -> Optional[str]:
    """`path` resolved (links followed), or None when it is not a path (a descriptor)."""
    if isinstance(path, int) or path is None:
        return None
    try:
        return os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None


def under(place: str, *roots: str) -> bool:
    return any(place == root or place.startswith(root + os.sep) for root in roots)


_FILES: Dict[str, str] = {}  # a module's __file__ -> that file resolved: each resolved once


def file_of(module: Any) -> str:
    """Where `module` was loaded from, links resolved ("" when it has no file)."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return ""
    if file not in _FILES:
        _FILES[file] = os.path.realpath(file)
    return _FILES[file]


def judge_modules() -> List[str]:
    """The judge's modules loaded here: checks/ but its maintainers' dev/ and tests/."""
    # dict.copy() takes the table in one step; list(d.items()) walks it while an item's
    # thread may be importing a module (seen: "dictionary changed size during iteration").
    return [name for name, module in sys.modules.copy().items() if name.startswith("checks")
            and under(file_of(module), CHECKS)
            and not under(file_of(module), os.path.join(CHECKS, "dev"), os.path.join(CHECKS, "tests"))]


def fingerprint(kept: Iterable[Any] = ()) -> Dict[str, object]:
    """Everything the judge's behaviour rests on, by name: the objects themselves,
    compared by identity (`is`; held, so none is freed and its id reused; and not
    by id(), which is an audited call)."""
    marks: Dict[str, object] = {}
    looked: Set[object] = set()  # classes and functions, hashed by identity
    tables: List[object] = []  # lists and tuples, which are not hashable: few, compared with `is`
    for name in judge_modules():
        module = sys.modules[name]
        marks[f"sys.modules[{name!r}]"] = module
        for attr, value in list(vars(module).items()):
            marks[f"{name}.{attr}"] = value
            if first_sight(value, looked, tables):  # looked into once, under the first name it has
                marks.update(inner(f"{name}.{attr}", value))
    for name, attrs in RELIED_ON.items():
        relied = sys.modules.get(name)
        marks[f"sys.modules[{name!r}]"] = relied
        for attr in attrs:
            marks[f"{name}.{attr}"] = getattr(relied, attr, None)
    for obj in kept:
        marks.update({f"the worker's {type(obj).__name__}.{k}": v for k, v in vars(obj).items()})
    return marks


def first_sight(value: Any, looked: Set[object], tables: List[object]) -> bool:
    """Whether `value` is worth looking into and has not been looked into yet."""
    if isinstance(value, (list, tuple)):
        if any(value is table for table in tables):
            return False
        tables.append(value)
        return True
    if isinstance(value, (type, types.FunctionType)):
        if value in looked:
            return False
        looked.add(value)
        return True
    return False


def ours(value: Any) -> bool:
    return str(getattr(value, "__module__", "") or "").startswith("checks")


def inner(name: str, value: Any) -> Dict[str, object]:
    """The parts of one of the judge's values that could be changed in place."""
    if isinstance(value, types.FunctionType) and ours(value):
        return function_marks(name, value)
    if isinstance(value, type) and ours(value):
        marks: Dict[str, object] = {}
        for attr, member in list(vars(value).items()):
            marks[f"{name}.{attr}"] = member
            if isinstance(member, types.FunctionType):
                marks.update(function_marks(f"{name}.{attr}", member))
        return marks
    if isinstance(value, (list, tuple)):
        return {f"{name}[{at}].{attr}": v for at, element in enumerate(value) if ours(type(element))
                and hasattr(element, "__dict__") for attr, v in vars(element).items()}
    return {}


def function_marks(name: str, function: types.FunctionType) -> Dict[str, object]:
    marks: Dict[str, object] = {f"{name}.__code__": function.__code__, f"{name}.__defaults__": function.__defaults__,
                                f"{name}.__kwdefaults__": function.__kwdefaults__}
    for at, cell in enumerate(function.__closure__ or ()):
        try:
            marks[f"{name}.<closure {at}>"] = cell.cell_contents
        except ValueError:  # a cell not yet filled
            pass
    return marks


def foreign(directory: Path) -> List[str]:
    """Modules loaded here from files under `directory`."""
    root = str(directory)
    return sorted(name for name, module in sys.modules.copy().items() if under(file_of(module), root))


def strays(package: str, directory: Path) -> List[Tuple[str, str]]:
    """The target's modules (`package.*`) whose file is not in its `directory`."""
    home = os.path.realpath(directory)
    found = []
    for name, module in sys.modules.copy().items():
        if (name == package or name.startswith(package + ".")) and not under(file_of(module), home):
            found.append((name, str(getattr(module, "__file__", None))))
    return found
