"""Program-order facts the rules, the structure sections and the interpreter share.

`order.py`: loops around an op, what runs before and after it in one iteration, whether a value
changes per iteration. `operands.py`: what an operand names (its allocation, a barrier slot, a
label). `predicates.py`: which iterations a predicated op runs in. `loaded.py`: values loaded
from memory the kernel never writes, as inputs.

May import: model (and ir/, facts/, analysis.py, render/words.py, limits.py, errors.py); nothing
that runs the kernel and no rule.
"""
