"""`python -m checks.dev.mutants`: does every wrong answer turn its item red?

    python -m checks.dev.mutants [REGION ...] [--catalogue | --generated] [--json] [--jobs N] [--list]

REGION is 1-4 (the exercises) or E1-E11 (the extensions); default: all fifteen.
By default both kinds of mutant are judged: the learner catalogue (each must be
red on its item, with its cause in the message) and cosmic-ray's (each must
turn some item of its region red, or be listed in equivalent.txt with the
reason no client behaviour can tell it from the answer).

Exit status: 0 when every mutant is accounted for, 1 when one survived, was
killed only by a time limit (red, but without its cause), or a catalogue
mutant was red for the wrong reason; 2 for unusable input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from checks.dev.mutants.catalogue import CATALOGUE, LearnerMutant
from checks.dev.mutants.equivalents import EQUIVALENTS_FILE, Equivalents, read_equivalents
from checks.dev.mutants.generated import Mutant, missing, mutants
from checks.dev.mutants.judge import Judged, judge
from checks.dev.mutants.regions import REGIONS


@dataclass
class Tally:
    region: str
    mutants: int = 0
    killed: int = 0
    equivalent: int = 0
    survivors: List[str] = field(default_factory=list)
    limited: List[str] = field(default_factory=list)  # killed only by a time limit: no cause named
    learner: int = 0
    learner_red: int = 0
    learner_wrong: List[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        judged = self.mutants - self.equivalent
        return 1.0 if judged <= 0 else self.killed / judged

    def to_json(self) -> Dict[str, Any]:
        return {"region": self.region, "mutants": self.mutants, "killed": self.killed,
                "equivalent": self.equivalent, "survived": len(self.survivors), "score": round(self.score, 4),
                "survivors": self.survivors, "killed_only_by_a_limit": self.limited,
                "catalogue": {"mutants": self.learner, "red_for_their_reason": self.learner_red,
                              "wrong": self.learner_wrong}}


def parse(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m checks.dev.mutants",
                                     description="Mutation testing of the self-check, region by region.")
    parser.add_argument("regions", nargs="*", metavar="REGION", help="1-4 or E1-E11 (default: all)")
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--catalogue", action="store_true", help="only the learner mutants (no cosmic-ray needed)")
    kind.add_argument("--generated", action="store_true", help="only cosmic-ray's mutants")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    # Two per CPU, as pytest runs: most of a mutant's judging is waiting on its fixture
    # servers (on 2 CPUs, 314 mutants took 154 s two at once, 79 s four at once, all killed).
    parser.add_argument("--jobs", type=int, default=2 * (os.cpu_count() or 1), metavar="N",
                        help="mutants judged at once (default: two per CPU)")
    parser.add_argument("--list", action="store_true", help="list the mutants without judging them")
    options = parser.parse_args(argv)
    names = [r.upper() for r in options.regions] or list(REGIONS)
    unknown = [r for r in names if r not in REGIONS]
    if unknown:
        exercises = [name for name in REGIONS if name.isdigit()]
        parser.error(f"regions are 1 to {len(exercises)} and E1 to E{len(REGIONS) - len(exercises)}; "
                     f"got {', '.join(unknown)}")
    if not 0 < options.jobs <= 64:
        parser.error(f"--jobs wants 1 to 64; got {options.jobs}")
    options.names = names
    return options


def learner_verdict(mutant: LearnerMutant, judged: Judged) -> Optional[str]:
    """None when the mutant is red on its item for its reason; else what went wrong."""
    verdict = judged.verdicts.get(mutant.red)
    if verdict is None:
        return f"item {mutant.red} was not judged (exit status {judged.exit_status})"
    if verdict.status != "fail":
        return f"item {mutant.red} was {verdict.status}: {verdict.message[:200]}"
    missing_words = [s for s in mutant.says if s not in verdict.message]
    if missing_words:
        return f"item {mutant.red} was red, but its message does not say {missing_words}: {verdict.message[:300]}"
    return None


def run(options: argparse.Namespace, out: Any) -> int:
    began = time.perf_counter()
    tallies = {name: Tally(name) for name in options.names}
    learners = [m for m in CATALOGUE if m.region in tallies] if not options.generated else []
    generated: List[Mutant] = []
    if not options.catalogue:
        why = missing()
        if why:
            print(why, file=sys.stderr)
            return 2
        generated = [m for name in options.names for m in mutants(REGIONS[name])]
    equivalents = read_equivalents()
    if options.list:
        for learner in learners:
            print(f"{learner.region:>3} catalogue  {learner.name} (red on {learner.red})", file=out)
        for mutant in generated:
            mark = "  (equivalent)" if mutant.key in equivalents.reasons else ""
            print(f"{mutant.region:>3} {mutant.operator:<40} {mutant.where_line()}{mark}", file=out)
        return 0

    def judge_learner(mutant: LearnerMutant) -> None:
        wrong = learner_verdict(mutant, judge(mutant.where, mutant.text(), (mutant.red,)))
        tally = tallies[mutant.region]
        tally.learner += 1
        if wrong is None:
            tally.learner_red += 1
        else:
            tally.learner_wrong.append(f"{mutant.name}: {wrong}")

    def judge_generated(mutant: Mutant) -> None:
        tally = tallies[mutant.region]
        tally.mutants += 1
        if mutant.key in equivalents.reasons:
            tally.equivalent += 1
            return
        region = REGIONS[mutant.region]
        judged = judge(region.file, mutant.text, region.items)
        if judged.killed:
            tally.killed += 1
            if judged.only_by_a_limit:
                tally.limited.append(mutant.key)
        else:
            tally.survivors.append(mutant.key)

    work = [lambda m=m: judge_learner(m) for m in learners] + [lambda m=m: judge_generated(m) for m in generated]
    done = [0]

    def step(job: Any) -> None:
        job()
        done[0] += 1
        if not options.json and out.isatty():
            out.write(f"\r{done[0]}/{len(work)} mutants judged")
            out.flush()

    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        list(pool.map(step, work))
    if not options.json and out.isatty():
        out.write("\r" + " " * 40 + "\r")
    seconds = time.perf_counter() - began
    stale = sorted(set(equivalents.reasons) - {m.key for m in generated}) if generated else []
    stale = [key for key in stale if key.split(" | ", 1)[0] in tallies]
    ok = all(not t.survivors and not t.learner_wrong and not t.limited for t in tallies.values())
    if options.json:
        print(json.dumps({"regions": [t.to_json() for t in tallies.values()], "seconds": round(seconds, 1),
                          "jobs": options.jobs, "stale_equivalents": stale, "ok": ok}, indent=2), file=out)
    else:
        report(list(tallies.values()), seconds, options.jobs, stale, out)
    return 0 if ok else 1


def report(tallies: Sequence[Tally], seconds: float, jobs: int, stale: List[str], out: Any) -> None:
    print(f"{'region':<7}{'mutants':>8}{'killed':>8}{'equiv.':>8}{'survived':>10}{'score':>8}"
          f"{'catalogue':>12}", file=out)
    for t in tallies:
        learner = f"{t.learner_red}/{t.learner}" if t.learner else "-"
        score = f"{t.score:.0%}" if t.mutants else "-"
        print(f"{t.region:<7}{t.mutants:>8}{t.killed:>8}{t.equivalent:>8}{len(t.survivors):>10}{score:>8}"
              f"{learner:>12}", file=out)
    for t in tallies:
        for key in t.survivors:
            print(f"survived: {key}", file=out)
        for key in t.limited:
            print(f"killed only by a time limit (the message names no cause): {key}", file=out)
        for wrong in t.learner_wrong:
            print(f"catalogue {t.region}: {wrong}", file=out)
    for key in stale:
        print(f"stale: {EQUIVALENTS_FILE.name} lists a mutant no longer made: {key}", file=out)
    total = sum(t.mutants for t in tallies)
    killed = sum(t.killed for t in tallies)
    equivalent = sum(t.equivalent for t in tallies)
    learners = sum(t.learner for t in tallies)
    print(f"{killed} of {total - equivalent} non-equivalent generated mutants killed ({equivalent} equivalent); "
          f"{sum(t.learner_red for t in tallies)} of {learners} catalogue mutants red for their reason; "
          f"{seconds:.0f} s with {jobs} at once", file=out)


def main(argv: Optional[List[str]] = None) -> int:
    try:
        options = parse(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return run(options, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
