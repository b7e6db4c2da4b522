"""A table of `--switches`, and a command line read against it the way argparse
reads it, without importing argparse.

Every test item starts several fixture servers, and each start used to pay for
argparse twice: its import (with gettext and locale) and the building of a
parser, one formatter per `add_argument`. Together they were a sixth of a
server's start-up. So the common command line (exact `--name value`,
`--name=value` and flags, every value plain) is read here, and anything else
(`--help`, an abbreviation, a value that starts with '-', a wrong choice or
number) gives None, for argparse itself to read or refuse with its usual words.
The table is the one definition of the switches: the parser argparse gets is
built from it too (`parser`), and a property test holds `read` to argparse on
command lines drawn from the table.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (see servers/rpc.py)
if TYPE_CHECKING:
    import argparse
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

TAKES = ("value", "flag", "append", "optional")  # one value; none; one, repeatable; an optional one


class Switch:
    """One `--switch`: what it takes, of which type and choices, its default (a
    function when it reads the environment, so it is read at each parse), and
    its help."""

    def __init__(self, name: str, help: str, takes: str = "value", type: Callable[[str], Any] = str,
                 choices: Optional[Tuple[Any, ...]] = None, default: Any = None,
                 metavar: Optional[str] = None, const: Any = None) -> None:
        assert name.startswith("--") and takes in TAKES
        if takes == "flag" and default is None:
            default = False  # as argparse's store_true has it
        self.name, self.help, self.takes, self.type = name, help, takes, type
        self.choices, self.default, self.metavar, self.const = choices, default, metavar, const

    @property
    def dest(self) -> str:
        return self.name[2:].replace("-", "_")

    def start(self) -> Any:
        """The value before the command line is read (a new list for one that appends)."""
        if self.takes == "append":
            return []
        return self.default() if callable(self.default) else self.default

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """This switch as argparse takes it."""
        extra: Dict[str, Any] = {}
        if self.takes == "flag":
            extra["action"] = "store_true"
        elif self.takes == "append":
            extra["action"] = "append"
        elif self.takes == "optional":
            extra.update(nargs="?", const=self.const)
        if self.takes != "flag":
            extra.update(choices=self.choices, metavar=self.metavar)
            if self.type is not str:
                extra["type"] = self.type
        parser.add_argument(self.name, default=self.start(), help=self.help, **extra)


def read(argv: Sequence[str], switches: Sequence[Switch]) -> Optional[Dict[str, Any]]:
    """Each switch's value after `argv`, as argparse would leave it, or None when
    argparse would read `argv` any other way or refuse it."""
    by_name = {switch.name: switch for switch in switches}
    values = {switch.dest: switch.start() for switch in switches}
    at = 0
    while at < len(argv):
        word = argv[at]
        at += 1
        name, equals, given = word.partition("=")
        switch = by_name.get(name)
        if switch is None:
            return None  # not an exact switch: help, an abbreviation, a word of its own, "--"
        if switch.takes == "flag":
            if equals:
                return None  # argparse refuses a flag's value
            values[switch.dest] = True
            continue
        if not equals:
            following = argv[at] if at < len(argv) else None
            if switch.takes == "optional" and (following is None or following.startswith("-")):
                values[switch.dest] = switch.const  # no value of its own (a next word that is no
                continue  # switch is then refused, as argparse refuses it or reads it as a value)
            if following is None or following.startswith("-"):
                return None  # missing, or one argparse may take for an option or a negative number
            given, at = following, at + 1
        try:
            value = switch.type(given)
        except (TypeError, ValueError):
            return None
        if switch.choices is not None and value not in switch.choices:
            return None
        if switch.takes == "append":
            values[switch.dest].append(value)
        else:
            values[switch.dest] = value
    return values


def parser(switches: Sequence[Switch], **about: Any) -> argparse.ArgumentParser:
    """argparse's parser for the same switches (`about`: prog, description, epilog)."""
    import argparse

    class Formatter(argparse.HelpFormatter):
        """argparse's own, told the width: left to find it, it imports shutil."""

        def __init__(self, prog: str) -> None:
            super().__init__(prog, width=columns() - 2)

    built = argparse.ArgumentParser(formatter_class=Formatter, **about)
    for switch in switches:
        switch.add_to(built)
    return built


def columns() -> int:
    """The terminal's width as shutil.get_terminal_size() finds it ($COLUMNS, else
    the terminal on stdout, else 80), without importing shutil."""
    import os
    import sys
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no stdout, or not a terminal
        return 80
