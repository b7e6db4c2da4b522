"""Exercise 3's contract: `model_tool_name(alias, tool_name)`.

The alias comes from the config, which allows 1-32 of [A-Za-z0-9_-], no '__' and
no '_' at the end; the tool name comes from a server and may be any string at all.
"""

from __future__ import annotations

import re
from typing import Any, Dict

from checks.contracts.clause import Clause, Contract, Told
from checks.target import Target

LEGAL = re.compile(r"[A-Za-z0-9_-]{1,64}")  # fullmatch: `$` would let a final "\n" through
ALIAS_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
PREFIX = "mcp__{alias}__"


def name_of(package: Target, case: Dict[str, str]) -> Any:
    return package.naming.model_tool_name(case["alias"], case["tool"])


def legal(package: Target, case: Dict[str, str]) -> Told:
    name = name_of(package, case)
    if isinstance(name, str) and LEGAL.fullmatch(name):
        return Told("returned a legal name")
    return Told(f"returned {name!r:.120}, which is not 1-64 of [A-Za-z0-9_-]")


def unique(package: Target, case: Dict[str, Any]) -> Told:
    aliases = case.get("aliases") or [case["alias"]] * 2  # two servers' tools, or one server's two
    first = name_of(package, {"alias": aliases[0], "tool": case["tools"][0]})
    second = name_of(package, {"alias": aliases[1], "tool": case["tools"][1]})
    return Told("gave them two names" if first != second else f"gave both the name {first!r}")


def show(case: Dict[str, Any]) -> str:
    if "aliases" in case:
        return (f"alias {case['aliases'][0]!r} with tool {case['tools'][0]!r}, and alias {case['aliases'][1]!r} "
                f"with tool {case['tools'][1]!r}")
    if "tools" in case:
        return f"alias {case['alias']!r} with tools {case['tools'][0]!r} and {case['tools'][1]!r}"
    return f"alias {case['alias']!r}, tool {case['tool']!r}"


def aliases(st: Any) -> Any:
    return st.text(ALIAS_CHARS, min_size=1, max_size=32).filter(lambda a: "__" not in a and not a.endswith("_"))


def any_names(st: Any) -> Any:
    # Anything a server can send: every category of character, NUL, newlines,
    # non-ASCII letters and digits, lone surrogates, and names past 64 characters.
    return st.fixed_dictionaries({"alias": aliases(st), "tool": st.one_of(
        st.text(max_size=80), st.text(ALIAS_CHARS + ".", max_size=90),
        st.text(st.characters(codec=None, categories=["Cs", "Nd", "No", "Lu", "Ll", "Zs", "Cc"]), max_size=6),
        st.text(ALIAS_CHARS, min_size=40, max_size=70),
        # Past 64 with characters that are more than one byte in UTF-8: a cut counted in
        # bytes, or by a name's encoded length, lands short of 64 or past it.
        st.text(ALIAS_CHARS + "é²٣中ß. ", min_size=50, max_size=110))})


def fitting_names(st: Any) -> Any:
    def fits(case: Dict[str, str]) -> bool:
        return len(PREFIX.format(alias=case["alias"]) + case["tool"]) <= 64
    return st.fixed_dictionaries({"alias": aliases(st), "tool": st.text(ALIAS_CHARS, max_size=60)}).filter(fits)


def twins(st: Any) -> Any:
    # Two names that become alike once a character is replaced or a tail cut.
    def pair(stem: str, swap: str, tail: str) -> Any:
        return [stem + "." + tail, stem + swap + tail]
    stems = st.text(ALIAS_CHARS, max_size=70)
    return st.fixed_dictionaries({"alias": aliases(st), "tools": st.builds(
        pair, stems, st.sampled_from(["_", "-", " ", "é", "/"]), st.text(ALIAS_CHARS, max_size=10))})


CONTRACTS = (Contract("3", "model_tool_name", (
    Clause("3.1", "must return a name every model API takes: 1 to 64 of A-Z, a-z, 0-9, '_' and '-', "
                  "and nothing after them (not even a final newline)",
           "model APIs' tool-name rule; MCP only recommends a character set", legal, show,
           edges=({"alias": "a", "tool": "report\n"}, {"alias": "a", "tool": ""},
                  {"alias": "a", "tool": "\0"}, {"alias": "a", "tool": "résumé"},
                  {"alias": "a", "tool": "x²"}, {"alias": "a", "tool": "x٣"}, {"alias": "a", "tool": "x３"},
                  {"alias": "a", "tool": "bad\ud800"}, {"alias": "a", "tool": "weekly report"},
                  {"alias": "srv", "tool": "q" * 200}, {"alias": "notes", "tool": "é" * 100},
                  # Letters that a case-blind [a-z] lets through: the Kelvin sign, long s, dotless i, İ.
                  {"alias": "t", "tool": "\u212aelvin"}, {"alias": "t", "tool": "\u017fearch"},
                  {"alias": "t", "tool": "\u0131d"}, {"alias": "t", "tool": "\u0130d"}),
           inputs=any_names),
    Clause("3.2", "must keep a name that is legal and fits exactly as it is: mcp__<alias>__<tool>",
           "lab rule: a name changes only when it must", name_of, show,
           edges=({"alias": "notes", "tool": "search"}, {"alias": "a", "tool": ""},
                  {"alias": "tickets", "tool": "count_open_tickets_per_owner_and_queue_for_review_"}),
           inputs=fitting_names),
    Clause("3.3", "must change a name that does not fit by replacing each character outside "
                  "[A-Za-z0-9_-] with '_', keeping mcp__<alias>__, cutting only as far as 64 characters in "
                  "all require, and ending with '_' and short_hash(alias, tool_name) of the name as the "
                  "server sent it",
           "lab rule (guide section 5): a changed name carries a hash of the original", name_of, show,
           edges=({"alias": "tickets", "tool": "queue.stats"}, {"alias": "a", "tool": "report\n"},
                  {"alias": "a", "tool": "é"}, {"alias": "a", "tool": "x" * 51},
                  {"alias": "a", "tool": "x" * 52}, {"alias": "a", "tool": "x" * 60 + "."},
                  {"alias": "t", "tool": "\u212aelvin"}, {"alias": "t", "tool": "cafe\u0301"},
                  # Long and not all ASCII: cut by characters, not by bytes.
                  {"alias": "notes", "tool": "a" * 60 + "é"}, {"alias": "notes", "tool": "résumé_" + "x" * 60},
                  {"alias": "notes", "tool": "é" * 100}),
           inputs=any_names),
    Clause("3.4", "must give two different tools two different names, of one server or of two (an alias and "
                  "a name that run together as another pair's do are still another tool)",
           "MCP: names are unique within a server, so the client must keep them apart", unique, show,
           edges=({"alias": "tickets", "tools": ["queue.stats", "queue_stats"]},
                  {"alias": "t", "tools": ["x" * 70 + ".csv", "x" * 70 + ".json"]},
                  # Two names Unicode normalisation makes one (NFC and NFKC): two tools all the same.
                  {"alias": "t", "tools": ["caf\u00e9", "cafe\u0301"]},
                  {"alias": "t", "tools": ["\u212aelvin", "Kelvin"]},
                  # Two servers' tools whose alias and name run together alike: ("db", "2_query"), ("db2", "_query").
                  {"aliases": ["db", "db2"], "tools": ["2_query", "_query"]},
                  {"aliases": ["a", "a-"], "tools": ["-x", "x"]}),
           inputs=twins),
)),)
