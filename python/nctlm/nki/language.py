"""nki.language: the subset of the Neuron Kernel Interface's language API that nctlm traces.

Names and semantics follow the public NKI API documentation; docs/kernels.md ("The NKI subset")
maps each call to the kernel format's instructions. A public name outside the subset raises an
error naming it and the kernel's line (module __getattr__ at the end).
"""

import math

from . import expr as ex
from . import ops
from .context import ctx
from .dtypes import (bfloat16, float8_e4m3, float8_e5m2, float16, float32, int32, tfloat32,  # noqa: F401
                     to_dtype)
from .errors import NkiError
from .tiles import DynSlice, HbmView, ParDim, TileView, mgrid  # noqa: F401
from .tiles import arange as _arange

float8_e4m3fn = float8_e4m3
arange = _arange
par_dim = ParDim


class _Memory:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"nl.{self.name}"


sbuf = _Memory("sbuf")
psum = _Memory("psum")
hbm = _Memory("hbm")
shared_hbm = _Memory("shared_hbm")
private_hbm = _Memory("private_hbm")


class tile_size:
    """Tile limits of the NeuronCore (NKI's nl.tile_size)."""
    pmax = 128                   # partitions
    psum_fmax = 512              # fp32 elements per partition in one PSUM bank
    gemm_stationary_fmax = 128   # matmul M
    gemm_moving_fmax = 512       # matmul N


def ds(start, size):
    return DynSlice(start, size)


# --- loops and the SPMD grid ---------------------------------------------------------------------
def affine_range(start, stop=None, step=1):
    """A loop without loop-carried dependencies: traced once, a `loop` node of kind affine."""
    return ctx().range_loop("affine", start, stop, step)


def sequential_range(start, stop=None, step=1):
    """A loop with loop-carried dependencies: traced once, a `loop` node of kind sequential."""
    return ctx().range_loop("sequential", start, stop, step)


def static_range(start, stop=None, step=1):
    """A fully unrolled loop (a Python range)."""
    if stop is None:
        start, stop = 0, start
    if any(isinstance(v, ex.Expr) for v in (start, stop, step)):
        raise NkiError("nl.static_range unrolls at trace time: its bounds must be constants")
    return range(start, stop, step)


def program_id(axis=0):
    c = ctx()
    if not 0 <= axis < len(c.grid):
        raise NkiError(f"program_id({axis}) of a {len(c.grid)}-D launch grid {c.grid}")
    stride = math.prod(c.grid[axis + 1:])
    index = ex.floordiv(c.pid, stride)
    return index if axis == 0 else ex.mod(index, c.grid[axis])  # pid < the grid's size


def num_programs(axes=None):
    grid = ctx().grid
    if axes is None:
        return math.prod(grid)
    axes = [axes] if isinstance(axes, int) else list(axes)
    if any(not 0 <= a < len(grid) for a in axes):
        raise NkiError(f"num_programs({axes}) of a {len(grid)}-D launch grid {grid}")
    return math.prod(grid[a] for a in axes)


def program_ndim():
    return len(ctx().grid)


# --- creation --------------------------------------------------------------------------------------
def _memory(buffer):
    if buffer is None:
        return "sbuf"
    if isinstance(buffer, _Memory):
        return buffer.name
    raise NkiError(f"buffer={buffer!r} is outside the subset (nl.sbuf, nl.psum, nl.shared_hbm, nl.hbm, "
                   "nl.private_hbm)")


def ndarray(shape, dtype, buffer=None, name="", bufs=None):
    """A tensor: on SBUF/PSUM a tile (nl.par_dim marks the partition dimension, else the first),
    on HBM a kernel tensor. `bufs` (an nctlm extension) sets the tile's rotating copies."""
    dtype = to_dtype(dtype)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    memory = _memory(buffer)
    c = ctx()
    if memory in ("hbm", "shared_hbm", "private_hbm"):
        if any(isinstance(n, (bool, ParDim)) or not (isinstance(n, int) or ex.is_symbolic_size(n))
               or (ex.known(n) or 0) <= 0 for n in shape):
            raise NkiError(f"an HBM tensor's shape must be positive integers (or sizes of symbolic arguments), "
                           f"got {shape}")
        t = c.new_tensor(name or c.hint("out"), shape, dtype, "scratch", per_instance=memory != "shared_hbm")
        return HbmView(t, 0, zip(t.strides, t.shape))
    where = [i for i, n in enumerate(shape) if isinstance(n, ParDim)]
    if len(where) > 1:
        raise NkiError("a tile has one partition dimension (nl.par_dim)")
    pdim = where[0] if where else 0
    sizes = [n.size if isinstance(n, ParDim) else n for n in shape]
    free = sizes[:pdim] + sizes[pdim + 1:]
    buf, copy = c.new_buffer(name or c.hint("tile"), memory, sizes[pdim], free, dtype, bufs=bufs)
    dims, j = [], 0
    for i in range(len(sizes)):
        if i == pdim:
            dims.append("p")
        else:
            dims.append(j)
            j += 1
    if len(sizes) == 1:
        dims = ["p"]
    return TileView.whole(buf, copy, dims)


def full(shape, fill_value, dtype, buffer=None, name="", bufs=None):
    t = ndarray(shape, dtype, buffer, name, bufs)
    if isinstance(t, HbmView):
        raise NkiError("initializing an HBM tensor is outside the subset (fill a tile and nl.store it)")
    ops.memset(t, fill_value)
    return t


def zeros(shape, dtype, buffer=None, name="", bufs=None):
    return full(shape, 0.0, dtype, buffer, name, bufs)


def ones(shape, dtype, buffer=None, name="", bufs=None):
    return full(shape, 1.0, dtype, buffer, name, bufs)


def _like(a, dtype, buffer):
    memory = buffer if buffer is not None else (shared_hbm if isinstance(a, HbmView) else
                                                psum if a.memory == "psum" else sbuf)
    return a.shape, dtype or a.dtype, memory


def empty_like(a, dtype=None, buffer=None, name=""):
    shape, dtype, memory = _like(a, dtype, buffer)
    return ndarray(shape, dtype, memory, name)


def zeros_like(a, dtype=None, buffer=None, name=""):
    shape, dtype, memory = _like(a, dtype, buffer)
    return zeros(shape, dtype, memory, name)


# --- memory operations ------------------------------------------------------------------------------
def load(src, *, mask=None, dtype=None):
    return ops.load(src, dtype=dtype, mask=mask)


def store(dst, value, *, mask=None):
    ops.store(dst, value, mask=mask)


def load_transpose2d(src, *, mask=None, dtype=None):
    """HBM (F, P) -> SBUF (P, F): a DMA whose access pattern walks the tensor transposed."""
    if not isinstance(src, HbmView) or src.ndim != 2:
        raise NkiError("nl.load_transpose2d takes a 2-D HBM tensor")
    return ops.load(HbmView(src.tensor, src.offset, src.axes[::-1]), dtype=dtype, mask=mask)


def copy(x, dtype=None, *, mask=None):
    return ops.copy(x, dtype=to_dtype(dtype) if dtype is not None else None, mask=mask)


def broadcast_to(x, shape):
    return ops.broadcast_to(x, shape)


# --- math ---------------------------------------------------------------------------------------------
def _unary(func):
    def f(x, *, dtype=None, mask=None):
        return ops.activation(func, x, dtype=to_dtype(dtype) if dtype is not None else None, mask=mask)
    f.__name__ = func
    f.__doc__ = f"Elementwise {func} on the scalar engine (an `activation` instruction)."
    return f


def _binary(op, name):
    def f(x, y, *, dtype=None, mask=None):
        return ops.binary(x, y, op, dtype=to_dtype(dtype) if dtype is not None else None, mask=mask)
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}: tensor_tensor, or tensor_scalar with a number/(P, 1) operand."
    return f


exp, log, tanh, sigmoid, relu = (_unary(n) for n in ("exp", "log", "tanh", "sigmoid", "relu"))
gelu, gelu_apprx_tanh, silu, softplus = (_unary(n) for n in ("gelu", "gelu_apprx_tanh", "silu", "softplus"))
rsqrt, sqrt, reciprocal, square = (_unary(n) for n in ("rsqrt", "sqrt", "reciprocal", "square"))
abs, sin, cos, erf, sign = (_unary(n) for n in ("abs", "sin", "cos", "erf", "sign"))  # noqa: A001

add, subtract, multiply, divide = (_binary(op, op) for op in ("add", "subtract", "multiply", "divide"))
maximum, minimum, power = _binary("max", "maximum"), _binary("min", "minimum"), _binary("pow", "power")
equal, not_equal = _binary("equal", "equal"), _binary("not_equal", "not_equal")
greater, greater_equal = _binary("greater", "greater"), _binary("greater_equal", "greater_equal")
less, less_equal = _binary("less", "less"), _binary("less_equal", "less_equal")


def negative(x, *, dtype=None, mask=None):
    """-x: a tensor_scalar multiply by -1."""
    return ops.negative(x, dtype=to_dtype(dtype) if dtype is not None else None, mask=mask)


def _reduction(op, name):
    def f(x, axis, *, dtype=None, mask=None, keepdims=False):
        return ops.reduce(x, op, axis, dtype=to_dtype(dtype) if dtype is not None else None, mask=mask)
    f.__name__ = name
    f.__doc__ = (f"{name} along the free axes (a tensor_reduce); the result keeps the partition axis "
                 "and one element per partition, shape (P, 1).")
    return f


max = _reduction("max", "max")  # noqa: A001
min = _reduction("min", "min")  # noqa: A001
sum = _reduction("add", "sum")  # noqa: A001
prod = _reduction("multiply", "prod")


def mean(x, axis, *, dtype=None, mask=None, keepdims=False):
    """Mean along the free axes: tensor_reduce add, then tensor_scalar multiply by 1/N."""
    return ops.mean(x, axis, dtype=to_dtype(dtype) if dtype is not None else None, mask=mask)


def _sbuf(x):
    x = ops.as_tile(x, "a matmul operand")
    return ops.copy(x) if x.memory != "sbuf" else x


def matmul(x, y, *, transpose_x=False, mask=None):
    """x @ y into PSUM (fp32). With transpose_x the stationary x is given as (K, M); without it x
    is (M, K) and is first transposed on the tensor engine (transpose + copy to SBUF)."""
    x, y = _sbuf(x), _sbuf(y)
    if not transpose_x:
        x = ops.copy(ops.transpose(x), dtype=x.dtype)
    return ops.matmul(x, y, mask=mask)


def transpose(x, *, dtype=None, mask=None):
    """Partition <-> free on the tensor engine; the result is in PSUM."""
    return ops.transpose(_sbuf(x), dtype=to_dtype(dtype) if dtype is not None else None, mask=mask)


def where(condition, x, y, *, dtype=None, mask=None):
    """select(condition, x, y) on the vector engine; a number branch is memset into a tile."""
    return ops.select(condition, x, y, dtype=to_dtype(dtype) if dtype is not None else None, mask=mask)


# --- names for nki.isa's `op` arguments -------------------------------------------------------------------
ACTIVATIONS = {f: f.__name__ for f in (exp, log, tanh, sigmoid, relu, gelu, gelu_apprx_tanh, silu, softplus,
                                         rsqrt, sqrt, reciprocal, square, abs, sin, cos, erf, sign)}
ACTIVATIONS[copy] = "copy"
OPERATORS = {add: "add", subtract: "subtract", multiply: "multiply", divide: "divide", maximum: "max",
             minimum: "min", power: "pow", equal: "equal", not_equal: "not_equal", greater: "greater",
             greater_equal: "greater_equal", less: "less", less_equal: "less_equal"}
REDUCERS = {add: "add", sum: "add", max: "max", maximum: "max", min: "min", minimum: "min",
            multiply: "multiply", prod: "multiply"}
# numpy callables NKI code passes as `op`, by __name__ (numpy isn't imported to trace).
_NUMPY_ACTIVATIONS = {"exp": "exp", "log": "log", "tanh": "tanh", "sqrt": "sqrt", "square": "square",
                      "reciprocal": "reciprocal", "abs": "abs", "absolute": "abs", "sin": "sin", "cos": "cos",
                      "sign": "sign", "copy": "copy"}
_NUMPY_OPERATORS = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
                    "true_divide": "divide", "maximum": "max", "minimum": "min", "power": "pow",
                    "equal": "equal", "not_equal": "not_equal", "greater": "greater",
                    "greater_equal": "greater_equal", "less": "less", "less_equal": "less_equal"}
_NUMPY_REDUCERS = {"add": "add", "sum": "add", "maximum": "max", "max": "max", "amax": "max",
                   "minimum": "min", "min": "min", "amin": "min", "multiply": "multiply", "prod": "multiply"}


def _is_numpy(f):
    return type(f).__name__ == "ufunc" or getattr(f, "__module__", "") in ("numpy", "numpy.core.fromnumeric")


def op_name(f, kind):
    """The format's name for an `op` argument: kind is 'activation', 'operator' or 'reduce'."""
    table, numpy_table = {"activation": (ACTIVATIONS, _NUMPY_ACTIVATIONS),
                          "operator": (OPERATORS, _NUMPY_OPERATORS),
                          "reduce": (REDUCERS, _NUMPY_REDUCERS)}[kind]
    try:
        if f in table:
            return table[f]
    except TypeError:
        pass
    if _is_numpy(f) and getattr(f, "__name__", None) in numpy_table:
        return numpy_table[f.__name__]
    name = getattr(f, "__name__", repr(f))
    raise NkiError(f"'{name}' as an {kind} op is outside the subset (docs/kernels.md lists the ops)")


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(name)
    raise NkiError(f"nki.language.{name} is outside nctlm's NKI subset (docs/kernels.md lists the subset)")

