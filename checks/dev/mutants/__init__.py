"""Mutation testing of the lab's own checks: `python -m checks.dev.mutants`.

The lab promises that green means right. This package tries to break that
promise on purpose: it makes wrong copies of `solution/` (mutants) and runs
the self-check items that own the changed region on each. A mutant is killed
when one of those items is not green; a mutant that survives is a wrong
answer the checks cannot see, unless no client behaviour can tell it from the
right one (an equivalent mutant, listed with its reason in `equivalent.txt`).

Two sources of mutants:
- `catalogue`: wrong answers a learner would write (and lazy and faked ones),
  each with the item it must turn red and words its message must hold;
- `generated`: cosmic-ray's operators applied to every line of each region.
"""
