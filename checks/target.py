"""Load the client package under test: `starter`, `solution`, or a directory.

The checks use only the package's public modules, so a learner's package is
judged by what it does, through the same API the reference client has.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from checks.exercises import EXERCISES, EXTENSIONS

ROOT = Path(__file__).resolve().parent.parent
# Imported when a target loads: the learner's modules the items lean on, and every
# file a region is in, so a learner's syntax error wherever they write is told as
# one, at once (left to an item's first use of the module, it read as the check
# failing). The reference's layers are imported where an item first uses them.
MODULES = tuple(dict.fromkeys((
    "errors", "config", "stdio_client", "discovery", "naming", "translate", "aggregator", "model", "mock_model",
    "model_apis", "agent", "consent", "meta_tools", "tool_calls", "tasks", "elicitation", "stubs",
    *(Path(exercise.file).stem for exercise in EXERCISES.values()),
    *(Path(extension.file).stem for extension in EXTENSIONS.values()))))


class TargetError(Exception):
    """The package could not be loaded; the checks cannot judge it."""


# A shift: from this line of the copy on (1-based), the learner's line is the
# copy's plus `delta`; a line inside a swapped body maps to that body's first line.
Shift = Tuple[int, int, int, int]  # (copy's first body line, copy's lines after the body, delta, learner's line)


def learner_line(shifts: List[Shift], line: int) -> int:
    """The learner's line for line `line` of the copy."""
    starts = [s[0] for s in shifts]
    index = bisect_right(starts, line) - 1
    if index < 0:
        return line
    first, after, delta, theirs = shifts[index]
    return theirs if line < after else line + delta


@dataclass
class Target:
    name: str  # "starter", "solution", or the directory given
    directory: Path
    package: str  # the importable name it was loaded under
    # A copy judged in place of the learner's package (checks.hybrid): the
    # learner's own directory, for every path shown, and per file how the
    # copy's lines map back to the learner's.
    shown: Optional[Path] = None
    lines: Dict[str, List[Shift]] = field(default_factory=dict)

    def module(self, name: str) -> Any:
        # Imported on first use: a module no other module imports (sse, say) is
        # still the learner's, loaded from the learner's package.
        return importlib.import_module(f"{self.package}.{name}")

    def display_path(self, file: str) -> str:
        directory = self.shown or self.directory
        try:
            return str((directory / file).relative_to(Path.cwd()))
        except ValueError:
            return str(directory / file)

    def learner_line(self, file: str, line: int) -> int:
        """The line of the learner's own file that line `line` of `file` here is."""
        return learner_line(self.lines[file], line) if file in self.lines else line

    # Typed as Any on purpose: the target is the learner's code, checked at run time.
    @property
    def errors(self) -> Any: return self.module("errors")
    @property
    def config(self) -> Any: return self.module("config")
    @property
    def stdio_client(self) -> Any: return self.module("stdio_client")
    @property
    def discovery(self) -> Any: return self.module("discovery")
    @property
    def naming(self) -> Any: return self.module("naming")
    @property
    def aggregator(self) -> Any: return self.module("aggregator")
    @property
    def model(self) -> Any: return self.module("model")
    @property
    def mock_model(self) -> Any: return self.module("mock_model")
    @property
    def agent(self) -> Any: return self.module("agent")
    @property
    def consent(self) -> Any: return self.module("consent")
    @property
    def meta_tools(self) -> Any: return self.module("meta_tools")
    @property
    def elicitation(self) -> Any: return self.module("elicitation")


def failing_file(exc: BaseException, directory: Path, module_name: str) -> str:
    """The file an import failed in: a syntax error's own (when the module imported
    imports the broken one, it is not that module), else the module imported."""
    broken = exc.filename if isinstance(exc, SyntaxError) else None
    if broken and Path(broken).resolve().is_relative_to(directory.resolve()):
        return str(Path(broken).resolve().relative_to(directory.resolve()))
    return module_name + ".py"


def target_directory(name: str) -> Path:
    """The directory of the package `--target` names."""
    return ROOT / name if name in ("starter", "solution") else Path(name)


def load_target(name: str, shown: Optional[Path] = None) -> Target:
    """Import `starter`/`solution` by name, or a package directory by path
    (`shown`: the directory its paths are shown as, for a copy of a learner's)."""
    if name in ("starter", "solution"):
        directory, package = ROOT / name, name
        if str(ROOT) not in sys.path:  # after the judge's dependencies: a file of the lab's never shadows one
            sys.path.append(str(ROOT))
    else:
        directory = Path(name).resolve()
        if not (directory / "__init__.py").exists():
            raise TargetError(f"--target {name}: not 'starter', 'solution' or a package directory")
        # A unique name, so several copies (the integrity tests) can coexist.
        package = f"_checked_{abs(hash(str(directory)))}"
        spec = importlib.util.spec_from_file_location(
            package, directory / "__init__.py", submodule_search_locations=[str(directory)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        spec.loader.exec_module(module)
    target = Target(name, directory, package, shown)
    for module_name in MODULES:
        try:
            importlib.import_module(f"{package}.{module_name}")
        except Exception as exc:  # a learner's syntax error lands here
            raise TargetError(f"cannot import {target.display_path(failing_file(exc, directory, module_name))}: "
                              f"{type(exc).__name__}: {exc}") from exc
    return target

