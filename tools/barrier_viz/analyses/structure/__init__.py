"""The report's structural sections, as facts and documents: the barrier dependency graph
(section 2: `graph`, its parts in `graph_model`, what an edge protects in `graph_data`, the JSON
document every rendering reads in `graph_doc`), the index and phase analysis (section 3:
`phases`, results in `phase_model`), the coverage tables (`coverage/`, one module per table and
concept) and the CTA cluster as the partition summary and the graph show it (`cluster_info`).

The documents live here, below `render/` and `commands/`, so that renderers and commands both
import them and never each other.

May import: `model`, `program`, `symbolic`, `sim`, `cluster`, `launch` (a fix suggestion asks
`launch.run_condition` when an op runs), plus `ir/`, `facts/`, `analysis.py`, `schemas.py`,
`render/words.py`, `limits.py`, `errors.py`. Not `rules`, `verdicts`, `diff`, `render/` (but
words) or `commands/`.
"""
