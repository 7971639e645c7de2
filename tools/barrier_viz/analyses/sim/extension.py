"""The one interface through which an extension plugs into the interpreter.

The core (`machine`, the op families of `ops/`, `schedule`, `deadlock`, `explore`) runs the CTAs
of a launch, each with its own partitions, allocations and barriers. What happens *between* CTAs
(a remote arrive, a multicast load, a paired 2-CTA MMA, the cluster-wide CGA form, a remote
access into a CTA that may have exited) is not the core's: it asks the installed `Extension`,
through the hooks below, and never imports the package that implements them. The CTA-cluster
model (`analyses.cluster.extension`) is that extension; without it the defaults here are one
CTA's behaviour, and a kernel launched as a cluster is not simulated (a stated limit).

The hooks, by when the core calls them:
* at installation: `handlers()`, the ops the extension runs (added to `registry.HANDLERS`);
* at machine construction and start: `cga_for`, `unsupported`;
* at an op whose effect may cross CTAs: `program_id`, `issues`, `targets`, `deliver_tma`, and,
  in the CGA form only (`Machine.cga` set), the `cga_*` questions;
* at every issue and arrival of a race-tracking cluster run (`Machine.remote` set):
  `note_issue`, `note` (the remote effects the exit check reads at the end of the run);
* when a run ends: `unequal_work` (a stuck cluster whose CTAs got unequal work is no verdict),
  `pace_excuse`, `approximate_races`, `crosses` (which races of a cluster run are verdicts).

`install(extension)` is called once, by `barrier_viz.analyses` (its `__init__`): every path that
runs the interpreter imports that package first, so the extension is in place before any run,
whichever module an entry point imported first.
"""

from __future__ import annotations

from typing import Any

from .registry import Handler, register
from .state import SimulationError


class Extension:
    """The hook points the core calls. These defaults are one CTA's behaviour."""

    def handlers(self) -> dict[str, Handler]:
        """Op name -> handler, for the ops only the extension runs."""
        return {}

    # -- machine construction and start ----------------------------------------------------
    def cga_for(self, function) -> Any:
        """The CGA (cluster-wide form) model of `function`, for a module in that form."""
        return None

    def unsupported(self, cluster, function) -> str:
        """Why the kernel is not run ("" when it is)."""
        if cluster.size > 1:
            return f"a cluster of {cluster.size} CTAs (the interpreter's cluster extension is not installed)"
        return ""

    # -- ops whose effect may cross CTAs -----------------------------------------------------
    def program_id(self, m, value: int, axis: int, cta: int) -> int:
        """`tt.get_program_id` along `axis` in CTA `cta`, given the launch's `value`."""
        return value

    def issues(self, m, op, cta: int) -> bool:
        """Does CTA `cta` issue `op`?"""
        return True

    def targets(self, m, op, cta: int) -> list[int]:
        """The CTAs whose barriers `op`, issued by CTA `cta`, arrives on or answers."""
        return [cta]

    def deliver_tma(self, m, op, env, who: int, it, slot, dst, nbytes: int, agent) -> None:
        """A TMA load's box and bytes: written to `dst`, completed on `slot`."""
        m.access(op, dst, "write", agent, it)
        m.complete_tx(slot, nbytes, op.line, who, agent, it=it)

    # -- the CGA form (asked only when `cga_for` gave a model) -----------------------------------
    def cga_init(self, m, op, cta: int, count: int) -> int | None:
        raise SimulationError("the CGA form is not modelled without the cluster extension")

    def cga_waits(self, m, op, cta: int) -> bool:
        raise SimulationError("the CGA form is not modelled without the cluster extension")

    def cga_arrival_home(self, m, op, cta: int) -> int:
        raise SimulationError("the CGA form is not modelled without the cluster extension")

    def cga_expect_bytes(self, m, op, declared: int) -> int:
        raise SimulationError("the CGA form is not modelled without the cluster extension")

    def cga_tx(self, m, op, cta: int) -> dict[int, int]:
        raise SimulationError("the CGA form is not modelled without the cluster extension")

    def cga_commit(self, m, op, cta: int, barrier_type: str | None = None) -> frozenset[int]:
        raise SimulationError("the CGA form is not modelled without the cluster extension")

    # -- remote effects of a race-tracking cluster run ---------------------------------------
    def note_issue(self, m, who: int, agent: int, op, stamp: int) -> None:
        """Thread `who` issued asynchronous `agent` at `op`, at clock `stamp`."""

    def note(self, m, target_cta: int, actor: int, line: int, slot=None) -> None:
        """`actor` (a thread, or an agent < 0) touched CTA `target_cta`'s shared memory at `line`."""

    # -- when a run ends ---------------------------------------------------------------------
    def unequal_work(self, m, blocked) -> str:
        """Why a stuck run is no verdict because its CTAs got unequal work ("" when it is one)."""
        return ""

    def pace_excuse(self, result) -> str:
        """Why what the run found is no verdict because only the CTAs' pace forbids its schedule."""
        return ""

    def approximate_races(self, result) -> dict[tuple[int, int], str]:
        """Races of the run (by pair of lines) placed only approximately, with why."""
        return {}

    def crosses(self, m, race) -> bool:
        """Does `race` involve two CTAs (its actors', or its memory's)?"""
        return False


_DEFAULT = Extension()
_installed: Extension = _DEFAULT


def install(extension: Extension) -> None:
    """Install `extension` (once; installing the same one again is a no-op) and register its
    handlers."""
    global _installed
    if _installed is not _DEFAULT and _installed is not extension:
        raise RuntimeError(f"an interpreter extension is already installed: {type(_installed).__name__}")
    for name, handler in extension.handlers().items():
        register(name, handler)
    _installed = extension


def installed() -> Extension:
    """The extension the core calls (the one-CTA defaults when none is installed)."""
    return _installed
