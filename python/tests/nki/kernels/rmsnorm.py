"""RMSNorm over rows, written against nki.language (tutorial style: arange indices, masks for a
ragged last tile, the weight broadcast across partitions)."""
import math

import nctlm.nki as nki
import nctlm.nki.language as nl


@nki.jit
def rmsnorm(a, g, eps=1e-6):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    iw = nl.arange(1)[:, None]
    jf = nl.arange(cols)[None, :]
    g_row = nl.load(g.reshape((1, cols))[iw, jf])
    g_all = g_row.broadcast_to((128, cols))
    for i in nl.affine_range(math.ceil(rows / 128)):
        at = nl.load(a[i * 128 + ip, jf], mask=(i * 128 + ip < rows))
        sq = nl.square(at, mask=(i * 128 + ip < rows))
        ms = nl.sum(sq, axis=[1], mask=(i * 128 + ip < rows)) / cols
        inv = nl.rsqrt(ms + eps, mask=(i * 128 + ip < rows))
        y = nl.multiply(at, inv, mask=(i * 128 + ip < rows))
        y = nl.multiply(y, g_all, mask=(i * 128 + ip < rows))
        nl.store(out[i * 128 + ip, jf], value=y, mask=(i * 128 + ip < rows))
    return out


def reference(a, g, eps=1e-6):
    import numpy as np
    return a / np.sqrt(np.mean(a * a, axis=1, keepdims=True) + eps) * g


def wrong_reference(a, g, eps=1e-6):
    import numpy as np
    return a / np.sqrt(np.mean(a * a, axis=1, keepdims=True) + eps)
