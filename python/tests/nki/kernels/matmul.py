"""Matrix multiplications: lhsT [K, M] (the left operand delivered transposed), rhs [K, N]."""
import nctlm.nki as nki
import nctlm.nki.isa as nisa
import nctlm.nki.language as nl


@nki.jit
def matmul_tiled(lhsT, rhs):
    """One PSUM tile per 128 x 512 output block, accumulated over K in 128-row steps."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                lt = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
                rt = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
                lt[...] = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                rt[...] = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                acc += nl.matmul(lt[...], rt[...], transpose_x=True)
            res = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=res)
    return result


@nki.jit
def matmul_blocked(lhsT, rhs, TILES_M=2, TILES_N=2, TILES_K=2):
    """Blocked over M, N and K: a block of lhsT and rhs tiles in SBUF, K blocks accumulated into
    SBUF result tiles (sequential over K), PSUM accumulation within a K block."""
    K, M = lhsT.shape
    _, N = rhs.shape
    TM, TK, TN = nl.tile_size.gemm_stationary_fmax, nl.tile_size.pmax, nl.tile_size.gemm_moving_fmax
    BM, BN, BK = TM * TILES_M, TN * TILES_N, TK * TILES_K
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for n in nl.affine_range(N // BN):
        acc_sb = nl.zeros((M // BM, TILES_M, TILES_N, nl.par_dim(TM), TN), dtype=nl.float32, buffer=nl.sbuf)
        for k in nl.sequential_range(K // BK):
            i_r = nl.mgrid[0:TK, 0:BN]
            rhs_t = nl.ndarray((TILES_K, nl.par_dim(TK), BN), dtype=rhs.dtype, buffer=nl.sbuf)
            for bk in nl.affine_range(TILES_K):
                rhs_t[bk, i_r.p, i_r.x] = nl.load(rhs[(TILES_K * k + bk) * TK + i_r.p, BN * n + i_r.x])
            for m in nl.affine_range(M // BM):
                i_l = nl.mgrid[0:TK, 0:BM]
                lhs_t = nl.ndarray((TILES_K, nl.par_dim(TK), BM), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bk in nl.affine_range(TILES_K):
                    lhs_t[bk, i_l.p, i_l.x] = nl.load(lhsT[(TILES_K * k + bk) * TK + i_l.p, BM * m + i_l.x])
                i_lm = nl.mgrid[0:TK, 0:TM]
                i_rm = nl.mgrid[0:TK, 0:TN]
                i_o = nl.mgrid[0:TM, 0:TN]
                for bn in nl.affine_range(TILES_N):
                    for bm in nl.affine_range(TILES_M):
                        ps = nl.zeros((TM, TN), dtype=nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(TILES_K):
                            ps[...] += nisa.nc_matmul(lhs_t[bk, i_lm.p, bm * TM + i_lm.x],
                                                      rhs_t[bk, i_rm.p, bn * TN + i_rm.x])
                        acc_sb[m, bm, bn, i_o.p, i_o.x] += ps[i_o.p, i_o.x]
        for m in nl.affine_range(M // BM):
            for bm in nl.affine_range(TILES_M):
                i_t = nl.mgrid[0:TM, 0:TN]
                i_pk = nl.mgrid[0:TM, 0:BN]
                packed = nl.ndarray((TM, BN), dtype=result.dtype, buffer=nl.sbuf)
                for bn in nl.affine_range(TILES_N):
                    packed[i_t.p, bn * TN + i_t.x] = nl.copy(acc_sb[m, bm, bn, i_t.p, i_t.x])
                nl.store(result[(TILES_M * m + bm) * TM + i_pk.p, BN * n + i_pk.x], value=packed[i_pk.p, i_pk.x])
    return result


def reference(lhsT, rhs, *blocking):
    return lhsT.T.astype("float64") @ rhs.astype("float64")
