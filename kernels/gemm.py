"""GEMM c = a @ b, blocked over M, N and K (bf16 in, fp32 accumulation, bf16 out).

Tensors: a_t [K, M] (A transposed: the stationary operand, K on the partitions), b [K, N],
c [M, N] (returned). Args: M, K, N (the shape); BM, BN, BK (the block: BM x BK of A and BK x BN
of B sit in SBUF, ABUFS copies each so the next block loads while this one computes; BM, BK
multiples of 128, BN of 512; M, N, K multiples of the blocks); PSUM_BUFS (rotating PSUM tiles).

Per output block: K blocks in sequence; within one, a 128 x 512 PSUM tile per (128-row, 512-column)
tile accumulates BK / 128 matmuls, then is added into the block's fp32 accumulator in SBUF. The
block leaves through the scalar engine (cast to bf16) and one DMA per 128 rows.
"""
import nctlm.nki as nki
import nctlm.nki.isa as nisa
import nctlm.nki.language as nl


@nki.jit
def gemm(a_t, b, BM=1024, BN=1024, BK=1024, ABUFS=2, PSUM_BUFS=8):
    K, M = a_t.shape
    _, N = b.shape
    c = nl.ndarray((M, N), dtype=a_t.dtype, buffer=nl.shared_hbm)
    for bm in nl.affine_range(M // BM):
        for bn in nl.affine_range(N // BN):
            acc = nl.zeros((BM // 128, nl.par_dim(128), BN), dtype=nl.float32, buffer=nl.sbuf)
            for bk in nl.sequential_range(K // BK):
                a_blk = nl.ndarray((BK // 128, nl.par_dim(128), BM), dtype=a_t.dtype, bufs=ABUFS)
                b_blk = nl.ndarray((BK // 128, nl.par_dim(128), BN), dtype=b.dtype, bufs=ABUFS)
                for kt in nl.affine_range(BK // 128):
                    row = bk * BK + kt * 128
                    a_blk[kt] = nl.load(a_t[row:row + 128, bm * BM:bm * BM + BM])
                    b_blk[kt] = nl.load(b[row:row + 128, bn * BN:bn * BN + BN])
                for mt in nl.affine_range(BM // 128):
                    for nt in nl.affine_range(BN // 512):
                        ps = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum, bufs=PSUM_BUFS)
                        for kt in nl.affine_range(BK // 128):
                            ps += nisa.nc_matmul(a_blk[kt, :, mt * 128:mt * 128 + 128],
                                                 b_blk[kt, :, nt * 512:nt * 512 + 512])
                        acc[mt, :, nt * 512:nt * 512 + 512] += ps
            for mt in nl.affine_range(BM // 128):
                c_blk = nisa.activation(op=nl.copy, data=acc[mt], dtype=c.dtype)
                nl.store(c[bm * BM + mt * 128:bm * BM + mt * 128 + 128, bn * BN:bn * BN + BN], value=c_blk)
    return c


def reference(a_t, b, *blocking):
    return a_t.T.astype("float64") @ b.astype("float64")
