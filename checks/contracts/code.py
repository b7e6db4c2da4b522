"""E8's contract: `literal(values)`, the type a stub gives an enum or const.

What the model reads is Python source, so the observation is the source
parsed back: which values, of which types, it names. Two spellings of the
same values are the same answer; source that does not parse, or that holds
more than literal values, is never right.
"""

from __future__ import annotations

import ast
from typing import Any, List

from checks.contracts.clause import Clause, Contract, Told
from checks.contracts.wire import json_values
from checks.target import Target


def typed(package: Target, values: List[Any]) -> Told:
    out = package.module("stubs").literal(values)
    if out is None:
        return Told("returned None (the stub falls back to Any)")
    if not isinstance(out, str):
        return Told(f"returned {out!r:.60}, which is not source text")
    try:
        tree = ast.parse(out, mode="eval")
    except SyntaxError:
        return Told(f"returned {out!r:.100}, which is not a Python expression: the stubs would not parse, "
                    "and a server's value could add lines of its own")
    body = tree.body
    if not (isinstance(body, ast.Subscript) and isinstance(body.value, ast.Name) and body.value.id == "Literal"):
        return Told(f"returned {out!r:.100}, which is not Literal[...]")
    elements = body.slice.elts if isinstance(body.slice, ast.Tuple) else [body.slice]
    named = []
    for element in elements:
        try:
            value = ast.literal_eval(element)
        except ValueError:
            return Told(f"returned {out!r:.100}, which holds {ast.unparse(element)[:40]!r}, not a value")
        named.append(f"{type(value).__name__} {value!r}")
    return Told(f"returned a Literal of {', '.join(named)}")


def enums(st: Any) -> Any:
    text = st.one_of(st.text(max_size=10), st.sampled_from(['"', "'", '\\', '"]\nimport os\n#', "\n", "\0",
                                                            "'''", "${x}", "{}", "é", "\ud800"]))
    literal_values = st.one_of(text, st.integers(-2**70, 2**70), st.booleans(), st.none(), st.just(10 ** 400))
    return st.lists(literal_values, min_size=1, max_size=5)


def mixed(st: Any) -> Any:
    return st.lists(st.one_of(json_values(st), st.floats()), max_size=5)


CONTRACTS = (Contract("E8", "literal", (
    Clause("E8.1", "must return Literal[...] naming exactly the given str, int, bool and None values, in "
                   "order and of the same types, as Python source that parses back to them whatever the "
                   "strings hold (quotes, backslashes, newlines, NUL)",
           "lab rule: a stub is code the model reads; repr() writes a value as Python source",
           typed, repr, edges=(["low", "high"], ['say "hi"'], ["a'b"], ["line\nbreak"], ["\\"],
                               ['"]\nimport os\n#'], [1, True, None], [0], [False], [""], ["x" * 60],
                               [f"C{n:03}" for n in range(100)], [10 ** 400, -(2 ** 1024)]),
           inputs=enums, count=150),
    Clause("E8.2", "must return None when any value cannot be a Literal (a float, a list, an object) or "
                   "there are no values at all, so the stub says Any",
           "Python typing: Literal takes only str, bytes, int, bool, enum members and None",
           typed, repr, edges=([1.5], ["a", 2.0], [[1]], [{"a": 1}], [], [float("nan")]),
           inputs=mixed, count=100),
)),)
