"""Static rules: verdicts read from the IR's structure, without running it.

One module per rule or closely related rule family; each declares `RULE = Rule(...)` with the
docs of the finding kinds it owns (`model/kinds.py`), and `registry.py` lists them in the order
`check` runs them and collects every kind's doc (`barrier-viz explain`). `silent_readers.py` is
part of the `tma_channel` family; `coverage_rows.py` turns the coverage tables
(`structure/coverage.py`) into findings.

May import: model, program, symbolic, sim, cluster, launch, structure (and ir/, facts/,
analysis.py, render/words.py, limits.py, errors.py). A rule never imports another rule's module
for helpers: shared program-order facts live in `program/`.
"""
