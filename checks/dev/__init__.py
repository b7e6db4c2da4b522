"""The reference client's proving ground, for maintainers (the learner's judge is
`checks/` around this folder; nothing there imports from here).

    python -m checks.dev.faults      servers that break the rules, or attack
    python -m checks.dev.load        the self-check's verdicts under load
    python -m checks.dev.bench       speed, measured side by side
    python -m checks.dev.interop     real servers from the package registries
    python -m checks.dev.mutants     mutation testing of the judge
"""
