"""Cluster launch control: try-cancel requests, and reading their 16-byte answers.

The answer is a new tile for the first `CLC_TILES - 1` requests of a CTA, then "no more tiles",
so a CLC persistent loop ends as it does when the grid is used up. The answer's bytes complete on
the request's barrier at issue, or late (`Params.late_clc`: after the asker's next poll).
"""

from __future__ import annotations

from ....ir.model import Operation
from ..registry import handles
from ..state import Ref, Step
from .common import need_slot

CLC_TRY_OPS = frozenset({"ttng.async_clc_try_cancel", "ttng.clc_try_cancel"})

CLC_TILES = 8  # tiles one CTA takes through cluster launch control before the answer is "no more tiles"


@handles("ttng.async_clc_try_cancel", "ttng.clc_try_cancel")
def _h_clc_try_cancel(m, op: Operation, env, who, it):
    """`async_clc_try_cancel %bar, %response` (TLX) or `clc_try_cancel %response, %bar`
    (Gluon/upstream): asks the hardware for a cluster not launched yet;
    the 16-byte answer lands in `%response` and completes 16 transaction bytes on `%bar`
    (complete_tx, like a TMA copy). The answer is a new tile for the first CLC_TILES - 1
    requests, then "no more tiles" (-1), so a CLC persistent loop ends after a bounded number
    of tiles, as it does when the grid is used up."""
    pos = op.positional
    if len(pos) < 2:
        return
    bar, response = (pos[1], pos[0]) if op.name == "ttng.clc_try_cancel" else (pos[0], pos[1])
    slot = need_slot(m, op, env, bar, user=who)
    res = env.get(response)
    cta = m.threads[who].cta
    cga_tx = m.ext.cga_tx(m, op, cta) if m.cga is not None else None
    if slot is None and cga_tx and isinstance(env.get(bar), Ref):
        slot = m.slots.get(env.get(bar).in_cta(min(cga_tx)).key)
    if slot is None or not m.ext.issues(m, op, cta) or cga_tx == {}:
        return
    yield Step(op)
    m.clc_issued[cta] = m.clc_issued.get(cta, 0) + 1
    n = m.clc_issued[cta]
    answer = m.params.num_programs * n + m.params.program_id if n < CLC_TILES else -1
    agent = m.agent(who, op)
    # A multicast request answers every CTA of the cluster: a response and 16 bytes each.
    for k in (sorted(cga_tx) if cga_tx else m.ext.targets(m, op, cta)):
        if isinstance(res, Ref):
            m.clc_answers[res.in_cta(k).key] = answer
            m.access(op, res.in_cta(k), "write", agent, it)
        target = m.slots.get(slot.ref.in_cta(k).key)
        if target is not None and m.params.late_clc:
            # The response lands late: after the asking partition's next poll of this barrier,
            # or once no partition can go on (`Machine.land_late`). The partition that asks
            # usually reads the answer too, so landing at issue would hide every read that
            # polls before the answer came (a flipped consumer wait on a fresh barrier). The
            # answer itself is known at issue, only for the run's control flow.
            m.late.append((slot.ref.key, target, op.line, who, agent, it))
        elif target is not None:
            m.complete_tx(target, 16, op.line, who, agent, it=it)


@handles("ttng.clc_query_cancel")
def _h_clc_query(m, op: Operation, env, who, it):
    """`clc_query_cancel %response` -> (x, y, z) of the cancelled cluster's first CTA, or -1."""
    res = env.get(op.operands[0]) if op.operands else None
    answer = m.clc_answers.get(res.key) if isinstance(res, Ref) else None
    values = (None,) * 3 if answer is None else ((answer, 0, 0) if answer >= 0 else (-1, -1, -1))
    for r, v in zip(op.results, values):
        env[r] = v
    m.access(op, res, "read", who, it)


@handles("ttng.clc_load_result")
def _h_clc_load(m, op: Operation, env, who, it):
    """`clc_load_result %response -> i128`: the answer, kept as the tile it names (-1: none)."""
    res = env.get(op.operands[0]) if op.operands else None
    if op.results:
        env[op.results[0]] = m.clc_answers.get(res.key) if isinstance(res, Ref) else None
    m.access(op, res, "read", who, it)


@handles("ttng.clc_is_canceled")
def _h_clc_is_canceled(m, op: Operation, env, who, it):
    answer = env.get(op.operands[0]) if op.operands else None
    if op.results:
        env[op.results[0]] = None if answer is None else int(answer >= 0)


@handles("ttng.clc_get_program_id")
def _h_clc_program_id(m, op: Operation, env, who, it):
    """`clc_get_program_id %answer, x|y|z`: the cancelled cluster's first CTA (tiles are
    numbered along x here)."""
    answer = env.get(op.operands[0]) if op.operands else None
    dim = next((w for w in list(op.literals) + list(getattr(op, "keywords", [])) if w in ("x", "y", "z")), "x")
    if op.results:
        env[op.results[0]] = None if answer is None else (answer if dim == "x" else 0)
