"""Input points: the launches at which a loop runs 0, 1 or a ring-ragged number of times, or a
runtime condition around barrier operations takes each side, and what the kernel does there.

Why: `check` simulates one launch, chosen so rings wrap. Real hangs often need a particular
input (the last split of a split-K kernel has no K iteration while the consumer's peeled waits
are unconditional; a CTA of a persistent kernel gets no tile; a causal mask empties the first
rows' loop; a flag one partition tests and the other does not). `trip_counts` gives every such
loop's trip count and every such condition as an expression of the integer arguments and
program ids; here we look for a few concrete values that reach each boundary (a small set of
boundaries, never a sweep), run the barrier program at each one to completion in the
friendliest schedule (so a hang found there is a hang of that launch whatever the timing), and
name the input in the finding.

A false deadlock from a launch nobody can make is worse than a miss, so a point must be one
the IR admits: an argument with `tt.divisibility = d` takes multiples of d; a size is at least
1 (an empty tensor is never launched) and only a flag (an i1, or an argument the IR only ever
compares) may be 0; a program id is below the program count the IR reads; every
`llvm.intr.assume` / `tt.assume` the IR states must hold.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from ...ir.model import Operation
from ..sim.machine import Params
from ..sim.schedule import RunResult, run
from .trip_counts import (InputModel, Observation, Point, Site, build_model, observe, render, render_trips, site_variables,
                          variables)

MAX_POINTS = 6  # simulated boundaries per kernel
MAX_OBSERVATIONS = 240  # candidate launches evaluated (expressions only, no simulation) per kernel
PER_TARGET = 100
MIN_STEP_BUDGET = 20_000  # visible steps all points may take together, at least
MAX_VALUE = 1 << 20


class LaunchError(ValueError):
    """A `--args` / `--pid` / `--grid` value the kernel cannot take (named in the message)."""


@dataclass
class Launch:
    """The user's own launch: values for named integer arguments, program ids, program counts."""

    args: dict[str, int] = field(default_factory=dict)
    pids: tuple[int, ...] | None = None
    grid: tuple[int, ...] | None = None
    loads: str | None = None  # `offs=[0,0,64,64];sizes=[3]`: what loads from input arrays read (analyses.program.loaded)


@dataclass
class Target:
    site: Site
    want: str  # "zero" | "one" | "ragged" | "then" | "else"
    depth: int = 1
    partition: str = "main"
    wraps: Site | None = None  # a condition's enclosing loop that must also wrap its ring

    def reached(self, obs: Observation) -> bool:
        if self.want in ("then", "else"):
            side = (0 if self.want == "then" else 1) in obs.branches.get(id(self.site), set())
            if not side or self.wraps is None:
                return side
            return any(t is not None and t > self.depth for t in obs.trips.get(id(self.wraps), []))
        trips = [t for t in obs.trips.get(id(self.site), []) if t is not None]
        if self.want == "zero":
            return 0 in trips
        if self.want == "one":
            return 1 in trips
        return any(t > self.depth and t % self.depth for t in trips)

    def describe(self, obs: Observation | None = None) -> str:
        s = self.site
        where = f"line {s.op.line} ({self.partition})"
        if self.want in ("then", "else"):
            wrap = "" if self.wraps is None else (f" while the loop at line {self.wraps.op.line} wraps its "
                                                  f"{self.depth}-slot ring")
            if s.kind == "pred":
                side = "true" if self.want == "then" else "false"
                return f"the predicate of {s.op.name} at {where} is {side} ({render(s.cond)}){wrap}"
            return f"the scf.if at {where} takes its {self.want} branch ({render(s.cond)}){wrap}"
        count = f"trip count {render_trips(s)}" if s.kind == "for" else "a while loop"
        if self.want == "zero":
            return f"the loop at {where} runs no iteration ({count})"
        if self.want == "one":
            return f"the loop at {where} runs a single iteration ({count})"
        got = next((t for t in (obs.trips.get(id(s), []) if obs else []) if t and t > self.depth and t % self.depth), None)
        n = f"{got} iterations" if got else "a number of iterations"
        return f"the loop at {where} runs {n}, not a multiple of its {self.depth}-slot ring ({count})"


@dataclass
class PointResult:
    point: Point
    reasons: list[str]
    outcome: str
    steps: int
    names: dict[int, str]
    shown: set[tuple[str, int]]
    findings: list = field(default_factory=list)
    launch: str = "boundary"  # "boundary" (searched) or "user"
    obs: Observation | None = field(default=None, repr=False)
    # Every boundary of this point is a loop that runs no iteration because of the sizes alone
    # (no program id or count in its trip count): no program of the launch has a tile of work.
    no_work: bool = False
    memory: str = ""  # the loaded values this launch changed (`offs[2] = offs[1]`), see memory_points
    limit_reason: str = ""  # why a run that stopped at a limit is not a verdict (analyses/model/judgement.py)
    blocked_lines: list[int] = field(default_factory=list)  # the waits that run was blocked on
    outside: list = field(default_factory=list)  # inferred assumptions the user's launch breaks (launch.contract)

    def assignment(self, full: bool = False) -> str:
        parts = [f"{self.names[pos]}={v}" for pos, v in self.point.args
                 if full or ("arg", pos) in self.shown]
        pids = [f"pid_{'xyz'[a]}={self.point.pids[a]}" for a in range(3) if ("pid", a) in self.shown]
        grid = [f"num_programs_{'xyz'[a]}={self.point.grid[a]}" for a in range(3) if ("nprog", a) in self.shown]
        return ", ".join(parts + pids + grid + ([self.memory] if self.memory else [])) or "the default launch"

    def as_dict(self) -> dict:
        return {"launch": self.launch, "args": {self.names[p]: v for p, v in self.point.args},
                "pids": list(self.point.pids), "grid": list(self.point.grid), "input": self.assignment(),
                "reasons": self.reasons, "outcome": self.outcome, "steps": self.steps,
                "findings": [f.kind for f in self.findings], **({"loaded": self.memory} if self.memory else {}),
                **({"outside_contract": [a.as_dict() for a in self.outside]} if self.outside else {})}


@dataclass
class InputSearch:
    model: InputModel | None
    points: list[PointResult] = field(default_factory=list)
    targets: int = 0
    unreachable: list[str] = field(default_factory=list)  # boundaries no admitted input reaches
    observations: int = 0
    base: PointResult | None = None  # the main simulation's launch, with the boundaries it sits on
    base_invalid: str = ""  # why the main simulation's launch is one the IR excludes ("" if admitted)
    base_targets: list = field(default_factory=list)  # boundaries the main launch sits on

    def base_cause(self) -> PointResult | None:
        """When the main launch hangs: a boundary it sits on whose other side a completed point
        shows (the loop runs there, or the condition goes the other way, and the kernel
        completes), as the launch to name; None when no point shows one."""
        if self.base is None:
            return None
        done = [p for p in self.points if p.outcome in ("completed", "covered") and p.obs is not None]
        for t in self.base_targets:
            if any(_opposite(t, p.obs) for p in done):
                return replace(self.base, reasons=[t.describe(self.base.obs)], shown=site_variables(t.site))
        return None

    def summary(self) -> dict:
        return {"targets": self.targets, "observations": self.observations,
                "points": [p.as_dict() for p in self.points], "unreachable": self.unreachable}


# -- the model of one kernel ---------------------------------------------------------------------------
def model_of(analysis) -> InputModel | None:
    """The kernel's input model, built once per Analysis."""
    cached = analysis.__dict__.get("_input_model", False)
    if cached is not False:
        return cached
    fn = analysis.sel.function
    model = None
    if fn is not None and fn.regions:
        barrier_ops = {id(o) for o in analysis.ops if analysis.barriers.uses_at(o)}
        model = build_model(fn, barrier_ops, _header(analysis))
    analysis.__dict__["_input_model"] = model
    return model


def _header(analysis) -> str:
    fn = analysis.sel.function
    try:
        text = analysis.sel.unit.text()
    except Exception:  # noqa: BLE001 - a header we cannot read only loses divisibility facts
        return ""
    end = text.find(b"{\n", fn.start_byte)
    return text[fn.start_byte:end if end > 0 else fn.start_byte + 20_000].decode("utf-8", "replace")


def base_point(model: InputModel, params: Params) -> Point:
    over = dict(params.arg_values)
    args = tuple((a.position, over.get(a.position, params.int_args)) for a in model.args)
    pids = tuple((list(params.program_ids) + [params.program_id] * 3)[:3])
    grid = tuple((list(params.grid) + [params.num_programs] * 3)[:3])
    grid = tuple(max(g, p + 1) for g, p in zip(grid, pids))
    return Point(args, pids, grid)  # type: ignore[arg-type]


def admissible(model: InputModel, params: Params) -> Params:
    """The chosen simulation values moved to launches the IR admits: an argument with
    `tt.divisibility = d` rounded up to a multiple of d."""
    over = dict(params.arg_values)
    changed = False
    for a in model.args:
        value = over.get(a.position, params.int_args)
        if a.divisibility > 1 and value % a.divisibility:
            over[a.position] = -(-value // a.divisibility) * a.divisibility
            changed = True
    return replace(params, arg_values=tuple(sorted(over.items()))) if changed else params


def apply_launch(model: InputModel, params: Params, launch: Launch) -> Params:
    """Params for the user's launch: their values replace the chosen ones (checked against
    what the IR states first: a name it has, a multiple of its `tt.divisibility`)."""
    by_name = {a.name: a for a in model.args}
    over = dict(params.arg_values)
    for name, value in launch.args.items():
        arg = by_name.get(name)
        if arg is None:
            known = ", ".join(a.name for a in model.args) or "none"
            raise LaunchError(f"--args: the kernel has no integer argument named {name!r} (integer arguments: {known})")
        if arg.stated > 1 and value % arg.stated:
            raise LaunchError(f"--args {name}={value}: this IR was compiled for {name} divisible by {arg.stated} (tt."
                              f"divisibility = {arg.stated} in the IR); a launch with this value runs another compilation")
        # Breaking only an inferred block multiple is simulated, and said (`contract.broken_by`).
        over[arg.position] = value
    pids = tuple(launch.pids) if launch.pids is not None else params.program_ids
    grid = tuple(launch.grid) if launch.grid is not None else params.grid
    if pids:
        pids = tuple((list(pids) + [0, 0, 0])[:3])
        base_grid = tuple((list(grid) + [params.num_programs] * 3)[:3])
        if launch.grid is not None and any(p >= g for p, g in zip(pids, base_grid)):
            raise LaunchError(f"--pid {','.join(map(str, pids))}: a program id must be below --grid "
                              f"{','.join(map(str, base_grid))}")
        grid = tuple(max(g, p + 1) for g, p in zip(base_grid, pids))
    memory = params.memory
    if launch.loads:
        from ..program.loaded import Memory, input_arrays, parse_loads

        try:
            memory = Memory(arrays=parse_loads(launch.loads, input_arrays(model.function)))
        except ValueError as exc:
            raise LaunchError(str(exc)) from None
    return replace(params, arg_values=tuple(sorted(over.items())), program_ids=pids, grid=grid, memory=memory)


def parse_launch(args: str | None, pid: str | None, grid: str | None, loads: str | None = None) -> Launch:
    """`K=4096,N_CTX=77`, `3` or `3,1[,0]` into a Launch (LaunchError on a malformed value);
    `loads` (`offs=[0,0,64,64]`) is checked against the kernel's arrays in `apply_launch`."""
    launch = Launch(loads=loads)
    for item in (args or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise LaunchError(f"--args: expected NAME=VALUE, got {item!r}")
        launch.args[name.strip().lstrip("%")] = _int(value, f"--args {name.strip()}")
    for opt, text in (("--pid", pid), ("--grid", grid)):
        if text is None:
            continue
        vals = tuple(_int(v, opt) for v in text.split(","))
        if not 1 <= len(vals) <= 3 or any(v < (0 if opt == "--pid" else 1) for v in vals):
            raise LaunchError(f"{opt}: expected 1 to 3 comma-separated {'ids >= 0' if opt == '--pid' else 'counts >= 1'}, got {text!r}")
        if opt == "--pid":
            launch.pids = vals
        else:
            launch.grid = vals
    return launch


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip(), 0)
    except ValueError:
        raise LaunchError(f"{what}: {text.strip()!r} is not an integer") from None

# -- targets and candidate values ------------------------------------------------------------------
def targets_of(model: InputModel, analysis) -> list[Target]:
    """Every boundary worth a launch, most telling first: empty loops, then both sides of each
    runtime condition, then single-iteration loops, then ring-ragged trip counts."""
    zero, sides, one, ragged, wrapped = [], [], [], [], []
    seen_conds: set[str] = set()
    for s in model.sites:
        if not s.barrier or not site_variables(s):
            continue
        part = analysis.partition_name(s.op) or "main"
        if s.kind in ("for", "while"):
            own = variables(s.lb) | variables(s.ub) | variables(s.step) | variables(s.cond)
            if not own:
                continue  # a constant trip count: no input changes it
            zero.append(Target(s, "zero", partition=part))
            one.append(Target(s, "one", partition=part))
            depth = _ring_depth(s.op, analysis)
            if depth > 1:
                ragged.append(Target(s, "ragged", depth, part))
        elif s.kind in ("if", "pred") and variables(s.cond):
            key = f"{part}:{s.kind}:{render(s.cond)}:{s.op.line if s.kind == 'if' else ''}"
            if key in seen_conds:
                continue
            seen_conds.add(key)
            sides += [Target(s, "then", partition=part), Target(s, "else", partition=part)]
            loop = s.parent
            while loop is not None and loop.kind not in ("for", "while"):
                loop = loop.parent
            depth = max((_ring_depth(o, analysis) for o in _partition_loops(loop)), default=1) if loop else 1
            if depth > 1:  # the side that skips an arrival shows only once the ring has wrapped
                wrapped += [Target(s, w, depth, part, wraps=loop) for w in ("then", "else")]
    return zero + sides + wrapped + one + ragged


def _partition_loops(site: Site | None) -> list[Operation]:
    """The loop op of `site` and every loop nested in it (their rings wrap together)."""
    return [o for o in site.op.walk() if o.name in ("scf.for", "scf.while")] if site is not None else []


def _opposite(t: Target, obs: Observation) -> bool:
    """Does `obs` show the other side of boundary `t` (reached, not merely avoided)?"""
    if t.want in ("then", "else"):
        return (1 if t.want == "then" else 0) in obs.branches.get(id(t.site), set())
    return any(n is not None and n > 0 for n in obs.trips.get(id(t.site), []))


def _ring_depth(loop: Operation, analysis) -> int:
    """Slots of the deepest barrier ring used directly in `loop`'s body (not in nested loops)."""
    depth = 1
    for op in loop.walk():
        if op is loop:
            continue
        enclosing = next((a for a in op.ancestors() if a.name in ("scf.for", "scf.while")), None)
        if enclosing is not loop:
            continue
        for b, _ in analysis.barriers.uses_at(op):
            if isinstance(b.slots, int) and b.slots > depth:
                depth = b.slots
    return depth


def _constants(model: InputModel, target: Target) -> list[int]:
    out: set[int] = set()
    s: Site | None = target.site
    nodes = []
    while s is not None:
        nodes += [s.lb, s.ub, s.step, s.cond]
        s = s.parent
    seen: set[int] = set()
    while nodes:
        n = nodes.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.kind == "const" and isinstance(n.value, int) and 1 < abs(n.value) <= 4096:
            out.add(abs(n.value))
        elif n.kind in ("iv", "carried"):
            lp = n.loop
            nodes += [lp.lb, lp.ub, lp.step, lp.cond, *lp.inits, *lp.yields]
        else:
            nodes.extend(n.args)
    return sorted(out)


def _candidates(var: tuple[str, int], model: InputModel, consts: list[int], depth: int, base: Point) -> list[int]:
    kind, key = var
    if kind == "pid":
        vals = {0, 1, 2, 3} | {c - 1 for c in consts} | {c for c in consts}
        return sorted(v for v in vals if 0 <= v <= 4096)[:24]
    if kind == "nprog":
        vals = {1, 2, 3, 4, base.grid[key]} | {c for c in consts} | {c + 1 for c in consts}
        return sorted(v for v in vals if 1 <= v <= 4096)[:24]
    arg = next(a for a in model.args if a.position == key)
    base_value = dict(base.args).get(key)
    if arg.type == "i1":
        return [0, 1]
    d = max(1, arg.divisibility)
    vals = {d, 2 * d, base_value} if base_value is not None else {d, 2 * d}
    if arg.flag:
        vals |= {0, 2}
    # Multiples of the block sizes the IR divides by (and of a block times a small constant: a
    # split count, a ring depth), exact and one unit of divisibility more: empty, single, full
    # and ragged tiles. A constant one below another is a ceil-division's addend, not a size.
    sizes = [c for c in consts if c - 1 not in consts or c + 1 not in consts]
    blocks = [c for c in sizes if c >= 8 and c + 1 not in consts]
    smalls = [c for c in sizes if c < 8]
    scales = sorted(set(blocks) | {b * k for b in blocks for k in smalls})
    for c in scales:
        for j in range(1, max(3, depth + 2) + 1):
            vals |= {c * j, c * j + d}
    low = 0 if arg.flag else 2
    # Never 1: Triton compiles a launch whose integer argument is 1 as a constant (another IR).
    out = sorted(v for v in vals if v is not None and v != 1 and low <= v <= MAX_VALUE
                 and (v % d == 0 or (arg.flag and v == 0)))
    return out[:96]


# -- search and simulation -------------------------------------------------------------------------
def search_points(model: InputModel, targets: list[Target], base: Point, fixed: set[tuple[str, int]]) -> tuple[list[tuple[Point, list[Target], Observation]], list[Target], int]:
    """For each target, the first admitted launch (fewest changed inputs, smallest values) that
    reaches it; launches reaching several targets are shared. Expressions only, no simulation."""
    cache: dict[Point, Observation] = {}
    chosen: list[tuple[Point, list[Target], Observation]] = []
    missed: list[Target] = []

    def look(p: Point) -> Observation:
        obs = cache.get(p)
        if obs is None:
            obs = observe(model, p)
            cache[p] = obs
        return obs

    for t in targets:
        if len(cache) >= MAX_OBSERVATIONS:
            missed.append(t)
            continue
        hit = next(((p, ts, o) for p, ts, o in chosen if t.reached(o)), None)
        if hit is not None:
            hit[1].append(t)
            continue
        if len(chosen) >= MAX_POINTS:
            continue
        found = None
        for p in _proposals(model, t, base, fixed):
            if len(cache) >= MAX_OBSERVATIONS:
                break
            obs = look(p)
            if obs.valid and t.reached(obs):
                found = (p, [t], obs)
                break
        if found is None:
            missed.append(t)
        else:
            chosen.append(found)
    return chosen, missed, len(cache)


def _proposals(model: InputModel, t: Target, base: Point, fixed: set[tuple[str, int]]):
    vars_ = sorted(v for v in site_variables(t.site) if v not in fixed)
    if not vars_:
        return
    consts = _constants(model, t)
    cands = [_candidates(v, model, consts, t.depth, base) for v in vars_]
    for ranks in itertools.islice(_rank_combos([len(c) for c in cands]), PER_TARGET):
        args = dict(base.args)
        pids, grid = list(base.pids), list(base.grid)
        for (kind, key), cand, r in zip(vars_, cands, ranks):
            if kind == "arg":
                args[key] = cand[r]
            elif kind == "pid":
                pids[key] = cand[r]
            else:
                grid[key] = cand[r]
        if any(p >= g for a, (p, g) in enumerate(zip(pids, grid)) if a in model.nprog_axes):
            continue  # a program id at or beyond the program count the kernel reads
        grid = [max(g, p + 1) for g, p in zip(grid, pids)]
        yield Point(tuple(sorted(args.items())), tuple(pids), tuple(grid))  # type: ignore[arg-type]


def _rank_combos(sizes: list[int]):
    """Candidate ranks per input, fewest inputs changed from their first candidate first, then
    the smallest values: one input swept over its range before any pair, so the launch named in
    a finding differs from the others as little as it can. Lazy, and each batch small (pairs
    and triples look at the first candidates only), so ordering never costs more than the search."""
    n = len(sizes)
    yield (0,) * n
    for k in range(1, n + 1):
        lim = {1: 1 << 30, 2: 12, 3: 6}.get(k, 4)
        batch: list[tuple[int, ...]] = []
        for idx in itertools.combinations(range(n), k):
            for rs in itertools.product(*[range(1, min(sizes[i], lim)) for i in idx]):
                r = [0] * n
                for i, v in zip(idx, rs):
                    r[i] = v
                batch.append(tuple(r))
        batch.sort(key=lambda t: (max(t), sum(t), t))
        yield from batch


def explore_inputs(analysis, params: Params, base_steps: int, *, fixed: set[tuple[str, int]] | None = None,
                   classify=None, deadline=None) -> InputSearch:
    """Find the boundary launches of this kernel and simulate each (favorable schedule, to the
    end). `classify(result)` turns a deadlocked run into findings; `base_steps` (what the main
    simulation took) bounds what the points may take together, so they at most double it, and
    `deadline` (the command's one time budget, `analyses.sim.budget`) bounds their time: a point
    not reached in time is listed `not_run`."""
    model = model_of(analysis)
    out = InputSearch(model)
    if model is None or not model.args and not model.pid_axes:
        return out
    targets = targets_of(model, analysis)
    out.targets = len(targets)
    if not targets:
        return out
    base = base_point(model, params)
    chosen, missed, out.observations = search_points(model, targets, base, fixed or set())
    out.unreachable = [t.describe() for t in missed if t.want in ("zero", "then", "else")]
    names = {a.position: a.name for a in model.args}
    base_obs = observe(model, base)
    out.base_invalid = "" if base_obs.valid else base_obs.why_invalid
    at_base = [t for t in targets if t.want in ("zero", "then", "else") and t.reached(base_obs)]
    out.base = PointResult(base, [], "", 0, names, set(), launch="default", obs=base_obs)
    out.base_targets = at_base
    budget = max(base_steps, MIN_STEP_BUDGET)
    fn = analysis.sel.function
    for point, ts, obs in chosen:
        shown = set().union(*(site_variables(t.site) for t in ts))
        reasons = [t.describe(obs) for t in ts]
        if budget <= 0 or (deadline is not None and deadline.passed()):
            out.points.append(PointResult(point, reasons, "not_run", 0, names, shown))
            continue
        p = replace(params, arg_values=point.args, program_ids=point.pids, grid=point.grid,
                    max_steps=min(params.max_steps, budget))
        result = run(fn, p, "favorable", deadline=deadline)
        budget -= result.steps
        findings = classify(result) if result.deadlocked and classify is not None else []
        pr = PointResult(point, reasons, result.outcome, result.steps, names, shown, obs=obs,
                         no_work=bool(ts) and all(t.want == "zero" for t in ts)
                         and not any(k in ("pid", "nprog") for k, _ in shown))
        pr.findings = [name_input(f, pr) for f in findings]
        if result.outcome == "limit":
            pr.limit_reason = result.reason
            pr.blocked_lines = sorted({b.line for b in result.blocked})
        out.points.append(pr)
    return out


def simulate_launch(analysis, params: Params, result: RunResult, names: dict[int, str],
                    given: set[str] | None = None) -> PointResult:
    """The user's own launch as a listed point (its runs are the main simulation's); shown: the
    arguments the user set (`given`), the JSON's `args` has every value."""
    model = model_of(analysis)
    point = base_point(model, params) if model is not None else Point(())
    shown = {("arg", p) for p, _ in point.args if given is None or names.get(p) in given} | {("pid", a) for a in range(3) if model and a in model.pid_axes}
    return PointResult(point, ["the launch given by --args/--pid/--grid"], result.outcome, result.steps, names, shown,
                       launch="user")


def name_input(f, pr: PointResult):
    """Say which input produces the finding, and keep the launch in its evidence."""
    what = pr.reasons[0] if pr.reasons else "at this launch"
    f.message = f"Hangs when {what}: {pr.assignment()}. {f.message}"
    if pr.no_work:
        # Sizes smaller than one tile: no program of the launch has work, which hosts exclude
        # (a grid of cdiv(size, BLOCK) programs, shape asserts) and the IR cannot say. The hang
        # is real at that launch, so it is said, but as a warning: at launches with work the
        # kernel was simulated on its own.
        from ..model.findings import Severity

        f.severity = Severity.warning
        f.message += (" Only at sizes with no tile of work for any program (the loop's trip count depends on the "
                      "sizes alone): check that the host never launches them, or guard the peeled iteration.")
    f.evidence["input"] = {"args": {pr.names[p]: v for p, v in pr.point.args}, "pids": list(pr.point.pids),
                           "grid": list(pr.point.grid), "reasons": pr.reasons}
    if pr.memory:
        f.evidence["input"]["loaded"] = pr.memory
    if pr.no_work:
        f.evidence["input"]["no_work"] = True
    return f
