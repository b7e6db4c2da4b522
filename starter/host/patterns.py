"""Schemas from servers, checked with bounded work.

A schema's `pattern` is server text too: `^(a+)+$` against a few dozen
characters keeps Python's `re` busy for minutes, holding the event loop (no
timeout fires, Ctrl-C waits). Schemas are therefore checked with the `regex`
engine, which takes a timeout and lets go of the interpreter while it
matches; a pattern that runs out of time is reported, not waited for.

The schema's shape is the other lever: six `$defs`, each an `anyOf` of ten
`$ref`s to the next, make a million paths for one value. Every keyword a
check evaluates therefore counts against a budget of steps (`MAX_STEPS`);
past it the check stops with `TooComplex`, whatever the machine's speed. An
honest schema needs a few hundred steps.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Type

from ..jsonrpc import Json
from ..translate import ToolEntry, first_problem

# jsonschema and regex are imported where a value is first checked, not here:
# together they take about 90 ms to import, which a client that only starts,
# lists or calls tools without checking a value has no reason to pay.
if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

MATCH_SECONDS = 0.5  # per pattern and value; an honest pattern needs microseconds, even on a busy machine


MAX_STEPS = 20_000  # keyword evaluations for one check: a tenth of a second or so at worst


class PatternTooSlow(Exception):
    """A server's pattern did not finish matching within MATCH_SECONDS."""


class TooComplex(PatternTooSlow):
    """A check needed more than MAX_STEPS keyword evaluations."""


_steps = threading.local()


class Budget:
    """`with Budget():` around one check: every keyword evaluated inside counts."""

    def __enter__(self) -> "Budget":
        _steps.left = MAX_STEPS
        return self

    def __exit__(self, *exc: Any) -> None:
        _steps.left = None


def spend() -> None:
    left = getattr(_steps, "left", None)
    if left is None:
        return  # outside a Budget: the caller bounds the work another way
    if left <= 0:
        raise TooComplex(f"the server's schema needs more than {MAX_STEPS} steps to check one value "
                         "(references that fan out)")
    _steps.left = left - 1


def counted(keyword: Any) -> Any:
    """A keyword function of jsonschema's that spends one step each time it runs."""
    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        spend()
        yield from keyword(validator, value, instance, schema)
    return run


@lru_cache(maxsize=1024)
def compiled(pattern: str) -> Any:
    import regex
    return regex.compile(pattern)


def search(pattern: str, text: str) -> bool:
    import regex
    try:
        return compiled(pattern).search(text, timeout=MATCH_SECONDS, concurrent=True) is not None
    except TimeoutError:
        raise PatternTooSlow(f"the server's pattern {pattern[:60]!r} took longer than "
                             f"{MATCH_SECONDS:g} s to check") from None
    except regex.error as exc:
        raise PatternTooSlow(f"the server's pattern {pattern[:60]!r} is not usable: {exc}") from None


# jsonschema calls keyword functions with its validator instance, typed loosely there.
def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    from jsonschema import ValidationError
    if isinstance(instance, str) and isinstance(pattern, str) and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any,
                        schema: Any) -> Iterator[ValidationError]:
    if not isinstance(instance, dict) or not isinstance(patterns, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


_BOUNDED: Dict[type, Type[Validator]] = {}


def bounded(cls: Type[Validator]) -> Type[Validator]:
    """`cls` with its pattern keywords matched under a time limit and every
    keyword counted against the step budget."""
    found = _BOUNDED.get(cls)
    if found is None:
        from jsonschema.validators import extend
        _extend: Any = extend  # untyped in jsonschema
        keywords = {**cls.VALIDATORS, "pattern": _pattern, "patternProperties": _pattern_properties}
        made: Type[Validator] = _extend(cls, {name: counted(fn) for name, fn in keywords.items()})
        found = _BOUNDED[cls] = made
    return found


def bounded_problem(schema: Json, instance: Any) -> Optional[str]:
    """The first way `instance` breaks a server's `schema`, checked with bounded work; None if it fits."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for
    try:
        with Budget():
            return first_problem(bounded(validator_for(schema, default=Draft202012Validator))(schema), instance)
    except PatternTooSlow as exc:  # a slow pattern, or too many steps (TooComplex)
        return f"it could not be checked: {exc}"


class BoundedToolEntry(ToolEntry):
    """A tool whose schemas are checked with bounded work: a pattern under a time
    limit, every keyword counted against MAX_STEPS. A check that runs out is a
    problem with the value, said as such, never a hang."""

    def compile(self, schema: Json) -> Validator:
        from jsonschema import Draft202012Validator
        from jsonschema.validators import validator_for
        validator: Validator = bounded(validator_for(schema, default=Draft202012Validator))(schema)
        return validator

    def problem(self, validator: Validator, instance: Any) -> Optional[str]:
        try:
            with Budget():
                return super().problem(validator, instance)
        except PatternTooSlow as exc:  # a slow pattern, or too many steps (TooComplex)
            return f"it could not be checked: {exc}"
