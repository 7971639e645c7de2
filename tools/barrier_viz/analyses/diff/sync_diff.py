"""What changed in the synchronization between two units (`barrier-viz diff`).

Both sides are `sync_model` documents. Partitions are matched by role, barriers by what they
guard (tier by tier, see `sync_model.tier_keys`), uses of a matched barrier by what they are
(wait or arrive, op, partition) in program order, buffers by space, shape and accesses. Only
facts written at one op are compared, so a change names the op that made it: a wait whose
slot or phase formula changed, an arrive count or expected byte count, an init count, a
buffer depth, a use added or removed; derived facts (cadence, mechanisms) are what those
explain and are not repeated. Edges of the dependency graph and findings are compared as sets,
findings by fingerprint.

Nothing here reads SSA names or lines to decide what matches what: lines are carried only to
cite where each change is, on each side.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable

from .sync_model import tier_keys

NO_CHANGE = "no synchronization change"


def _greedy(a: list[dict], b: list[dict], score: Callable[[dict, dict], float]) -> tuple[list[tuple[dict, dict]], list[dict], list[dict]]:
    """Pair items of `a` and `b` (same kind of thing) by best score; ties go to the pair whose
    positions in their lists are closest, so equal items pair in order."""
    cands = []
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            cands.append((-score(x, y), abs(i - j), i, j))
    cands.sort()
    used_a: set[int] = set()
    used_b: set[int] = set()
    pairs = []
    for _, _, i, j in cands:
        if i in used_a or j in used_b:
            continue
        used_a.add(i)
        used_b.add(j)
        pairs.append((i, j))
    pairs.sort()
    return ([(a[i], b[j]) for i, j in pairs], [x for i, x in enumerate(a) if i not in used_a],
            [y for j, y in enumerate(b) if j not in used_b])


def _use_sig(u: dict) -> tuple:
    return (u["side"], u["op"], u["role"], u["partition"], u["slot"], u["phase"], u["arrivals"], u["tx_bytes"])


def _barrier_score(x: dict, y: dict) -> float:
    sx = Counter(_use_sig(u) for u in x["uses"])
    sy = Counter(_use_sig(u) for u in y["uses"])
    same = sum((sx & sy).values())
    keys = sum(1 for kx, ky in zip(tier_keys(x), tier_keys(y)) if kx == ky)
    return keys * 100 + same


def match_barriers(a: list[dict], b: list[dict]) -> tuple[list[tuple[dict, dict]], list[dict], list[dict]]:
    """Pair barriers tier by tier: at each tier, barriers whose tier key agrees are paired
    (by how many of their uses agree, then by program order of first use)."""
    left = sorted(a, key=lambda x: x["first_use"])
    right = sorted(b, key=lambda x: x["first_use"])
    pairs: list[tuple[dict, dict]] = []
    for tier in range(len(tier_keys(left[0])) if left else 0):
        groups_a: dict[tuple, list[dict]] = {}
        groups_b: dict[tuple, list[dict]] = {}
        for x in left:
            groups_a.setdefault(tier_keys(x)[tier], []).append(x)
        for y in right:
            groups_b.setdefault(tier_keys(y)[tier], []).append(y)
        for key, xs in groups_a.items():
            ys = groups_b.get(key)
            if ys:
                got, _, _ = _greedy(xs, ys, _barrier_score)
                pairs.extend(got)
        paired_a = {id(x) for x, _ in pairs}
        paired_b = {id(y) for _, y in pairs}
        left = [x for x in left if id(x) not in paired_a]
        right = [y for y in right if id(y) not in paired_b]
    pairs.sort(key=lambda p: p[0]["first_use"])
    return pairs, left, right


def _change(kind: str, what: str, *, op: str | None = None, barrier: str | None = None,
            lines_a: Iterable[int] = (), lines_b: Iterable[int] = (), a: Any = None, b: Any = None) -> dict[str, Any]:
    return {"kind": kind, "what": what, "op": op, "barrier": barrier, "lines_a": sorted(set(lines_a)),
            "lines_b": sorted(set(lines_b)), "a": a, "b": b}


def _use_word(u: dict) -> str:
    return f"{u['op']} ({u['role']}) in {u['partition']}"


def _diff_uses(ba: dict, bb: dict, ident: str) -> list[dict]:
    out: list[dict] = []
    groups: dict[tuple, tuple[list, list]] = {}
    for u in ba["uses"]:
        groups.setdefault((u["side"], u["op"], u["role"], u["partition"]), ([], []))[0].append(u)
    for u in bb["uses"]:
        groups.setdefault((u["side"], u["op"], u["role"], u["partition"]), ([], []))[1].append(u)
    for key in sorted(groups, key=lambda k: min(u["line"] for u in groups[k][0] + groups[k][1])):
        xs, ys = groups[key]
        sig = lambda u: (u["slot"], u["phase"], u["arrivals"], u["tx_bytes"])  # noqa: E731
        pairs, gone, new = _greedy(xs, ys, lambda x, y: float(sig(x) == sig(y)))
        for u in gone:
            out.append(_change("use.removed", f"{_use_word(u)} removed", op=u["op"], barrier=ident, lines_a=[u["line"]]))
        for u in new:
            out.append(_change("use.added", f"{_use_word(u)} added", op=u["op"], barrier=ident, lines_b=[u["line"]]))
        for x, y in pairs:
            where = dict(op=x["op"], barrier=ident, lines_a=[x["line"]], lines_b=[y["line"]])
            side = "wait" if x["side"] == "wait" else "arrive"
            if x["slot"] != y["slot"]:
                out.append(_change(f"{side}.slot_changed", f"{_use_word(x)}: slot {x['slot_text']} -> {y['slot_text']}",
                                   a=x["slot_text"], b=y["slot_text"], **where))
            if x["phase"] != y["phase"]:
                out.append(_change(f"{side}.phase_changed", f"{_use_word(x)}: phase {x['phase_text']} -> {y['phase_text']}",
                                   a=x["phase_text"], b=y["phase_text"], **where))
            if x["arrivals"] != y["arrivals"]:
                out.append(_change("arrive.count_changed", f"{_use_word(x)}: arrival count {x['arrivals']} -> {y['arrivals']}",
                                   a=x["arrivals"], b=y["arrivals"], **where))
            if x["tx_bytes"] != y["tx_bytes"]:
                out.append(_change("expect.bytes_changed", f"{_use_word(x)}: expected bytes {x['tx_bytes']} -> {y['tx_bytes']}",
                                   a=x["tx_bytes"], b=y["tx_bytes"], **where))
    return out


def _diff_barriers(ma: dict, mb: dict) -> tuple[list[dict], dict[str, int], dict[str, int]]:
    """Changes of barriers and their uses, and each side's barrier id -> match number (for
    comparing edges)."""
    pairs, gone, new = match_barriers(ma["barriers"], mb["barriers"])
    out: list[dict] = []
    tok_a: dict[str, int] = {}
    tok_b: dict[str, int] = {}
    for k, (x, y) in enumerate(pairs):
        tok_a[x["id"]] = tok_b[y["id"]] = k
        ident = x["identity"]
        if x["depth"] != y["depth"]:
            out.append(_change("barrier.depth_changed", f"{ident}: depth {x['depth']} -> {y['depth']}", op="ttg.local_alloc",
                               barrier=ident, lines_a=[x["line"]], lines_b=[y["line"]], a=x["depth"], b=y["depth"]))
        for (la, ca), (lb, cb) in zip(x["inits"], y["inits"]):
            if ca != cb:
                out.append(_change("barrier.init_count_changed", f"{ident}: init count {ca} -> {cb}",
                                   op="ttng.init_barrier", barrier=ident, lines_a=[la], lines_b=[lb], a=ca, b=cb))
        if len(x["inits"]) != len(y["inits"]):
            out.append(_change("barrier.init_count_changed", f"{ident}: {len(x['inits'])} -> {len(y['inits'])} init ops",
                               op="ttng.init_barrier", barrier=ident, lines_a=[l for l, _ in x["inits"]],
                               lines_b=[l for l, _ in y["inits"]], a=len(x["inits"]), b=len(y["inits"])))
        out.extend(_diff_uses(x, y, ident))
    for k, x in enumerate(gone):
        tok_a[x["id"]] = -1 - k
        out.append(_change("barrier.removed", f"{x['identity']} removed", barrier=x["identity"],
                           lines_a=[x["line"]] + [u["line"] for u in x["uses"]]))
    for k, y in enumerate(new):
        tok_b[y["id"]] = -1000 - k
        out.append(_change("barrier.added", f"{y['identity']} added", barrier=y["identity"],
                           lines_b=[y["line"]] + [u["line"] for u in y["uses"]]))
    return out, tok_a, tok_b


def _diff_edges(ma: dict, mb: dict, tok_a: dict[str, int], tok_b: dict[str, int]) -> list[dict]:
    """Edges keyed by their ends, channel and matched barrier; an edge on both sides whose
    direction flipped (a wait that now polls another parity) is one change, not two."""
    def keyed(edges: list[dict], tok: dict[str, int]) -> dict[tuple, list[dict]]:
        out: dict[tuple, list[dict]] = {}
        for e in edges:
            out.setdefault((e["from"], e["to"], e["channel"], tok.get(e["barrier"])), []).append(e)
        return out

    ka, kb = keyed(ma["edges"], tok_a), keyed(mb["edges"], tok_b)
    out = []
    for key in list(ka) + [k for k in kb if k not in ka]:
        xs, ys = list(ka.get(key, [])), list(kb.get(key, []))
        for x in list(xs):
            y = next((y for y in ys if y["direction"] == x["direction"]), None)
            if y is not None:
                xs.remove(x)
                ys.remove(y)
        for x, y in zip(xs, ys):
            out.append(_change("edge.direction_changed",
                               f"edge {x['from']} -> {x['to']} on {y['barrier_identity']}: {x['direction']} -> {y['direction']}",
                               barrier=y["barrier_identity"], lines_a=x["lines"], lines_b=y["lines"],
                               a=x["direction"], b=y["direction"]))
        for e in xs[len(ys):]:
            out.append(_change("edge.removed", f"{e['direction']} edge {e['from']} -> {e['to']} on {e['barrier_identity']} removed",
                               barrier=e["barrier_identity"], lines_a=e["lines"]))
        for e in ys[len(xs):]:
            out.append(_change("edge.added", f"{e['direction']} edge {e['from']} -> {e['to']} on {e['barrier_identity']} added",
                               barrier=e["barrier_identity"], lines_b=e["lines"]))
    return out


def _diff_partitions(ma: dict, mb: dict) -> list[dict]:
    ka = {p["key"]: p for p in ma["partitions"]}
    kb = {p["key"]: p for p in mb["partitions"]}
    out = []
    for key, p in ka.items():
        if key not in kb:
            out.append(_change("partition.removed", f"partition {key} removed", lines_a=p["lines"]))
        elif kb[key]["warps"] != p["warps"]:
            out.append(_change("partition.warps_changed", f"partition {key}: warps {p['warps']} -> {kb[key]['warps']}",
                               lines_a=p["lines"], lines_b=kb[key]["lines"], a=p["warps"], b=kb[key]["warps"]))
    for key, p in kb.items():
        if key not in ka:
            out.append(_change("partition.added", f"partition {key} added", lines_b=p["lines"]))
    return out


def _diff_buffers(ma: dict, mb: dict) -> list[dict]:
    def score(x: dict, y: dict) -> float:
        if (x["space"], x["shape"]) != (y["space"], y["shape"]):
            return -1.0
        return 10.0 * (x["accesses"] == y["accesses"]) + (x["depth"] == y["depth"])

    pairs, gone, new = _greedy(ma["buffers"], mb["buffers"], score)
    out = []
    for x, y in pairs:
        if (x["space"], x["shape"]) != (y["space"], y["shape"]):
            gone.append(x)
            new.append(y)
            continue
        name = f"{x['space']} buffer {x['shape']}"
        where = dict(op="ttg.local_alloc" if x["space"] == "smem" else None, lines_a=[x["line"]], lines_b=[y["line"]])
        if x["depth"] != y["depth"]:
            out.append(_change("buffer.depth_changed", f"{name}: depth {x['depth']} -> {y['depth']}", a=x["depth"], b=y["depth"], **where))
        alias = lambda g: {"packed": g["packed"], "merged": g["merged"], "shared_id": g["shared_id"], "members": g["members"]}  # noqa: E731
        if alias(x) != alias(y):
            out.append(_change("buffer.aliasing_changed", f"{name}: aliasing {alias(x)} -> {alias(y)}", a=alias(x), b=alias(y), **where))
    for x in gone:
        out.append(_change("buffer.removed", f"{x['space']} buffer {x['shape']} removed", lines_a=[x["line"]]))
    for y in new:
        out.append(_change("buffer.added", f"{y['space']} buffer {y['shape']} added", lines_b=[y["line"]]))
    return out


def _diff_findings(ma: dict, mb: dict) -> tuple[list[dict], list[dict]]:
    """Findings of B not in A (appeared) and of A not in B (disappeared), by fingerprint and
    multiplicity."""
    ca = Counter(f["fingerprint"] for f in ma["findings"])
    cb = Counter(f["fingerprint"] for f in mb["findings"])
    appeared, disappeared = [], []
    seen: Counter[str] = Counter()
    for f in mb["findings"]:
        seen[f["fingerprint"]] += 1
        if seen[f["fingerprint"]] > ca[f["fingerprint"]]:
            appeared.append(f)
    seen.clear()
    for f in ma["findings"]:
        seen[f["fingerprint"]] += 1
        if seen[f["fingerprint"]] > cb[f["fingerprint"]]:
            disappeared.append(f)
    return appeared, disappeared


def diff_models(ma: dict, mb: dict) -> dict[str, Any]:
    """Every change from A to B: `changes` (structure, each citing its op and lines on both
    sides) and the findings that appeared or disappeared."""
    changes = _diff_partitions(ma, mb)
    bchanges, tok_a, tok_b = _diff_barriers(ma, mb)
    changes += bchanges
    changes += _diff_edges(ma, mb, tok_a, tok_b)
    changes += _diff_buffers(ma, mb)
    appeared, disappeared = _diff_findings(ma, mb)
    return {"changes": changes, "findings_appeared": appeared, "findings_disappeared": disappeared,
            "unchanged": not (changes or appeared or disappeared)}
