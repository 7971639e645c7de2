"""Input points for values loaded from memory: launches where one segment of an input array is
empty, or where the segments are unequal, and what the kernel does there.

Why: ragged, jagged, grouped and MoE kernels read their work from device arrays
(`analyses.program.loaded`). The main simulation reads every segment with the same length, so
it never sees what the GPU showed on our own data-dependent kernels (evals/cases/gpu-h200.dd-*):
an empty segment that skips a hand-off arrive, a consumer that restarts its ring counter per
segment while the producer carries it (visible only when a segment's iteration count is not a
multiple of the ring depth). So, like the boundary launches of `input_points`, a few memory
contents are simulated to the end in the friendliest schedule: for each array whose elements
decided a loop's trip count or an `scf.if`, the first, a middle and the last segment this
program read is empty (read the way the kernel reads the array: offsets, `a[i + 1] - a[i]`, an
element equal to the one before; sizes, a 0), and once the segments are unequal (5, 2, 1, 4, 3
iterations of the loop they decide, repeating: per-segment counts that are not multiples of a
ring depth, running sums that are not either, and an odd count when the array holds one size).

Loads that cannot be related stay a limit: when the kernel reads two arrays at the same index
(query and key offsets of varlen attention) and a hang needs one of their segments empty while
the other's is not (it completes when both are), whether a host ever passes such arrays is not
in the IR: that point is not judged, with the reason, never a deadlock.
"""

from __future__ import annotations

from dataclasses import replace

from ..program.loaded import Memory
from ..sim.machine import Params
from ..sim.schedule import RunResult, run
from .input_points import MIN_STEP_BUDGET, Point, PointResult, base_point, model_of, name_input

MAX_MEMORY_POINTS = 6  # launches with an empty segment per kernel
MAX_RAGGED_POINTS = 2  # launches with unequal segments per kernel
# Iterations per segment, repeating: the first alone is odd and no multiple of 2, 3 or 4 (a
# one-element size, such as a tile count, gives each program that many), and so are most sums.
RAGGED = (5, 2, 1, 4, 3)


def memory_points(analysis, params: Params, base: RunResult | None, base_steps: int, *, classify=None,
                  deadline=None, fixed: bool = False) -> list[PointResult]:
    """The memory launches above, each run in the favorable schedule like a boundary point (at
    most what the main simulation took, all together); `fixed` (the user gave --load): none."""
    m = base.machine if base is not None else None
    if fixed or m is None or not m.loaded_sites:
        return []
    names = {pos: a.name.lstrip("%") for pos, a in enumerate(analysis.sel.function.regions[0].blocks[0].arguments)}
    deciding = sorted({k for keys in m.loaded_sites.values() for k in keys})
    arrays = sorted({p for p, _ in deciding})
    model = model_of(analysis)
    point = base_point(model, params) if model is not None else Point(())
    arg_names = {a.position: a.name for a in (model.args if model else [])}
    plans = _empty_plans(m, deciding, arrays, names, params)[:MAX_MEMORY_POINTS] \
        + _ragged_plans(m, arrays, names)[:MAX_RAGGED_POINTS]
    out: list[PointResult] = []
    budget = max(base_steps, MIN_STEP_BUDGET)
    for memory, what, reason, twins in plans:
        pr = PointResult(point, [reason], "not_run", 0, arg_names, set(), memory=what)
        out.append(pr)
        if budget <= 0 or (deadline is not None and deadline.passed()):
            continue
        result = run(analysis.sel.function, replace(params, memory=memory, max_steps=min(params.max_steps, budget)),
                     "favorable", deadline=deadline)
        budget -= result.steps
        findings = classify(result) if result.deadlocked and classify is not None else []
        pr.outcome, pr.steps = result.outcome, result.steps  # classify turns an unjudged hang into `limit`
        if findings and twins and result.outcome == "deadlock":
            # Does the hang need the arrays read at the same index to disagree?
            both = replace(memory, styles=memory.styles + tuple((p, s) for p, s, _ in twins),
                           empty=memory.empty + tuple((p, seg) for p, _, seg in twins))
            # (A hang found is rare: this run may take a boundary point's floor of steps.)
            again = run(analysis.sel.function, replace(params, memory=both, max_steps=min(
                params.max_steps, max(budget, MIN_STEP_BUDGET))), "favorable", deadline=deadline)
            budget -= again.steps
            if not again.deadlocked:
                other = ", ".join(names.get(p, f"arg{p}") for p, _, _ in twins)
                findings, pr.outcome = [], "limit"
                pr.limit_reason = (
                    f"it hangs while the same segment of {other}, which the kernel reads at the same index, is not "
                    "empty; with both empty " + ("it completes" if again.outcome in ("completed", "covered") else
                                                 f"the run stopped ({again.outcome}) without a hang")
                    + ": whether the host ever passes arrays that disagree there is not in the IR, no verdict on this hang")
        pr.findings = [name_input(f, pr) for f in findings]
        if pr.outcome == "limit":
            pr.limit_reason = pr.limit_reason or result.reason
            pr.blocked_lines = sorted({b.line for b in result.blocked})
    return out


def _empty_plans(m, deciding, arrays, names, params: Params) -> list[tuple]:
    """(memory, what changed, reason, twins) for the first, a middle and the last segment of each
    deciding array; twins: the other deciding arrays that read the same segment (position,
    style, segment)."""
    plans = []
    read_by = {pos: {i for p, i in m.loads if p == pos} for pos in arrays}
    for pos in arrays:
        offsets = pos in m.offset_arrays
        read = sorted(i for p, i in deciding if p == pos)
        segments = [i for i in read if i + 1 in read] if offsets else read
        picks = list(dict.fromkeys(segments[:1] + segments[len(segments) // 2:][:1] + segments[-1:]))
        for k, seg in enumerate(picks):
            where = "first" if k == 0 else ("last" if seg == segments[-1] else "middle")
            a = names.get(pos, f"arg{pos}")
            memory = Memory(styles=((pos, "offsets" if offsets else "sizes"),), empty=((pos, seg),))
            what = f"{a}[{seg + 1}] = {a}[{seg}]" if offsets else f"{a}[{seg}] = 0"
            reason = (f"the {where} segment this program reads from {a} is empty (the other segments "
                      f"{'span' if offsets else 'hold'} {params.int_args})")
            twins = tuple((p, "offsets" if p in m.offset_arrays else "sizes", seg) for p in arrays if p != pos
                          and ({seg, seg + 1} if p in m.offset_arrays else {seg}) <= read_by[p])
            plans.append((memory, what, reason, twins))
    return plans


def _ragged_plans(m, arrays, names) -> list[tuple]:
    """(memory, what changed, reason, no twins) giving each array that decided a loop's trip
    count segments of RAGGED iterations of that loop (its step is the unit)."""
    plans = []
    for pos in arrays:
        unit = m.loaded_steps.get(pos)
        if not unit:
            continue
        offsets = pos in m.offset_arrays
        a = names.get(pos, f"arg{pos}")
        memory = Memory(styles=((pos, "offsets" if offsets else "sizes"),), ragged=((pos, (unit, RAGGED)),))
        lengths = ", ".join(str(n * unit) for n in RAGGED)
        what = f"{a}: segments of {lengths}, ... ({'offsets' if offsets else 'sizes'})"
        reason = (f"the segments read from {a} are unequal ({', '.join(map(str, RAGGED))} iterations of the loop "
                  f"they bound, repeating)")
        plans.append((memory, what, reason, ()))
    return plans
