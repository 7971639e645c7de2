"""Choosing a launch reuses a trial run that differs from an earlier one only in integer
arguments no operation reads (analyses/sim/trials.py), and chooses exactly what it chose
running every trial: the same parameters, the same steps charged to the budget.

The kernel is the shape AutoWS compiles: a loop bound derived from `%K` (K / 64 tiles), plus
integer arguments nothing reads (a TMA descriptor's shape or stride passed along), one of them
captured into the partitions and unread there too.
"""

from __future__ import annotations

import barrier_viz.analyses.sim.schedule as schedule
from barrier_viz.analyses.sim.budget import WORK, Budget
from barrier_viz.analyses.sim.machine import Params
from barrier_viz.analyses.sim.trials import Trials, unread_int_args
from barrier_viz.ir.parse import parse_ir

from test_machine import BAR, kernel, one_barrier

TILED = kernel(
    "%K: i32, %unused: i32, %cap: i32",
    "%bar, %n, %cap",
    one_barrier() + "    %c1_i32 = arith.constant 1 : i32\n    %c64_i32 = arith.constant 64 : i32\n"
                    "    %n = arith.divsi %K, %c64_i32 : i32\n",
    "      scf.for %i = %c0_i32 to %n step %c1_i32 : i32 {\n"
    "        %ph = arith.andi %i, %c1_i32 : i32\n"
    f"        ttng.wait_barrier %bar, %ph : {BAR}\n"
    "      }",
    f"%b1: {BAR}, %n1: i32, %cap1: i32",
    "      %z = arith.constant 0 : i32\n      %one = arith.constant 1 : i32\n"
    "      scf.for %j = %z to %n1 step %one : i32 {\n"
    f"        ttng.arrive_barrier %b1, 1 : {BAR}\n"
    "      }",
    f"{BAR}, i32, i32")


def _fn():
    return next(op for op in parse_ir(TILED).walk() if op.name == "tt.func")


def test_unread_arguments_are_the_ones_no_operation_reads_even_through_a_capture() -> None:
    # %K bounds the loops (read); %unused is never an operand; %cap is captured into partition0,
    # whose block argument %cap1 nothing reads.
    assert unread_int_args(_fn()) == frozenset({1, 2})


def _choose(monkeypatch, reuse: bool) -> tuple[Params, int, int]:
    """choose_params on TILED: the parameters chosen, the steps charged, the runs made."""
    made = []
    real = schedule.run

    def counted(*args, **kwargs):
        made.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(schedule, "run", counted)
    if not reuse:
        monkeypatch.setattr(Trials, "_replayable", lambda self, cost: False)
    fn = _fn()
    before = WORK.ops
    params = schedule.choose_params(fn, Params(max_steps=60_000), min_trips=2, deadline=Budget().share(0.5))
    return params, WORK.ops - before, len(made)


def test_a_trial_differing_only_in_unread_arguments_is_not_run_again(monkeypatch) -> None:
    with monkeypatch.context() as m:
        every = _choose(m, reuse=False)
    with monkeypatch.context() as m:
        reused = _choose(m, reuse=True)
    # Same choice, same budget spent (a later run sees the budget it saw before) ...
    assert reused[0] == every[0]
    assert reused[1] == every[1]
    # ... with fewer runs: the trial that makes only %unused and %cap small is the run at the
    # common value again.
    assert reused[2] < every[2]


def test_a_trial_is_run_again_when_the_budget_could_have_cut_it() -> None:
    fn = _fn()
    calls = []

    def fake(function, params, policy, stop_trips=None, deadline=None):
        calls.append(params)
        WORK.ops += 100
        return "result"

    budget = Budget(amount=150)
    trials = Trials(fn, 2, budget.deadline, fake)
    assert trials.run(Params(int_args=256)) == "result"
    # Its 100 steps again would end past the budget's 150: a run then may stop early, so it runs.
    trials.run(Params(int_args=256, arg_values=((1, 16),)))
    assert len(calls) == 2
