"""nki.isa: the subset of NKI's instruction-level API that nctlm traces.

Signatures follow the NKI API documentation (the tile-returning form: `nisa.exp`-style calls take
inputs and return a new tile); `dst=` (an existing tile to write) is accepted where the result is
a tile. Arguments the kernel format can't express (engine choices other than the format's, masks
of other shapes, DMA read-modify-write, ...) stop the trace with their name rather than being
ignored.
"""

from . import ops
from .dtypes import to_dtype
from .errors import NkiError
from .language import op_name
from .tiles import HbmView, TileView


class engine:
    """Engine choices (NKI's nisa.engine)."""
    unknown = "unknown"
    tensor = "tensor"
    vector = "vector"
    scalar = "scalar"
    gpsimd = "gpsimd"


class reduce_cmd:
    """Scalar-engine accumulator commands (NKI's nisa.reduce_cmd)."""
    idle = "idle"
    reset = "reset"
    reduce = "reduce"
    reset_reduce = "reset_reduce"


def _no_extra(call, kwargs):
    if kwargs:
        raise NkiError(f"nisa.{call}: argument '{sorted(kwargs)[0]}' is outside the subset")


def _dtype(dtype):
    return to_dtype(dtype) if dtype is not None else None


def _engine(call, value, allowed):
    if value in (None, engine.unknown):
        return None
    if value not in allowed:
        raise NkiError(f"nisa.{call}: engine={value} is outside the subset (the format runs it on "
                       f"{' or '.join(allowed)})")
    return value


def _write(result, dst):
    if dst is not None:
        ops.assign(dst, result)
        return dst
    return result


def nc_matmul(stationary, moving, *, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False,
              mask=None, dst=None, **kwargs):
    """stationary.T @ moving on the tensor engine into a new PSUM tile (fp32): `matmul`.
    The onezero flags are performance hints of the real compiler and change nothing here."""
    _no_extra("nc_matmul", kwargs)
    if is_transpose:
        raise NkiError("nisa.nc_matmul(is_transpose=True) is outside the subset: use nisa.nc_transpose")
    return _write(ops.matmul(stationary, moving, mask=mask), dst)


def nc_transpose(data, *, mask=None, dtype=None, engine=engine.unknown, dst=None, **kwargs):
    """Partition <-> free on the tensor engine (SBUF -> PSUM): `transpose`."""
    _no_extra("nc_transpose", kwargs)
    _engine("nc_transpose", engine, ("tensor",))
    return _write(ops.transpose(data, dtype=_dtype(dtype), mask=mask), dst)


def activation(op, data, *, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle,
               mask=None, dtype=None, dst=None, **kwargs):
    """op(data * scale + bias) on the scalar engine, optionally summed along the free axes into
    reduce_res: `activation` (scale a number or a (P, 1) tile, bias a (P, 1) tile)."""
    _no_extra("activation", kwargs)
    if reduce_res is not None or reduce_op is not None:
        if reduce_op is None or op_name(reduce_op, "reduce") != "add" or reduce_res is None:
            raise NkiError("nisa.activation reduces with reduce_op=nl.add into a reduce_res tile only")
        if reduce_cmd not in ("idle", "reset_reduce"):  # the parameter shadows the class here
            raise NkiError(f"nisa.activation: reduce_cmd={reduce_cmd} (accumulating across instructions) "
                           "is outside the subset")
    return ops.activation(op_name(op, "activation"), data, scale=scale, bias=bias, reduce_res=reduce_res,
                          dtype=_dtype(dtype), out=dst, mask=mask)


def activation_reduce(op, data, *, reduce_op, reduce_res, bias=None, scale=1.0, mask=None, dtype=None,
                      dst=None, **kwargs):
    """activation with the sum of the result along the free axes written to reduce_res."""
    _no_extra("activation_reduce", kwargs)
    return activation(op, data, bias=bias, scale=scale, reduce_op=reduce_op, reduce_res=reduce_res,
                      mask=mask, dtype=dtype, dst=dst)


def tensor_tensor(data1, data2, op, *, dtype=None, mask=None, engine=engine.unknown, dst=None, **kwargs):
    """data1 <op> data2 elementwise on the vector engine: `tensor_tensor`."""
    _no_extra("tensor_tensor", kwargs)
    _engine("tensor_tensor", engine, ("vector",))
    for x in (data1, data2):
        if not isinstance(x, TileView):
            raise NkiError(f"nisa.tensor_tensor takes two tiles, got {ops.describe(x)}")
    data1, data2 = ops.as_tile(data1, "data1"), ops.as_tile(data2, "data2")
    ops.check_same_shape(data1, data2, "nisa.tensor_tensor")
    return ops.binary(data1, data2, op_name(op, "operator"), dtype=_dtype(dtype), out=dst, mask=mask)


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, *, dtype=None,
                  mask=None, engine=engine.unknown, dst=None, **kwargs):
    """(data <op0> operand0) <op1> operand1 with number or (P, 1) operands: `tensor_scalar`. A
    reversed non-commutative operator is rewritten (s - x = x * -1 + s; s / x = reciprocal(x) * s)."""
    _no_extra("tensor_scalar", kwargs)
    _engine("tensor_scalar", engine, ("vector",))
    data = ops.as_tile(data, "data")
    stages = _stage(op0, operand0, reverse0, data)
    if op1 is not None:
        stages += _stage(op1, operand1, reverse1, data)
    elif operand1 is not None:
        raise NkiError("nisa.tensor_scalar: operand1 without op1")
    return ops.scalar_chain(data, stages, _dtype(dtype) or data.dtype, out=dst, mask=mask)


def _stage(op, operand, reverse, data):
    name = op_name(op, "operator")
    operand = ops._per_partition(operand, data, "a tensor_scalar operand")
    if not reverse or name in ops.COMMUTATIVE:
        return [(name, operand)]
    if name in ops.FLIPPED:
        return [(ops.FLIPPED[name], operand)]
    if name == "subtract":
        return [("multiply", -1.0), ("add", operand)]
    if name == "divide":
        return ["reciprocal", ("multiply", operand)]
    raise NkiError(f"nisa.tensor_scalar: reversed {name} is outside the subset")


def tensor_reduce(op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False, dst=None, **kwargs):
    """A reduction along the last free axes on the vector engine: `tensor_reduce`."""
    _no_extra("tensor_reduce", kwargs)
    return _write(ops.reduce(data, op_name(op, "reduce"), axis, negate=negate, dtype=_dtype(dtype), mask=mask),
                  dst)


def tensor_copy(src, *, mask=None, dtype=None, engine=engine.unknown, dst=None, **kwargs):
    """A copy (and cast) on the vector or scalar engine: `tensor_copy`."""
    _no_extra("tensor_copy", kwargs)
    chosen = _engine("tensor_copy", engine, ("vector", "scalar")) or "vector"
    return ops.copy(src, dtype=_dtype(dtype), engine=chosen, out=dst, mask=mask)


def dma_copy(*, dst, src, mask=None, dst_rmw_op=None, oob_mode=None, dge_mode=None, **kwargs):
    """HBM -> SBUF or SBUF -> HBM: `dma`."""
    _no_extra("dma_copy", kwargs)
    if dst_rmw_op is not None:
        raise NkiError("nisa.dma_copy: dst_rmw_op (read-modify-write DMA) is outside the subset")
    if isinstance(src, HbmView) and isinstance(dst, TileView):
        ops.load(src, mask=mask, out=dst)
    elif isinstance(src, TileView) and isinstance(dst, HbmView):
        if src.dtype is not dst.dtype or src.memory != "sbuf":
            raise NkiError("nisa.dma_copy moves SBUF data unchanged: copy/cast the tile first")
        ops.store(dst, src, mask=mask)
    else:
        raise NkiError(f"nisa.dma_copy between {ops.describe(src)} and {ops.describe(dst)}: the subset "
                       "moves HBM <-> SBUF only")


def iota(expr, dtype, *, mask=None, **kwargs):
    """A tile holding the values of an nl.arange expression: `iota`."""
    _no_extra("iota", kwargs)
    return ops.iota(expr, dtype, mask=mask)


def affine_select(pred, on_true_tile, on_false_value, *, mask=None, dtype=None, **kwargs):
    """on_true_tile where an affine comparison of nl.arange indices holds, else on_false_value.
    The format has no single op for it: iota + tensor_scalar compare + memset + select."""
    _no_extra("affine_select", kwargs)
    if mask is not None:
        raise NkiError("nisa.affine_select: mask= is outside the subset")
    return ops.affine_select(pred, on_true_tile, on_false_value, dtype=_dtype(dtype))


def memset(shape=None, value=None, dtype=None, *, mask=None, engine=engine.unknown, dst=None, **kwargs):
    """A new SBUF tile of shape and dtype filled with value, or `dst` filled: `memset`."""
    _no_extra("memset", kwargs)
    _engine("memset", engine, ("vector",))
    if dst is not None:
        return ops.memset(ops.as_tile(dst, "dst"), value, mask=mask)
    if shape is None or dtype is None:
        raise NkiError("nisa.memset takes (shape, value, dtype), or dst= and value=")
    shape = tuple(shape)
    tile = ops.new_tile(shape if len(shape) > 1 else shape + (1,), to_dtype(dtype))
    return ops.memset(tile, value, mask=mask)


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(name)
    raise NkiError(f"nki.isa.{name} is outside nctlm's NKI subset (docs/kernels.md lists the subset)")
