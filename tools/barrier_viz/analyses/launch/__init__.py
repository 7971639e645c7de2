"""Launches: what the kernel does as a function of its inputs.

Owns trip counts and runtime conditions as expressions of the integer arguments, program ids and
program counts (`trip_counts`), the boundary launches `check` simulates besides its default one
(`input_points`: a loop run 0, 1 or a ring-ragged number of times, a condition taken either way;
`memory_points`: a segment of a loaded array empty, or the segments unequal),
and the launch condition under which an op runs (`run_condition`, for fix suggestions).

May import: `model`, `program`, `symbolic`, `sim` (it runs the interpreter at each input point,
with the interpreter's own integer semantics), `cluster`, plus `ir/`, `facts/`, `analysis.py`,
`render/words.py`, `limits.py`, `errors.py`. Nothing above it (`structure`, `rules`,
`verdicts`, `diff`) and nothing of the commands.
"""
