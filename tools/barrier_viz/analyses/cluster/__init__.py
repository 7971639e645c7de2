"""The CTA-cluster extension of the interpreter.

Owns: running the CTAs of a cluster together (`sim`: the ops through which CTAs reach each
other, the CGA form's barrier copies), races across CTAs (`races`), remote accesses into a CTA
that may have exited (`remote_exit`), and the adapter that plugs them into the interpreter
(`extension`, installed by `analyses/__init__.py`).

May import: `sim` and the packages below it (`model`, `program`, `symbolic`), and ir/, facts/,
analysis.py, render/words.py, limits.py, errors.py. Nothing in `sim` imports this package.
"""
