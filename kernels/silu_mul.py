"""SiLU-gated product (the MLP of Llama-style models): out = silu(gate) * up.

Tensors: gate, up [ROWS, COLS] (the same dtype), out [ROWS, COLS] (returned). Args: ROWS, COLS
(any sizes; the last row and column tiles are masked); TC (columns per tile, default 2048).
silu runs on the scalar engine, the product on the vector engine, so the two overlap.
"""
import nctlm.nki as nki
import nctlm.nki.language as nl


@nki.jit
def silu_mul(gate, up, TC=2048):
    ROWS, COLS = gate.shape
    out = nl.ndarray((ROWS, COLS), dtype=gate.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(TC)[None, :]
    for i in nl.affine_range((ROWS + 127) // 128):
        for j in nl.affine_range((COLS + TC - 1) // TC):
            rows, cols = i * 128 + ip, j * TC + jf
            inside = (rows < ROWS) & (cols < COLS)
            g = nl.load(gate[rows, cols], mask=inside)
            u = nl.load(up[rows, cols], mask=inside)
            s = nl.silu(g, mask=inside)
            nl.store(out[rows, cols], value=nl.multiply(s, u, mask=inside), mask=inside)
    return out


def reference(gate, up, TC=2048):
    import numpy as np
    g = gate.astype(np.float64)
    return g / (1.0 + np.exp(-g)) * up
