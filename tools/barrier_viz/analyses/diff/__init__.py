"""`barrier-viz diff` and the audit cache's model of one unit: the synchronization named by what
it guards rather than by SSA name or line (`sync_model`), and what changed between two such
models (`sync_diff`).

The top of `analyses/`: may import every package below it (`model`, `program`, `symbolic`,
`sim`, `cluster`, `launch`, `structure`, `rules`, `verdicts`), plus `ir/`, `facts/`,
`analysis.py`, `schemas.py`, `render/words.py`, `limits.py`, `errors.py`. `sync_model` also
reads the buffers and phases documents through the builders of those commands
(`commands.buffers_cmd.facts_document`, `commands.phases_cmd.phases_doc_from_report`,
function-local), so that a diff compares exactly what the sections print; only
`commands.diff_cmd` and `audit/` import `diff`.
"""
