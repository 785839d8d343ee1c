"""RMSNorm along the rows: y = x / sqrt(mean(x^2) + eps) * g.

Tensors: x [ROWS, COLS], g [COLS] (the weight), y [ROWS, COLS] (returned, x's dtype). Args: ROWS
(any; the last row tile is masked), COLS (a whole row sits in SBUF). g is loaded once,
broadcast across the 128 partitions by a DMA with partition stride 0. Per 128 rows, on the scalar
engine: the sum of squares (an activation's reduce), 1/sqrt(mean + eps) on a (128, 1) tile, the
scaling (a per-partition scale); on the vector engine the weight product; intermediates in x's
dtype. Nothing the scalar engine needs comes from the vector engine, so the scalar engine runs
ahead (the engines run their instructions in program order).
"""
import nctlm.nki as nki
import nctlm.nki.isa as nisa
import nctlm.nki.language as nl


@nki.jit
def rmsnorm(x, g, eps=1e-6):
    ROWS, COLS = x.shape
    y = nl.ndarray((ROWS, COLS), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(COLS)[None, :]
    g_all = nl.load(g.reshape((1, COLS))).broadcast_to((128, COLS))
    eps_all = nl.full((128, 1), eps, dtype=nl.float32)
    for i in nl.affine_range((ROWS + 127) // 128):
        inside = i * 128 + ip < ROWS
        xt = nl.load(x[i * 128 + ip, jf], mask=inside)
        sum_sq = nl.ndarray((128, 1), dtype=nl.float32)
        nisa.activation(op=nl.square, data=xt, reduce_op=nl.add, reduce_res=sum_sq, mask=inside)
        rstd = nisa.activation(op=nl.rsqrt, data=sum_sq, scale=1.0 / COLS, bias=eps_all, mask=inside)
        xn = nisa.activation(op=nl.copy, data=xt, scale=rstd, mask=inside)
        nl.store(y[i * 128 + ip, jf], value=nl.multiply(xn, g_all, dtype=x.dtype, mask=inside), mask=inside)
    return y


def reference(x, g, eps=1e-6):
    import numpy as np
    x = x.astype(np.float64)
    return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps) * g
