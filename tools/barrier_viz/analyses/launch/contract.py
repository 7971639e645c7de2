"""The launch contract: what `check` assumes about the launch, and why, split into IR facts and
the tool's own inferences.

Why: the simulation and the input points only use launches the kernel admits. Some of that is
stated by the IR: `tt.divisibility = 16` on an argument (a launch with another value runs
another compilation) and every `llvm.intr.assume` / `tt.assume`. The rest the tool infers from
how the kernel uses its inputs: a loop bound `N_CTX // 128` drops a partial block, so the kernel
was written for N_CTX a multiple of 128 (the host asserts it); a bound `N - (pid + 1) * 128`
cuts N into per-program tiles, so no program starts past N. (The input-point search also never
tries a size of 0 or 1; that is a choice of where to look, not a contract: a real launch with
K=0 exists and hangs, and is judged as any launch.) An engineer needs to
see these, and needs to see which is which: an inference is the tool's reading of the code,
not something the compiler guarantees.

So the contract is a list of `Assumption`s, each with its source ("IR fact" or "inferred"),
what it says, and why. A user's launch (`check --args/--pid/--grid`) that breaks an IR fact is
refused (the IR was not compiled for it); one that breaks an inferred assumption is simulated
anyway, and what it breaks is listed (`broken_by`), so a hang there reads "hangs if the
contract is broken", never as a plain bug nor a clean pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from .trip_counts import InputModel, Point, render

IR_FACT = "IR fact"
INFERRED = "inferred"


@dataclass(frozen=True)
class Assumption:
    source: str  # IR_FACT | INFERRED
    statement: str  # "N_CTX is a multiple of 128"
    why: str  # "the loop at line 300 runs N_CTX / 128 times: a partial block is dropped"
    subject: str = ""  # the argument, `pid_x` or `launch`

    def text(self) -> str:
        return f"{self.statement} ({self.source}): {self.why}"

    def as_dict(self) -> dict:
        return {"source": self.source, "statement": self.statement, "why": self.why, "subject": self.subject}


def contract_of(model: InputModel | None) -> list[Assumption]:
    """Every assumption about the launch that the simulated launches and input points respect,
    IR facts first."""
    if model is None:
        return []
    facts: list[Assumption] = []
    inferred: list[Assumption] = []
    for a in model.args:
        if a.stated > 1:
            facts.append(Assumption(IR_FACT, f"{a.name} is a multiple of {a.stated}",
                                    f"tt.divisibility = {a.stated} on the argument: another value runs another "
                                    "compilation", a.name))
        if a.block > 1 and a.divisibility != a.stated:
            line, formula = a.block_at or (0, f"{a.name} / {a.block}")
            at = f"the loop at line {line}" if line else "a barrier loop"
            inferred.append(Assumption(INFERRED, f"{a.name} is a multiple of {a.divisibility}",
                                       f"{at} runs {formula} times (a partial block is dropped)", a.name))
    for s in model.sites:
        if s.kind == "assume":
            facts.append(Assumption(IR_FACT, render(s.cond), f"{s.op.name} at line {s.op.line}", "launch"))
    for arg, axis, tile in model.tiles:
        n = names_of(model, arg)
        inferred.append(Assumption(INFERRED, _tile_statement(model, arg, axis, tile),
                                   f"a barrier loop's bound is {n} - (pid_{'xyz'[axis]} + k) * {tile}: each program has "
                                   f"a {tile}-wide tile of {n}, and a host launches cdiv({n}, {tile}) programs",
                                   f"pid_{'xyz'[axis]}"))
    return facts + inferred


def _tile_statement(model: InputModel, arg: int, axis: int, tile: int) -> str:
    return f"pid_{'xyz'[axis]} * {tile} < {names_of(model, arg)}"


def broken_by(model: InputModel | None, point: Point, given: set[str] | None = None) -> list[Assumption]:
    """The inferred assumptions `point` breaks (IR facts are refused before a launch is made:
    `input_points.apply_launch`). `given`: the argument names the user set (`--args`), with
    "pid" / "grid" for --pid / --grid; only assumptions about those are tested, the tool's own
    values meet the contract by construction."""
    if model is None:
        return []
    given = given or set()
    args = dict(point.args)
    out: list[Assumption] = []
    contract = contract_of(model)
    by_subject: dict[str, list[Assumption]] = {}
    for c in contract:
        by_subject.setdefault(c.subject, []).append(c)
    for a in model.args:
        v = args.get(a.position)
        if a.name not in given or v is None:
            continue
        if a.divisibility > 1 and v % a.divisibility:
            out += [c for c in by_subject.get(a.name, []) if c.source == INFERRED]
    if given & {"pid", "grid"} or any(names_of(model, arg) in given for arg, _, _ in model.tiles):
        for arg, axis, tile in model.tiles:
            n = args.get(arg)
            pid = point.pids[axis] if axis < len(point.pids) else 0
            if isinstance(n, int) and pid * tile >= n:
                out += [c for c in contract if c.statement == _tile_statement(model, arg, axis, tile)]
    return list(dict.fromkeys(out))


def given_names(launch) -> set[str]:
    """What a user's launch (`input_points.Launch`) sets, for `broken_by`: its argument names, and
    "pid" / "grid" for --pid / --grid."""
    return set(launch.args) | ({"pid"} if launch.pids is not None else set()) | ({"grid"} if launch.grid is not None else set())


def names_of(model: InputModel, position: int) -> str:
    return next((a.name for a in model.args if a.position == position), f"arg{position}")
