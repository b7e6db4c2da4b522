"""`python -m checks.dev.contracts [--write | --guide] [REGION ...]`: draw each
clause's inputs with Hypothesis and keep them in `checks/contracts/corpus/`
(`--guide`: write each region's clauses into labs/GUIDE.md, between its markers).
Without options: whether the reference still does what the corpus records
(after a change to the reference, `--write`).

The self-check judges the kept inputs, never fresh ones, so a verdict is the
same on every run and every machine. Drawing is derandomised (the same
Hypothesis version and code draws the same inputs), and a clause's `edges`
always come first.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Tuple

import anyio

from checks.contracts import GUIDE_BLOCK, contracts, corpus, corpus_file, observe_all, render
from checks.contracts.clause import Clause, comparable
from checks.target import ROOT, Target, load_target

GUIDE = ROOT / "labs" / "GUIDE.md"


def draw(clause: Clause) -> List[Any]:
    """The clause's edges, then `count` inputs from its strategy, duplicates dropped."""
    from hypothesis import HealthCheck, Phase, find, settings, strategies
    from hypothesis.errors import NoSuchExample

    drawn: List[Any] = []
    if clause.inputs is not None:
        strategy = clause.inputs(strategies)

        def keep(example: Any) -> bool:
            drawn.append(example)
            return False  # never "found": Hypothesis goes on drawing up to max_examples

        try:
            find(strategy, keep, settings=settings(
                max_examples=clause.count, derandomize=True, database=None, phases=[Phase.generate],
                suppress_health_check=list(HealthCheck), deadline=None))
        except NoSuchExample:
            pass
    kept: List[Any] = []
    seen = set()
    for example in [*clause.edges, *drawn]:
        key = json.dumps(example, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(example)
    return kept


def reference() -> Target:
    """The reference client, the oracle: loaded here, on the maintainers' side,
    never in the worker where the code under test runs."""
    return load_target("solution")


def expected(clause: Clause, examples: List[Any]) -> List[str]:
    """What the reference observes on each input, as it is compared (where in the
    reference it happened is no part of it)."""
    return [comparable(seen) for seen in anyio.run(observe_all, clause, reference(), examples)]


def drawn_corpus(region: str) -> Dict[str, List[Tuple[Any, str]]]:
    found = {}
    for clause in contracts()[region].clauses:
        # Observed as the judge will read them back: keys sorted, as the file keeps them.
        examples = json.loads(json.dumps(draw(clause), sort_keys=True))
        found[clause.id] = list(zip(examples, expected(clause, examples)))
    return found


def observed_corpus(region: str) -> Dict[str, List[Tuple[Any, str]]]:
    """The corpus kept, each clause's edges first, with what the reference observes on it now
    (a clause new to the corpus is drawn: there is nothing of it to keep)."""
    found = {}
    try:
        kept_corpus = corpus(region)
    except RuntimeError:  # no corpus for the region yet
        kept_corpus = {}
    for clause in contracts()[region].clauses:
        kept = [example for example, _ in kept_corpus.get(clause.id, [])] or draw(clause)
        examples, seen = [], set()
        for example in json.loads(json.dumps([*clause.edges, *kept], sort_keys=True)):
            key = json.dumps(example, sort_keys=True)
            if key not in seen:
                seen.add(key)
                examples.append(example)
        found[clause.id] = list(zip(examples, expected(clause, examples)))
    return found


def dumps(found: Dict[str, List[Tuple[Any, str]]]) -> str:
    """One input a line with what the reference did, so a change reads as a diff."""
    clauses = [f"{json.dumps(clause)}: [\n" + ",\n".join(json.dumps([e, want], sort_keys=True) for e, want in entries)
               + "\n]" for clause, entries in sorted(found.items())]
    return "{\n" + ",\n".join(clauses) + "\n}\n"


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m checks.dev.contracts")
    parser.add_argument("--write", action="store_true", help="write the corpus (else compare)")
    parser.add_argument("--observe", action="store_true",
                        help="keep the drawn inputs, put each clause's edges first, and write what the reference "
                             "observes on them now (after an edge is added or an observation changed)")
    parser.add_argument("--guide", action="store_true", help="rewrite the clauses in labs/GUIDE.md")
    parser.add_argument("regions", nargs="*")
    args = parser.parse_args(argv)
    regions = args.regions or sorted(contracts())
    if args.guide:
        text = GUIDE.read_text(encoding="utf-8")
        GUIDE.write_text(GUIDE_BLOCK.sub(lambda m: render(m.group(1)), text), encoding="utf-8")
        return 0
    stale = []
    for region in regions:
        path = corpus_file(region)
        if args.write or args.observe:
            text = dumps(observed_corpus(region) if args.observe else drawn_corpus(region))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"{region}: {sum(len(v) for v in json.loads(text).values())} inputs -> {path}")
        elif not path.exists() or recorded_is_stale(region):
            stale.append(region)
    if stale:
        print(f"what the reference does is not what the corpus records for {', '.join(stale)}: "
              "python -m checks.dev.contracts --write", file=sys.stderr)
        return 1
    return 0


def recorded_is_stale(region: str) -> bool:
    """Whether the reference now observes differently on the recorded inputs. (The
    inputs themselves are not drawn again to compare: Hypothesis mixes in literals
    from the modules it finds loaded, so a redraw follows the code, not the clause.)"""
    for clause in contracts()[region].clauses:
        entries = corpus(region)[clause.id]
        if [want for _, want in entries] != expected(clause, [example for example, _ in entries]):
            return True
    return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
