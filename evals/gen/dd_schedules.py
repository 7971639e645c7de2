"""The data-dependent kernels' launch configurations and schedules (plain data, so the
development machine reads them without triton; dd_kernels.py re-exports them)."""

from __future__ import annotations

PROBES: dict[str, dict] = {
    "dd-jagged_norm": {"kernel": "jagged_norm", "constexprs": {"BR": 64, "D": 64, "STAGES": 3}, "warps": 4},
    "dd-moe_dw": {"kernel": "moe_dw", "constexprs": {"BM": 128, "BN": 128, "BK": 64, "STAGES": 3},
                  "size": {"H": 256, "N": 128}, "warps": 4},
}

# Launch schedules per kernel: every mutant runs once under each, each in a fresh process.
# jagged_norm: `lens` are segment lengths in rows, `nprog` the persistent grid (program p gets
# segments p, p + nprog, ...). moe_dw: `sizes` are group sizes in rows (multiples of BK),
# `nprog` the grid, `order` how the host sorts the tile list ("size": longest group first, as an
# LPT scheduler does; "expert": expert order, keeping empty experts first / middle / last).
SCHEDULES: dict[str, dict[str, dict]] = {
    "jagged_norm": {
        # two segments per program, lengths multiples of the ring depth (3 blocks of 64 rows)
        "even": {"lens": [192, 384, 192, 576, 384, 192, 192, 384], "nprog": 4},
        # four segments per program; empty segments first (p0), in the middle (p1), last (p0, p1)
        "empty": {"lens": [0, 192, 384, 0, 192, 384, 0, 0], "nprog": 2},
        # three segments per program (odd), no empty segment
        "odd": {"lens": [192] * 6 + [384] * 6, "nprog": 4},
        # lengths that are not multiples of a block or of the ring depth, one empty segment,
        # 4 / 3 / 3 segments per program
        "ragged": {"lens": [1, 65, 130, 0, 200, 777, 64, 129, 250, 3], "nprog": 3},
    },
    "moe_dw": {
        # 4 experts x 2 tiles, 2 tiles per program, K blocks multiples of the ring depth
        "even": {"sizes": [384, 192, 576, 384], "nprog": 4, "order": "expert"},
        # empty experts first, in the middle and last; 12 tiles, 4 per program
        "empty": {"sizes": [0, 384, 0, 192, 384, 0], "nprog": 3, "order": "expert"},
        # 3 tiles per program (odd)
        "odd": {"sizes": [192, 384, 576], "nprog": 2, "order": "expert"},
        # K blocks 1, 5, 0, 2, 7 (not multiples of 3), longest first, 4 / 3 / 3 tiles per program
        "ragged": {"sizes": [64, 320, 0, 128, 448], "nprog": 3, "order": "size"},
    },
}
