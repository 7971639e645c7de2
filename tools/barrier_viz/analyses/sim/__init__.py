"""The interpreter of warp-specialized kernels at barrier granularity, and what runs it.

Owns: the interpreter's state (`state`), its core (`machine`: one run, the dispatch loop), the
handler table (`registry`) and the op families that fill it (`ops/`), the extension interface
(`extension`), the schedules (`schedule`), happens-before race tracking (`hb`), deadlock
classification (`deadlock`), bounded exploration (`explore`) and the step budget (`budget`).

May import: `model`, `program`, `symbolic`, and ir/, facts/, analysis.py, render/words.py,
limits.py, errors.py. Never `cluster` (the CTA-cluster model plugs in through `extension`) nor
any package above it.
"""
