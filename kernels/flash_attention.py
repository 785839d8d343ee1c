"""Causal flash attention, forward (prefill): o = softmax(q k^T * scale + causal mask) v per head.

Tensors: q_t [H, D, S] and k_t [KVH, D, S] (queries and keys transposed, head dimension first, as
NKI's flash attention takes them: D is the contraction on the partitions), v [KVH, S, D],
o [H, S, D] (returned). Args: H (query heads, even; batch x heads for a batch), KVH (key/value
heads, dividing H: query head h reads key/value head h // (H // KVH), grouped-query attention),
S (the sequence, a multiple of 512), D (the head dimension, <= 128). softmax_scale defaults to
D ** -0.5.

Per pair of heads and 128-query tile i: key blocks of 512 in sequence, the i // 4 blocks entirely
before the tile, then the block holding the diagonal (the keys after the tile's last query are
computed and masked: at most 384 of them). Each block runs the online softmax with the negated
running max nm, running sum l and the output rescaled by alpha = exp(m_old - m_new):
s = q k^T on the tensor engine (one 128 x 512 matmul into a PSUM bank) plus the block's causal
mask (0 or -inf; all 0 before the diagonal) accumulated as identity^T x mask, its row max on the
vector engine, exp with the row sum on the scalar engine, p transposed in four 128-key chunks on
the tensor engine, p v accumulated over them in PSUM, then into the output tile. The two heads of
a pair go through each step one after the other, so that one head's step on one engine overlaps
the other's on the next (the engines run their instructions in program order).
"""
import nctlm.nki as nki
import nctlm.nki.isa as nisa
import nctlm.nki.language as nl

NEG_INF = -3.0e38
KB = 512  # keys per block: one PSUM bank of fp32 scores per query row
HEADS = 2  # heads interleaved step by step


def _blocks(q, k_t, v, kv, j, scale, nm, l, acc, ident, mask):
    """Keys j * KB ... j * KB + KB - 1 against each head's query tile: nm, l, acc updated in place."""
    heads = range(HEADS)
    k = [nl.load(k_t[kv[u], :, j * KB:(j + 1) * KB]) for u in heads]
    vt = [nl.ndarray((KB // 128, nl.par_dim(128), v.shape[2]), dtype=v.dtype) for u in heads]
    for u in heads:
        for c in nl.affine_range(KB // 128):
            vt[u][c] = nl.load(v[kv[u], j * KB + c * 128:j * KB + c * 128 + 128, :])
    s = []
    for u in heads:
        s.append(nisa.nc_matmul(q[u], k[u]))
        s[u] += nisa.nc_matmul(ident, mask)
    nm_new = [nisa.tensor_scalar(nisa.tensor_reduce(nl.max, s[u], axis=[1], negate=True), nl.multiply, scale,
                                 op1=nl.minimum, operand1=nm[u]) for u in heads]
    alpha = [nisa.activation(op=nl.exp, data=nm[u], scale=-1.0, bias=nm_new[u]) for u in heads]
    p = []
    for u in heads:
        row_sum = nl.ndarray((128, 1), dtype=nl.float32)
        p.append(nisa.activation(op=nl.exp, data=s[u], scale=scale, bias=nm_new[u], reduce_op=nl.add,
                                 reduce_res=row_sum, dtype=v.dtype))
        l[u][...] = nisa.activation(op=nl.copy, data=l[u], scale=alpha[u], bias=row_sum)
        nm[u][...] = nisa.tensor_copy(nm_new[u], engine=nisa.engine.scalar)
    p_t = []
    for u in heads:
        t = nl.ndarray((128, KB), dtype=v.dtype, buffer=nl.psum)
        for c in nl.affine_range(KB // 128):
            t[:, c * 128:(c + 1) * 128] = nisa.nc_transpose(p[u][:, c * 128:(c + 1) * 128])
        p_t.append(nl.copy(t))
    for u in heads:
        pv = nl.zeros((128, v.shape[2]), dtype=nl.float32, buffer=nl.psum)
        for c in nl.affine_range(KB // 128):
            pv += nisa.nc_matmul(p_t[u][:, c * 128:(c + 1) * 128], vt[u][c])
        acc[u][...] = nisa.activation(op=nl.copy, data=acc[u], scale=alpha[u])
        acc[u][...] = nl.add(acc[u], pv)


@nki.jit
def flash_attention(q_t, k_t, v, softmax_scale=None):
    H, D, S = q_t.shape
    KVH = k_t.shape[0]
    scale = D ** -0.5 if softmax_scale is None else softmax_scale
    o = nl.ndarray((H, S, D), dtype=q_t.dtype, buffer=nl.shared_hbm)
    # Causal masks: causal[r] for the diagonal block when the query tile is its r-th 128 rows
    # (0 where the key, the column, is at or before the query, the row r * 128 + partition, else
    # -inf); causal[KB // 128] all 0, for the blocks before the diagonal. ident: the identity.
    ip, jf = nl.arange(128)[:, None], nl.arange(KB)[None, :]
    causal = nl.ndarray((KB // 128 + 1, nl.par_dim(128), KB), dtype=q_t.dtype)
    zeros = nl.zeros((128, KB), dtype=q_t.dtype)
    for r in nl.static_range(KB // 128):
        causal[r] = nisa.affine_select(pred=(ip + r * 128 >= jf), on_true_tile=zeros, on_false_value=NEG_INF)
    causal[KB // 128] = 0.0
    ident = nl.equal(nisa.iota(ip - nl.arange(128)[None, :], dtype=nl.float32), 0.0, dtype=q_t.dtype)
    for hp in nl.affine_range(H // HEADS):
        heads = [hp * HEADS + u for u in range(HEADS)]
        kv = [h // (H // KVH) for h in heads]
        for i in nl.affine_range(S // 128):
            q = [nl.load(q_t[h, :, i * 128:(i + 1) * 128]) for h in heads]
            nm = [nl.full((128, 1), -NEG_INF, dtype=nl.float32) for h in heads]
            l = [nl.zeros((128, 1), dtype=nl.float32) for h in heads]
            acc = [nl.zeros((128, D), dtype=nl.float32) for h in heads]
            diagonal = i // (KB // 128)
            for j in nl.sequential_range(diagonal + 1):
                r = i % (KB // 128) + (j < diagonal) * (KB // 128 - i % (KB // 128))  # KB // 128 before it
                _blocks(q, k_t, v, kv, j, scale, nm, l, acc, ident, causal[r])
            for u, h in enumerate(heads):
                nl.store(o[h, i * 128:(i + 1) * 128, :], value=nl.divide(acc[u], l[u], dtype=o.dtype))
    return o


def reference(q_t, k_t, v, softmax_scale=None):
    import numpy as np
    H, D, S = q_t.shape
    group = H // k_t.shape[0]
    scale = D ** -0.5 if softmax_scale is None else softmax_scale
    out = np.empty((H, S, D))
    causal = np.tril(np.ones((S, S), dtype=bool))
    for h in range(H):
        s = q_t[h].T.astype(np.float64) @ k_t[h // group].astype(np.float64) * scale
        s = np.where(causal, s, -np.inf)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out[h] = p / p.sum(axis=1, keepdims=True) @ v[h // group]
    return out
