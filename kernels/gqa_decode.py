"""Grouped-query attention, one decode step (flash decoding): o = softmax(q k^T * scale) v for each
sequence of the batch and each key/value head, over its KV cache.

Tensors: q_t [B * KVH, D, G] (per sequence b and KV head, the G query heads that share it,
transposed: D on the partitions), k_t [B * KVH, D, C] (the cache's keys, transposed), v
[B * KVH, C, D], o [B * KVH, G, D] (returned). Args: PAIRS (B x KVH, a multiple of 128 // G), G
(the group: query heads per KV head, dividing 128, >= 2), C (the context, a multiple of 512), D
(the head dimension, <= 128).
softmax_scale defaults to D ** -0.5.

A pair's G query rows would leave most of the 128 partitions idle, so P = 128 // G pairs share
the partitions (rows = P x G; pair p's queries on rows p * G ...): per block of 512 keys, one
matmul per pair writes its scores into its rows of one PSUM bank, and from there every vector and
scalar instruction covers all P pairs at once. The online softmax keeps, per row, the negated
running max nm, the running sum l and the output acc rescaled by alpha = exp(m_old - m_new), as in
flash_attention; p is transposed in four 128-key chunks, and p v accumulates per pair in its rows
of a PSUM tile. The testbench's GQA kernel (testbenches/gqa/gqa_kernel.h) packs the context's
chunks of one head instead (so that it runs at batch 1) and merges them at the end.
"""
import nctlm.nki as nki
import nctlm.nki.isa as nisa
import nctlm.nki.language as nl

NEG_INF = -3.0e38
KB = 512  # keys per block: one PSUM bank of fp32 scores per row


@nki.jit
def gqa_decode(q_t, k_t, v, softmax_scale=None):
    PAIRS, D, G = q_t.shape
    C = k_t.shape[2]
    P = 128 // G  # pairs per pass
    ROWS = P * G
    scale = D ** -0.5 if softmax_scale is None else softmax_scale
    o = nl.ndarray((PAIRS, G, D), dtype=q_t.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(PAIRS // P):
        q = nl.ndarray((P, nl.par_dim(D), G), dtype=q_t.dtype)
        for p in nl.affine_range(P):
            q[p] = nl.load(q_t[t * P + p])
        nm = nl.full((ROWS, 1), -NEG_INF, dtype=nl.float32)
        l = nl.zeros((ROWS, 1), dtype=nl.float32)
        acc = nl.zeros((ROWS, D), dtype=nl.float32)
        for j in nl.sequential_range(C // KB):
            s = nl.ndarray((ROWS, KB), dtype=nl.float32, buffer=nl.psum)
            vt = nl.ndarray((P * (KB // 128), nl.par_dim(128), D), dtype=v.dtype)
            for p in nl.affine_range(P):
                k = nl.load(k_t[t * P + p, :, j * KB:(j + 1) * KB])
                s[p * G:(p + 1) * G, :] = nisa.nc_matmul(q[p], k)
                for c in nl.affine_range(KB // 128):
                    vt[p * (KB // 128) + c] = nl.load(v[t * P + p, j * KB + c * 128:j * KB + (c + 1) * 128, :])
            nm_new = nisa.tensor_scalar(nisa.tensor_reduce(nl.max, s, axis=[1], negate=True), nl.multiply, scale,
                                        op1=nl.minimum, operand1=nm)
            alpha = nisa.activation(op=nl.exp, data=nm, scale=-1.0, bias=nm_new)
            row_sum = nl.ndarray((ROWS, 1), dtype=nl.float32)
            e = nisa.activation(op=nl.exp, data=s, scale=scale, bias=nm_new, reduce_op=nl.add, reduce_res=row_sum,
                                dtype=v.dtype)
            l[...] = nisa.activation(op=nl.copy, data=l, scale=alpha, bias=row_sum)
            nm[...] = nisa.tensor_copy(nm_new, engine=nisa.engine.scalar)
            e_t = nl.ndarray((KB // 128, nl.par_dim(128), ROWS), dtype=v.dtype)
            for c in nl.affine_range(KB // 128):
                e_t[c] = nl.copy(nisa.nc_transpose(e[:, c * 128:(c + 1) * 128]))
            pv = nl.zeros((ROWS, D), dtype=nl.float32, buffer=nl.psum)
            for p in nl.affine_range(P):
                for c in nl.affine_range(KB // 128):
                    pv[p * G:(p + 1) * G, :] += nisa.nc_matmul(e_t[c][:, p * G:(p + 1) * G],
                                                               vt[p * (KB // 128) + c])
            acc[...] = nisa.activation(op=nl.copy, data=acc, scale=alpha)
            acc[...] = nl.add(acc, pv)
        out = nl.divide(acc, l, dtype=o.dtype)
        for p in nl.affine_range(P):
            nl.store(o[t * P + p], value=out[p * G:(p + 1) * G, :])
    return o


def reference(q_t, k_t, v, softmax_scale=None):
    import numpy as np
    PAIRS, D, G = q_t.shape
    scale = D ** -0.5 if softmax_scale is None else softmax_scale
    out = np.empty((PAIRS, G, D))
    for i in range(PAIRS):
        s = q_t[i].T.astype(np.float64) @ k_t[i].astype(np.float64) * scale
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out[i] = p / p.sum(axis=1, keepdims=True) @ v[i]
    return out
