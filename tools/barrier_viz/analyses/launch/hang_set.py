"""Hang sets: the values of each input at which a trip-count mismatch hangs, and those at which
the kernel completes, over a stated range.

Why: a witness (`K=2, pid_y=1`) says the kernel hangs somewhere; a kernel engineer needs to know
where: "hangs when cdiv(K, 64) is 1, 2, 3, 5, 6 or 9, i.e. K up to 192, 257-384, 513-576". A
trip-count mismatch (`trip_mismatch.py`) hangs exactly when the producer's loop runs no
iteration in an entry whose peeled wait still runs, so the set is the set of launches at which
that loop has an empty entry in some program. It is computed from the trip-count model
(`trip_counts.observe_site`: the loop's bounds evaluated with the interpreter's integer
semantics), one input at a time with the others held at the witness launch, never one
simulation per value; and it is checked against the launches that were simulated: a simulated
launch the set would mislabel drops the set (the model then does not say enough) rather than
print a wrong one.

Programs: a launch hangs when one of its programs does. Program ids range below the program
count where the kernel reads it (`num_programs`); otherwise below the first id from which no
program has an iteration of the loop at any value of the range (a split-K kernel's splits: the
host launches those), stated with the set.

An input the loop reads only through `cdiv(X, c)` (or `X / c`) is enumerated a block of `c` at
a time, so the range reaches far (1,024 blocks); any other input value by value from its
smallest admitted value (never 1: Triton compiles a 1 as a constant) in steps of its
`tt.divisibility`. The evaluations are bounded (`MAX_EVALS`); a range cut short says where.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from .trip_counts import InputModel, Node, Point, Site, observe_site, site_variables

MAX_EVALS = 6_000  # trip-count evaluations per finding, shared evenly by the inputs
MAX_PROGRAMS = 160  # program ids scanned per axis (a GPU's SM count and some)
STEPS = 256  # values (or blocks) per input
MAX_NPROG = 64  # program counts swept
_SAMPLES = 8  # values at which a program id is asked whether it has work


@dataclass
class HangSet:
    """The values of one input that hang and those that complete, over `lo..hi`."""

    variable: str
    lo: int
    hi: int
    step: int
    hangs: list[tuple[int, int]]
    completes: list[tuple[int, int]]
    held: dict[str, int]
    programs: dict[str, int | str]  # program-id axis -> the bound its ids stay below (a count, or num_programs_<axis>)
    programs_why: str
    loop_line: int
    block: int = 0  # the input enters as cdiv(X, block): membership is the same on each block
    block_hangs: list[int] = field(default_factory=list)  # values of cdiv(X, block) that hang
    residues: tuple[int, list[int]] | None = None  # (modulus, residues of X or of its block that hang)
    checked: list[str] = field(default_factory=list)  # simulated launches the set agrees with
    cut: str = ""  # why the range stops short of STEPS values

    def as_dict(self) -> dict:
        out = {"variable": self.variable, "range": [self.lo, self.hi], "step": self.step,
               "hangs": [list(i) for i in self.hangs], "completes": [list(i) for i in self.completes],
               "held": self.held, "programs": self.programs, "programs_why": self.programs_why,
               "loop_line": self.loop_line, "by": "trip-count model", "checked": self.checked,
               "text": self.text()}
        if self.block:
            out["block"] = {"expr": f"cdiv({self.variable}, {self.block})", "hangs": self.block_hangs}
        if self.residues:
            out["residues"] = {"modulus": self.residues[0], "hang": self.residues[1]}
        if self.cut:
            out["cut"] = self.cut
        return out

    def text(self) -> str:
        """One line: the values that hang, then those that complete, with the range."""
        x = self.variable
        if not self.hangs:
            what = f"completes for every {x} in {self.lo}..{self.hi}"
        elif not self.completes:
            what = f"hangs for every {x} in {self.lo}..{self.hi}"
        else:
            how = ""
            if self.residues:
                mod, res = self.residues
                base = f"cdiv({x}, {self.block})" if self.block else x
                how = f"{base} ≡ {', '.join(map(str, res))} (mod {mod}): "
            elif self.block and len(self.block_hangs) <= 12:
                how = f"cdiv({x}, {self.block}) ∈ {{{', '.join(map(str, self.block_hangs))}}}: "
            what = (f"hangs when {how}{x} ∈ {_intervals(self.hangs)}; completes for {x} ∈ "
                    f"{_intervals(self.completes)}")
        step = f", step {self.step}" if self.step > 1 and not self.block else ""
        return f"{x} = {self.lo}..{self.hi}{step}: {what}"

    def scope(self) -> str:
        """What the set holds fixed: the other inputs, and the programs quantified."""
        parts = [f"{k}={v}" for k, v in self.held.items()]
        progs = [f"some program {k} < {n}" for k, n in self.programs.items()]
        return ", ".join(progs + parts)


def _intervals(spans: list[tuple[int, int]], limit: int = 8) -> str:
    text = [f"{a}" if a == b else f"{a}–{b}" for a, b in spans[:limit]]
    return ", ".join(text) + (f", … ({len(spans) - limit} more)" if len(spans) > limit else "")


def hang_sets(model: InputModel, loop: Site, point: Point, simulated: list[tuple[Point, bool]] = ()) -> tuple[list[HangSet], str]:
    """The hang set of every input the loop's trip count reads (one at a time, the others held
    at `point`), and "" — or no set and why. `simulated`: launches that ran, with whether
    they hung (the set must agree with each that differs from `point` in that input only)."""
    names = {a.position: a.name for a in model.args}
    vars_ = site_variables(loop)
    pid_axes = sorted(ax for k, ax in vars_ if k == "pid")
    swept = [v for v in sorted(vars_) if v[0] == "arg"] + [v for v in sorted(vars_) if v[0] == "nprog"]
    out: list[HangSet] = []
    for var in swept:
        budget = [MAX_EVALS // max(1, len(swept))]
        hs, why = _one(model, loop, point, var, names, pid_axes, budget, simulated)
        if hs is None:
            return [], why
        out.append(hs)
    return out, ""


def _label(var: tuple[str, int], names: dict[int, str]) -> str:
    return names.get(var[1], f"arg{var[1]}") if var[0] == "arg" else f"num_programs_{'xyz'[var[1]]}"


def _one(model, loop, point: Point, var, names, pid_axes, budget, simulated):
    kind, key = var
    args = dict(point.args)
    block = _block(loop, key) if kind == "arg" else 0
    reps, spans, step = _values(model, var, block)
    held = {names[p]: v for p, v in sorted(args.items()) if ("arg", p) in site_variables(loop) and ("arg", p) != var}
    held.update({f"num_programs_{'xyz'[a]}": point.grid[a] for a in sorted(model.nprog_axes)
                 if ("nprog", a) in site_variables(loop) and ("nprog", a) != var})

    def launch(value: int, pids: tuple[int, ...]) -> Point:
        a, grid = dict(args), list(point.grid)
        if kind == "arg":
            a[key] = value
        else:
            grid[key] = value
        grid = [max(g, p + 1) if ax not in model.nprog_axes else g for ax, (g, p) in enumerate(zip(grid, pids))]
        return Point(tuple(sorted(a.items())), tuple(pids), tuple(grid))  # type: ignore[arg-type]

    def trips(value: int, pids: tuple[int, ...]) -> tuple[list, bool]:
        budget[0] -= 1
        return observe_site(model, loop, launch(value, pids))

    # Programs: below the program count the kernel reads, else below the first id from which no
    # program has an iteration of the loop at any sampled value.
    fixed_bounds: dict[int, int] = {}
    why = []
    sample = reps[:: max(1, len(reps) // _SAMPLES)][:_SAMPLES]
    for ax in pid_axes:
        if ax in model.nprog_axes:
            why.append(f"pid_{'xyz'[ax]} below num_programs_{'xyz'[ax]}")
            continue
        last, quiet, p = point.pids[ax], 0, 0
        while p < MAX_PROGRAMS and quiet < 8 and budget[0] > 0:
            pids = list(point.pids)
            pids[ax] = p
            if any(any(t for t in trips(v, tuple(pids))[0]) for v in sample):
                last, quiet = max(last, p), 0
            else:
                quiet += 1
            p += 1
        fixed_bounds[ax] = last + 1
        why.append(f"no program pid_{'xyz'[ax]} >= {last + 1} has an iteration of the loop at any sampled "
                   f"{_label(var, names)}" if quiet >= 8 else f"program ids scanned up to {p}")

    def programs(value: int):
        ranges = []
        for ax in pid_axes:
            n = fixed_bounds.get(ax)
            if n is None:  # below the program count, which is the swept value or the launch's
                n = value if var == ("nprog", ax) else point.grid[ax]
            ranges.append(range(min(n, MAX_PROGRAMS)))
        for combo in itertools.islice(itertools.product(*ranges), MAX_PROGRAMS):
            pids = list(point.pids)
            for ax, p in zip(pid_axes, combo):
                pids[ax] = p
            yield tuple(pids)

    def hangs_at(value: int) -> bool | None:
        admitted = False
        for pids in programs(value):
            t, valid = trips(value, pids)
            if not valid:
                continue
            admitted = True
            if 0 in t:
                return True
        return False if admitted else None

    member: list[bool | None] = []
    cut = ""
    for v in reps:
        if budget[0] <= 0:
            cut = f"the evaluation budget ran out at {_label(var, names)} = {v}"
            break
        member.append(hangs_at(v))
    if not member:
        return None, "no value of the range was evaluated"
    label = _label(var, names)
    # The set must agree with every simulated launch that differs from `point` only in this input.
    checked = []
    for sp, hung in simulated:
        value = _differs_only_in(sp, point, var)
        if value is None:
            continue
        t, valid = observe_site(model, loop, sp)
        if not valid:
            continue
        if (0 in t) != hung:
            return None, (f"the trip-count model and the simulation disagree at {label}={value} "
                          f"(simulated: {'hangs' if hung else 'completes'}), so no set is printed")
        who = [f"{names[p]}={v}" for p, v in sp.args if ("arg", p) in site_variables(loop)]
        who += [f"pid_{'xyz'[ax]}={sp.pids[ax]}" for ax in pid_axes]
        who += [f"num_programs_{'xyz'[ax]}={sp.grid[ax]}" for ax in sorted(model.nprog_axes) if ("nprog", ax) in site_variables(loop)]
        checked.append(f"{', '.join(who)}: {'hangs' if hung else 'completes'}")
    hang_spans, done_spans = _spans(spans[:len(member)], member)
    hi = spans[len(member) - 1][1]
    hs = HangSet(label, spans[0][0], hi, step, hang_spans, done_spans, held,
                 {f"pid_{'xyz'[ax]}": fixed_bounds.get(ax, f"num_programs_{'xyz'[ax]}") for ax in pid_axes},
                 "; ".join(why), loop.op.line, block=block, checked=checked, cut=cut)
    if block:
        hs.block_hangs = [spans[i][1] // block
                          for i, m in enumerate(member) if m]
    # Block mode: representative i is block first_block + i (a residue of cdiv(X, block)).
    hs.residues = _periodic(member, 1, -(-spans[0][1] // block)) if block else _periodic(member, step, spans[0][0])
    return hs, ""


def _differs_only_in(sp: Point, point: Point, var) -> int | None:
    a, b = dict(sp.args), dict(point.args)
    kind, key = var
    if kind == "arg":
        if any(a.get(k) != v for k, v in b.items() if k != key):
            return None
        return a.get(key)
    if a != b or any(x != y for ax, (x, y) in enumerate(zip(sp.grid, point.grid)) if ax != key):
        return None
    return sp.grid[key]


def _values(model: InputModel, var, block: int) -> tuple[list[int], list[tuple[int, int]], int]:
    """Representative values of the input and the span each stands for, and the step."""
    kind, key = var
    if kind == "nprog":
        vals = list(range(1, MAX_NPROG + 1))
        return vals, [(v, v) for v in vals], 1
    arg = next(a for a in model.args if a.position == key)
    if arg.type == "i1":
        return [0, 1], [(0, 0), (1, 1)], 1
    d = max(1, arg.divisibility)
    lo = 0 if arg.flag else (d if d > 1 else 2)
    if block and block % d == 0:
        reps, spans = [], []
        first = max(lo, 1)
        for j in range(max(1, -(-first // block)), STEPS + 1):
            start = max(first, (j - 1) * block + 1)
            reps.append(j * block)
            spans.append((start, j * block))
        if arg.flag:
            reps.insert(0, 0)
            spans.insert(0, (0, 0))
        return reps, spans, block
    vals = [lo + k * d for k in range(STEPS) if lo + k * d != 1]
    return vals, [(v, v) for v in vals], d


def _block(loop: Site, position: int) -> int:
    """c when every use of argument `position` in the loop's bounds (and those around it) is
    `cdiv(X, c)` (`(X + c - 1) / c`) or `X / c` with one constant c; 0 otherwise."""
    roots: list[Node] = []
    s: Site | None = loop
    while s is not None:
        roots += [s.lb, s.ub, s.step, s.cond, *s.inits, *s.yields, *s.forwarded]
        s = s.parent
    found: set[int] = set()
    ok = True
    seen: set[int] = set()
    stack = list(roots)
    while stack and ok:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.kind != "op" and n.kind != "choice":
            if n.kind in ("iv", "carried"):
                lp = n.loop
                stack += [lp.lb, lp.ub, lp.step, lp.cond, *lp.inits, *lp.yields, *lp.forwarded]
            continue
        for i, a in enumerate(n.args):
            if a.kind == "arg" and a.index == position:
                c = _divisor_of(n, i)
                if c is None:
                    ok = False
                found.add(c or 0)
            elif a.kind == "op" and a.op is not None and a.op.name == "arith.addi" and len(a.args) == 2 \
                    and a.args[0].kind == "arg" and a.args[0].index == position and a.args[1].kind == "const" \
                    and n.op is not None and n.op.name in ("arith.divsi", "arith.divui") and i == 0 \
                    and len(n.args) == 2 and n.args[1].kind == "const" and n.args[1].value == a.args[1].value + 1:
                found.add(n.args[1].value)
                seen.add(id(a))
                continue
            stack.append(a)
    return found.pop() if ok and len(found) == 1 and next(iter(found)) > 1 else 0


def _divisor_of(n: Node, i: int) -> int | None:
    if n.kind == "op" and n.op is not None and i == 0 and len(n.args) == 2 and n.args[1].kind == "const" \
            and isinstance(n.args[1].value, int) and n.args[1].value > 1:
        if n.op.name in ("arith.divsi", "arith.divui"):
            return n.args[1].value
        if n.op.name in ("arith.ceildivsi", "arith.ceildivui"):
            return n.args[1].value
    return None


def _spans(spans: list[tuple[int, int]], member: list[bool | None]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Consecutive representatives with the same answer merged into intervals (inclusive)."""
    hang: list[tuple[int, int]] = []
    done: list[tuple[int, int]] = []
    prev = None
    for (a, b), m in zip(spans, member):
        if m is not None:
            dst = hang if m else done
            if prev is m and dst:
                dst[-1] = (dst[-1][0], b)
            else:
                dst.append((a, b))
        prev = m
    return hang, done


def _periodic(member: list[bool | None], step: int, first: int) -> tuple[int, list[int]] | None:
    """(modulus, residues that hang) when the pattern repeats over the whole range with a period
    of at most a third of it and both answers occur; None otherwise. Representative `i` stands
    for `first + i * step` (a value, or a block index with step 1)."""
    n = len(member)
    if n < 6 or None in member or all(member) or not any(member):
        return None
    for p in range(2, n // 3 + 1):
        if all(member[i] == member[i + p] for i in range(n - p)):
            mod = p * step
            return mod, sorted({(first + i * step) % mod for i in range(p) if member[i]})
    return None


# -- on findings -----------------------------------------------------------------------------------
def attach(findings: list, analysis, main: Point | None, points: list = (), main_hung: bool | None = None) -> None:
    """Give every trip-count mismatch of `findings` its hang sets (`evidence.hang_set`: the
    sets, their scope, and `lines`, the words every renderer prints). `main`: the main launch
    (`main_hung`: whether it hung); `points`: the input points simulated (`PointResult`s)."""
    from .input_points import model_of

    model = model_of(analysis)
    if model is None:
        return
    simulated: list[tuple[Point, bool]] = []
    if main is not None and main_hung is not None:
        simulated.append((main, main_hung))
    for p in points:
        if p.outcome in ("completed", "covered") and not p.memory:
            simulated.append((p.point, False))
        elif p.outcome == "deadlock" and not p.memory and any(f.kind == "deadlock.trip_count_mismatch" for f in p.findings):
            simulated.append((p.point, True))
    by_name = {a.name: a.position for a in model.args}
    for f in findings:
        if f.kind != "deadlock.trip_count_mismatch" or "mismatch" not in f.evidence:
            continue
        line = f.evidence["mismatch"]["loop_line"]
        loop = next((s for s in model.loops() if s.op.line == line), None)
        at = _launch_of(f.evidence.get("input"), by_name, main)
        if loop is None or at is None:
            continue
        sets, why = hang_sets(model, loop, at, simulated)
        f.evidence["hang_set"] = _evidence(sets, why, line)


def _launch_of(given: dict | None, by_name: dict[str, int], main: Point | None) -> Point | None:
    if not given:
        return main
    args = dict(main.args) if main is not None else {}
    args.update({by_name[n]: v for n, v in (given.get("args") or {}).items() if n in by_name})
    pids = tuple((list(given.get("pids") or []) + [0, 0, 0])[:3])
    grid = tuple((list(given.get("grid") or []) + [1, 1, 1])[:3])
    return Point(tuple(sorted(args.items())), pids, grid)  # type: ignore[arg-type]


def _evidence(sets: list[HangSet], why: str, line: int) -> dict:
    if not sets:
        return {"loop_line": line, "sets": [], "why": why or "no input decides the loop's trip count",
                "lines": [f"hang set: not computed ({why or 'no input decides the trip count of the loop at line ' + str(line)})"]}
    head = (f"hang set (trip-count model: the loop at line {line} runs no iteration in some program; "
            "each input swept with the others held at this launch):")
    lines = [head]
    sets = sorted(sets, key=lambda h: not (h.hangs and h.completes))  # the sets that draw a line first
    for h in sets:
        lines.append(f"  {h.text()} [{h.scope()}]" + (f" ({h.cut})" if h.cut else ""))
    checked = sorted({c for h in sets for c in h.checked})
    if checked:
        lines.append(f"  agrees with the simulated launches: {'; '.join(checked[:6])}")
    return {"loop_line": line, "sets": [h.as_dict() for h in sets], "lines": lines}
