"""Evaluating the model at one launch (`observe`): every expression with the interpreter's integer
semantics (`sim.machine.arith_value`), an outer loop stepped concretely (up to a cap) so that
inner loops whose bounds depend on the tile see each tile's value.
"""

from __future__ import annotations

from ...sim.machine import arith_value, wrap_int
from .build import _descendants
from .model import InputModel, Node, Observation, Point, Site


MAX_STEPS = 8  # iterations of an enclosing loop stepped to see inner loops' entries


# -- evaluation --------------------------------------------------------------------------------------
class _Frame:
    __slots__ = ("values", "parent", "memo")

    def __init__(self, values: dict[int, int | None], parent: "_Frame | None"):
        self.values, self.parent, self.memo = values, parent, {}

    def lookup(self, node: Node):
        f: _Frame | None = self
        while f is not None:
            if id(node) in f.values:
                return f.values[id(node)]
            f = f.parent
        return None


def evaluate(node: Node, point: Point, frame: _Frame | None = None, memo: dict | None = None):
    """The value of `node` at `point` (None when it depends on something opaque). Iterative:
    a long chain of arithmetic never exhausts the Python stack. `memo` keeps the values that
    do not depend on any loop iteration across calls at the same point."""
    glob = memo if memo is not None else {}
    local = frame.memo if frame is not None else glob
    args = _args_of(point)
    stack = [(node, False)]
    while stack:
        n, ready = stack.pop()
        key = id(n)
        memo_ = local if n.dep else glob
        if key in memo_:
            continue
        memo = memo_
        kind = n.kind
        if kind == "const":
            memo[key] = n.value
        elif kind == "arg":
            v = args.get(n.index)
            memo[key] = wrap_int(v, n.value) if v is not None else None
        elif kind == "pid":
            memo[key] = point.pids[n.index] if n.index < 3 else 0
        elif kind == "nprog":
            memo[key] = point.grid[n.index] if n.index < 3 else 1
        elif kind in ("iv", "carried"):
            memo[key] = frame.lookup(n) if frame is not None else None
        elif kind == "opaque":
            memo[key] = None
        elif not ready:
            stack.append((n, True))
            stack.extend((c, False) for c in n.args if id(c) not in (local if c.dep else glob))
        elif kind == "choice":
            c = _get(n.args[0], local, glob)
            memo[key] = None if c is None else _get(n.args[1] if c else n.args[2], local, glob)
        else:
            vals = [_get(c, local, glob) for c in n.args]
            memo[key] = None if any(v is None for v in vals) else arith_value(n.op, vals)
    return _get(node, local, glob)


def _args_of(point: Point) -> dict:
    """`point.args` as a dict; an observation evaluates hundreds of nodes at one point, so the
    last point's dict is kept (a `Point` is immutable)."""
    if _LAST[0] is not point:
        _LAST[:] = [point, point.args_map if hasattr(point, "args_map") else dict(point.args)]
    return _LAST[1]


_LAST: list = [None, {}]  # [the last point evaluated, its arguments by position]


def _get(n: Node, local: dict, glob: dict):
    return (local if n.dep else glob).get(id(n))


def observe(model: InputModel, point: Point, max_steps: int = MAX_STEPS) -> Observation:
    """Trip counts of every loop entry and sides of every condition at `point`."""
    obs = Observation({}, {})
    memo: dict = {}
    args = dict(point.args)
    for arg, axis, tile in model.tiles:
        n, pid = args.get(arg), (point.pids[axis] if axis < len(point.pids) else 0)
        if isinstance(n, int) and pid * tile >= n:
            obs.valid = False
            obs.why_invalid = (f"program {pid} along {'xyz'[axis]} would start its {tile}-wide tile at {pid * tile}, "
                               f"past the size {n}: no launch has that program")
    work: list[tuple[Site, _Frame | None]] = [(s, None) for s in reversed(model.roots)]
    budget = 1024  # site visits: a bound on the cost of one observation
    while work and budget > 0:
        site, frame = work.pop()
        budget -= 1
        if site.kind == "assume":
            if evaluate(site.cond, point, frame, memo) == 0:
                obs.valid, obs.why_invalid = False, f"the assumption at line {site.op.line} does not hold"
            continue
        if site.kind in ("if", "pred"):
            c = evaluate(site.cond, point, frame, memo)
            if c is None:
                continue
            side = 0 if c else 1
            obs.branches.setdefault(id(site), set()).add(side)
            work.extend((ch, frame) for ch in reversed(site.children) if ch.branch == side)
            continue
        frames = _iterations(site, point, frame, max_steps, obs, memo)
        for f in reversed(frames):
            work.extend((ch, f) for ch in reversed(site.children))
    return obs


def observe_site(model: InputModel, site: Site, point: Point, max_steps: int = MAX_STEPS) -> tuple[list[int | None], bool]:
    """The trip count of every entry of the loop `site` at `point` (and whether the launch is one
    the IR admits: its top-level assumptions and per-program tiles), walking only the loops and
    branches around `site`: what `observe` says of that one loop, at a fraction of its cost
    (the hang sets evaluate one loop at many launches)."""
    chain: list[Site] = []
    s: Site | None = site
    while s is not None:
        chain.append(s)
        s = s.parent
    chain.reverse()
    obs = Observation({}, {})
    memo: dict = {}
    valid = all(not (isinstance(dict(point.args).get(arg), int) and point.pids[axis] * tile >= dict(point.args)[arg])
                for arg, axis, tile in model.tiles if axis < len(point.pids))
    for r in model.roots:
        if r.kind == "assume" and evaluate(r.cond, point, None, memo) == 0:
            valid = False
    frames: list[_Frame | None] = [None]
    for outer, inner in zip(chain, chain[1:]):
        nxt: list[_Frame | None] = []
        for f in frames:
            if outer.kind in ("if", "pred"):
                c = evaluate(outer.cond, point, f, memo)
                if c is not None and (0 if c else 1) == inner.branch:
                    nxt.append(f)
            elif outer.kind in ("for", "while"):
                nxt += _iterations(outer, point, f, max_steps, obs, memo)
        frames = nxt
    if site.kind in ("for", "while"):
        for f in frames:
            _iterations(site, point, f, max_steps if site.kind == "while" else 0, obs, memo)
    return obs.trips.get(id(site), []), valid


def _iterations(site: Site, point: Point, frame: _Frame | None, cap: int, obs: Observation, memo: dict) -> list[_Frame]:
    """Step the loop at `site` once (one entry): record its trip count and return one frame
    per iteration stepped (at most `cap`), holding the induction variable and the carried
    values some bound or condition inside it reads (the others are never computed)."""
    need = _needed(site)
    ev = lambda n, f: evaluate(n, point, f, memo)  # noqa: E731
    carried = [ev(n, frame) if k in need else None for k, n in enumerate(site.inits)]
    frames: list[_Frame] = []
    trips: int | None
    if site.kind == "for":
        lb, ub, step = (ev(n, frame) for n in (site.lb, site.ub, site.step))
        if None in (lb, ub, step) or step <= 0:
            obs.trips.setdefault(id(site), []).append(None)
            return []
        trips = max(0, -(-(ub - lb) // step))
        for k in range(min(trips, cap) if site.children else 0):
            values = {id(site.iv): lb + k * step} if site.iv is not None else {}
            values.update({id(c): v for c, v in zip(site.carried, carried)})
            f = _Frame(values, frame)
            frames.append(f)
            if site.yields and len(site.yields) == len(carried):
                carried = [ev(n, f) if k in need else None for k, n in enumerate(site.yields)]
        obs.trips.setdefault(id(site), []).append(trips)
        return frames
    # scf.while: step until the condition is false (or unknown, or the cap)
    trips = 0
    while trips <= cap:
        f = _Frame({id(c): v for c, v in zip(site.carried, carried)}, frame)
        cond = ev(site.cond, f)
        if cond is None:
            trips = None
            break
        if not cond:
            break
        fwd = [ev(n, f) for n in site.forwarded]
        f.values.update({id(c): v for c, v in zip(site.after_args, fwd)})
        frames.append(f)
        trips += 1
        if not site.yields or len(site.yields) != len(carried):
            trips = None
            break
        carried = [ev(n, f) if k in need else None for k, n in enumerate(site.yields)]
    else:
        trips = None  # longer than the cap: unknown here
    obs.trips.setdefault(id(site), []).append(trips)
    return frames if site.children else []


def _needed(site: Site) -> set[int]:
    """Indices of the carried values of `site` that its own condition, or a bound or condition
    of a site inside it, reads (directly or through other carried values)."""
    if site.needed is not None:
        return site.needed
    roots = [site.cond, *site.forwarded]
    for d in _descendants(site):
        roots += [d.lb, d.ub, d.step, d.cond, *d.inits]
    need: set[int] = set()
    stack, seen = list(roots), set()
    while stack:
        n = stack.pop()
        if id(n) in seen or not n.dep:
            continue
        seen.add(id(n))
        if n.kind == "carried" and n.loop is site:
            if n.index not in need:
                need.add(n.index)
                if site.kind == "for" and n.index < len(site.yields):
                    stack.append(site.yields[n.index])
                elif site.kind == "while":
                    stack += list(site.yields) + list(site.forwarded)
        elif n.kind == "carried" or n.kind == "iv":
            continue  # another loop's: that loop steps it
        else:
            stack.extend(n.args)
    if site.kind == "while":
        need = set(range(len(site.carried)))  # a while loop's condition is stepped in full
    site.needed = need
    return need
