"""LayerNorm along the rows: y = (x - mean(x)) / sqrt(var(x) + eps) * gamma + beta.

Tensors: x [ROWS, COLS], gamma, beta [COLS], y [ROWS, COLS] (returned, x's dtype). Args: ROWS
(any; the last row tile is masked), COLS (a whole row sits in SBUF). gamma and beta are loaded
once, broadcast across the partitions by DMAs with partition stride 0. Per 128 rows, on the scalar
engine: the row sum and the sum of squared deviations (two activation reduces), the (128, 1)
statistics, the normalization (x - mean) x rstd (per-partition scale and bias); on the vector
engine the affine part, two tensor_tensor ops; intermediates in x's dtype. Nothing the scalar
engine needs comes from the vector engine, so the scalar engine runs ahead.
"""
import nctlm.nki as nki
import nctlm.nki.isa as nisa
import nctlm.nki.language as nl


@nki.jit
def layernorm(x, gamma, beta, eps=1e-5):
    ROWS, COLS = x.shape
    y = nl.ndarray((ROWS, COLS), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(COLS)[None, :]
    g_all = nl.load(gamma.reshape((1, COLS))).broadcast_to((128, COLS))
    b_all = nl.load(beta.reshape((1, COLS))).broadcast_to((128, COLS))
    eps_all = nl.full((128, 1), eps, dtype=nl.float32)
    for i in nl.affine_range((ROWS + 127) // 128):
        inside = i * 128 + ip < ROWS
        xt = nl.load(x[i * 128 + ip, jf], mask=inside)
        total = nl.ndarray((128, 1), dtype=nl.float32)
        nisa.activation(op=nl.copy, data=xt, reduce_op=nl.add, reduce_res=total, mask=inside)
        neg_mean = nisa.activation(op=nl.copy, data=total, scale=-1.0 / COLS, mask=inside)
        sq_dev = nl.ndarray((128, 1), dtype=nl.float32)
        nisa.activation(op=nl.square, data=xt, bias=neg_mean, reduce_op=nl.add, reduce_res=sq_dev, mask=inside)
        rstd = nisa.activation(op=nl.rsqrt, data=sq_dev, scale=1.0 / COLS, bias=eps_all, mask=inside)
        shift = nisa.activation(op=nl.copy, data=neg_mean, scale=rstd, mask=inside)
        xn = nisa.activation(op=nl.copy, data=xt, scale=rstd, bias=shift, mask=inside)
        scaled = nl.multiply(xn, g_all, mask=inside)
        nl.store(y[i * 128 + ip, jf], value=nl.add(scaled, b_all, dtype=x.dtype, mask=inside), mask=inside)
    return y


def reference(x, gamma, beta, eps=1e-5):
    import numpy as np
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta
