"""barrier-viz: audit mbarrier synchronization in warp-specialized Triton IR."""

__version__ = "0.1.0"
