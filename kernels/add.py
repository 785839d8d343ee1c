"""Elementwise add: out = a + b.

Tensors: a, b [ROWS, COLS] (the same dtype), out [ROWS, COLS] (returned). Args: ROWS, COLS (the
shape: any sizes; the last row and column tiles are masked); TC (columns per tile, default 2048).
One step: 128 rows x TC columns of each input loaded, added on the vector engine, stored.
"""
import nctlm.nki as nki
import nctlm.nki.language as nl


@nki.jit
def add(a, b, TC=2048):
    ROWS, COLS = a.shape
    out = nl.ndarray((ROWS, COLS), dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(TC)[None, :]
    for i in nl.affine_range((ROWS + 127) // 128):
        for j in nl.affine_range((COLS + TC - 1) // TC):
            rows, cols = i * 128 + ip, j * TC + jf
            inside = (rows < ROWS) & (cols < COLS)
            at = nl.load(a[rows, cols], mask=inside)
            bt = nl.load(b[rows, cols], mask=inside)
            nl.store(out[rows, cols], value=nl.add(at, bt, mask=inside), mask=inside)
    return out


def reference(a, b, TC=2048):
    return a.astype("float64") + b
