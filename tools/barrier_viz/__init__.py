"""barrier-viz: audit mbarrier synchronization in warp-specialized Triton IR.

The Python API (`barrier_viz.api`): `check_ttgir(text, ...)` and `check_compiled(kernel)`.
"""

__version__ = "0.1.0"


def check_ttgir(text, **kwargs):
    """Check TTGIR text; see barrier_viz.api.check_ttgir."""
    from .api import check_ttgir as run

    return run(text, **kwargs)


def check_compiled(kernel, **kwargs):
    """Check a Triton CompiledKernel; see barrier_viz.api.check_compiled."""
    from .api import check_compiled as run

    return run(kernel, **kwargs)
