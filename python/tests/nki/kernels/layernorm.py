"""LayerNorm with nki.isa calls: the row sum comes out of the activation's reduce, the mean
and variance scale a tensor_scalar with two operators."""
import nctlm.nki as nki
import nctlm.nki.isa as nisa
import nctlm.nki.language as nl


@nki.jit
def layernorm(x, gamma, beta, eps=1e-5):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    g = nl.load(gamma.reshape((1, cols))).broadcast_to((128, cols))
    b = nl.load(beta.reshape((1, cols))).broadcast_to((128, cols))
    for i in nl.affine_range(rows // 128):
        xt = nl.load(x[i * 128:(i + 1) * 128, :])
        total = nl.ndarray((128, 1), dtype=nl.float32)
        nisa.activation(op=nl.copy, data=xt, reduce_op=nl.add, reduce_res=total)
        mean = nisa.tensor_scalar(total, nl.multiply, 1.0 / cols)
        sq_total = nl.ndarray((128, 1), dtype=nl.float32)
        nisa.activation_reduce(op=nl.square, data=xt, bias=nl.negative(mean), reduce_op=nl.add,
                               reduce_res=sq_total)
        rstd = nl.rsqrt(nisa.tensor_scalar(sq_total, nl.multiply, 1.0 / cols, op1=nl.add, operand1=eps))
        xn = nisa.tensor_scalar(xt, nl.subtract, mean, op1=nl.multiply, operand1=rstd, dtype=nl.float32)
        y = nisa.tensor_tensor(nisa.tensor_tensor(xn, g, nl.multiply), b, nl.add)
        nl.store(out[i * 128:(i + 1) * 128, :], value=y)
    return out


def reference(x, gamma, beta, eps=1e-5):
    import numpy as np
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta
