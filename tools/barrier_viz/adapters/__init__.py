"""Input adapters: where Triton engineers already have their kernels, turned into input units.

* `tritonparse_trace` — tritonparse's NDJSON traces (optionally gzipped): one unit per
  compilation (its TTGIR), and the launches recorded against it (grid, scalar arguments).
* `triton_cache` — `$TRITON_CACHE_DIR` / `$TRITON_DUMP_DIR` looked up by kernel name, with the
  cache's `.json` metadata (num_warps, num_ctas, cluster dims, target) for what the IR lacks.
* `listener` and `pytest_plugin` — every compile of a test run checked through Triton's
  compilation listener (chained to one already installed).

They only produce units (`inputs.Unit`) or call the public API (`barrier_viz.api`): no analysis
lives here. Triton and tritonparse are never imported by the readers; the listener imports
nothing of Triton either (it receives what Triton hands it).
"""
