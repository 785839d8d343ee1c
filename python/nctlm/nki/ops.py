"""Instruction builders shared by nki.language and nki.isa: each checks its operands (shapes,
memories, dtypes), allocates the result tile and emits the kernel format's instruction(s)."""

import math

from . import expr as ex
from .context import ctx
from .dtypes import float32, is_fp8, promote, to_dtype
from .errors import NkiError
from .tiles import BroadcastTile, HbmView, IndexTensor, Predicate, TileView, is_index, new_tile

MATMUL_K_MAX = 128  # partitions of the PE array
MATMUL_M_MAX = 128  # nl.tile_size.gemm_stationary_fmax
MATMUL_N_MAX = 512  # nl.tile_size.gemm_moving_fmax
COMMUTATIVE = {"add", "multiply", "max", "min", "equal", "not_equal"}
FLIPPED = {"less": "greater", "greater": "less", "less_equal": "greater_equal",
           "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}
_PY_BINARY = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
              "divide": lambda a, b: a / b, "max": ex.emax, "min": ex.emin, "pow": lambda a, b: a ** b}


def describe(x):
    if isinstance(x, HbmView):
        return f"the HBM tensor '{x.tensor.name}' (load it into SBUF first)"
    if isinstance(x, TileView):
        return f"a {x.memory.upper()} tile of shape {x.shape}"
    return f"{type(x).__name__} {x!r}"


def as_tile(x, what):
    if isinstance(x, BroadcastTile):
        return materialize(x)
    if not isinstance(x, TileView):
        raise NkiError(f"{what} must be an on-chip tile (SBUF or PSUM), got {describe(x)}")
    return x


def tile_shape(view):
    free = [n for d, n in zip(view.dims, view.shape) if d != "p"]
    return (view.partitions,) + (tuple(free) or (1,))


def _result(out, shape, dtype, memory="sbuf"):
    if out is None:
        return new_tile(shape, dtype, memory)
    out = as_tile(out, "the destination")
    if not ex.size_eq(out.partitions, shape[0]) or not ex.size_eq(out.free_size, math.prod(shape[1:])):
        raise NkiError(f"destination tile of shape {out.shape} doesn't match the result's {shape}")
    return out


def check_same_shape(a, b, what):
    if not ex.size_eq(a.partitions, b.partitions) or not ex.size_eq(a.free_size, b.free_size):
        raise NkiError(f"{what}: tile shapes {a.shape} and {b.shape} don't match")


def _per_partition(x, data, what):
    """A per-partition operand (P, 1) for `data`, or a number, or an expression of symbolic
    arguments (written as the format's real expression)."""
    if isinstance(x, BroadcastTile):
        x = x.source
    if isinstance(x, TileView):
        if not ex.size_eq(x.partitions, data.partitions) or not ex.size_eq(x.free_size, 1):
            raise NkiError(f"{what} must be a number or a ({data.partitions}, 1) tile, got shape {x.shape}")
        return x
    if isinstance(x, (ex.Expr, ex.Real)):
        return scalar_of_args(x, what)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    raise NkiError(f"{what} must be a number or a per-partition tile, got {describe(x)}")


def scalar_of_args(x, what):
    """A number computed from symbolic arguments (1 / COLS): kept as an expression. One computed
    from a loop variable is refused: the format's scalar operands are constants of a run."""
    loops = sorted(ex.real_names(x) - set(ex.ARGS))
    if loops:
        text = ex.render(x) if isinstance(x, ex.Expr) else x.text
        raise NkiError(f"{what} is the loop expression '{text}': the format's scalar operands are "
                       "constants (unroll the loop with range/nl.static_range, or build the values with nisa.iota)")
    return x


# --- elementwise -------------------------------------------------------------------------------------
def activation(func, src, scale=1.0, bias=None, reduce_res=None, dtype=None, out=None, mask=None):
    src = as_tile(src, f"the input of {func}")
    fields = {"dst": None, "src": src, "func": func}
    if not (isinstance(scale, (int, float)) and scale == 1.0):
        fields["scale"] = _per_partition(scale, src, "scale")
    if bias is not None and not (isinstance(bias, (int, float)) and bias == 0):
        if isinstance(bias, (int, float)):
            bias = full_tile((src.partitions, 1), float32, bias)  # the format's bias is an operand
        fields["bias"] = _per_partition(bias, src, "bias")
    writes = ("dst",)
    if reduce_res is not None:
        reduce_res = as_tile(reduce_res, "reduce_res")
        if not ex.size_eq(reduce_res.partitions, src.partitions) or not ex.same(reduce_res.free_size, 1):
            raise NkiError(f"reduce_res must be a ({src.partitions}, 1) tile, got {reduce_res.shape}")
        fields["reduce"] = reduce_res
        writes = ("dst", "reduce")
    fields["dst"] = _result(out, tile_shape(src), dtype or src.dtype)
    ctx().emit("activation", fields, writes, mask)
    return fields["dst"]


def _classify(x):
    if isinstance(x, TileView):
        return "tile"
    if isinstance(x, BroadcastTile):
        return "pp" if ex.same(x.source.free_size, 1) else "tile"
    if isinstance(x, (int, float, ex.Expr, ex.Real)) and not isinstance(x, bool):
        return "scalar"
    if isinstance(x, HbmView):
        raise NkiError(f"an elementwise op got {describe(x)}")
    raise NkiError(f"an elementwise op got {describe(x)}")


def binary(a, b, op, dtype=None, out=None, mask=None):
    """a <op> b with NKI's broadcasting: tile x tile (tensor_tensor), tile x number or (P, 1) tile
    (tensor_scalar, reversed where the operator isn't commutative)."""
    ka, kb = _classify(a), _classify(b)
    if ka == "scalar" and kb == "scalar":
        if op not in _PY_BINARY:
            raise NkiError(f"{op} of two numbers: compute it in Python")
        return _PY_BINARY[op](a, b)
    if ka == "tile" and kb == "tile":
        a, b = as_tile(a, "an operand"), as_tile(b, "an operand")
        if not ex.size_eq(a.partitions, b.partitions):
            raise NkiError(f"{op}: tile shapes {a.shape} and {b.shape} don't match (a partition-axis "
                           "broadcast needs broadcast_to)")
        result_dtype = dtype or promote(a.dtype, b.dtype)
        if ex.size_eq(a.free_size, b.free_size):
            dst = _result(out, tile_shape(a), result_dtype)
            ctx().emit("tensor_tensor", {"dst": dst, "in0": a, "in1": b, "operator": op}, mask=mask)
            return dst
        if ex.same(b.free_size, 1):
            return scalar_chain(a, [(op, b)], result_dtype, out, mask)
        if ex.same(a.free_size, 1):
            return _reversed(b, op, a, result_dtype, out, mask)
        raise NkiError(f"{op}: tile shapes {a.shape} and {b.shape} don't match")
    if ka == "tile":
        a = as_tile(a, "an operand")
        operand = _per_partition(b, a, "the operand")
        dt = dtype or (promote(a.dtype, operand.dtype) if isinstance(operand, TileView) else a.dtype)
        return scalar_chain(a, [(op, operand)], dt, out, mask)
    if kb == "tile":
        b = as_tile(b, "an operand")
        operand = _per_partition(a, b, "the operand")
        dt = dtype or (promote(b.dtype, operand.dtype) if isinstance(operand, TileView) else b.dtype)
        return _reversed(b, op, operand, dt, out, mask)
    raise NkiError(f"{op} of two per-partition broadcasts: broadcast one of them with a real tile")


def _reversed(data, op, operand, dtype, out, mask):
    """operand <op> data, with data the full tile (the format's tensor_scalar has no reverse flag)."""
    if op in FLIPPED:
        return scalar_chain(data, [(FLIPPED[op], operand)], dtype, out, mask)
    if op in COMMUTATIVE:
        return scalar_chain(data, [(op, operand)], dtype, out, mask)
    if op == "subtract":  # s - x = x * -1 + s
        return scalar_chain(data, [("multiply", -1.0), ("add", operand)], dtype, out, mask)
    if op == "divide":  # s / x = (1 / x) * s
        stages = ["reciprocal"] + ([] if isinstance(operand, (int, float)) and operand == 1 else [("multiply", operand)])
        return scalar_chain(data, stages, dtype, out, mask)
    if op == "pow" and isinstance(operand, (int, float)) and operand > 0:  # s ** x = exp(x * ln s)
        return activation("exp", data, scale=math.log(operand), dtype=dtype, out=out, mask=mask)
    raise NkiError(f"{op} with a number or per-partition operand on the left is outside the subset")


def scalar_chain(data, stages, dtype, out=None, mask=None):
    """tensor_scalar instructions (two operators each) and reciprocal activations, in order."""
    groups, pending = [], []
    for stage in stages:
        if stage == "reciprocal":
            if pending:
                groups.append(pending)
                pending = []
            groups.append(stage)
        else:
            pending.append(stage)
            if len(pending) == 2:
                groups.append(pending)
                pending = []
    if pending:
        groups.append(pending)
    current = data
    for i, group in enumerate(groups):
        last = i == len(groups) - 1
        if group == "reciprocal":
            current = activation("reciprocal", current, dtype=dtype if last else float32,
                                 out=out if last else None, mask=mask)
            continue
        dst = _result(out, tile_shape(data), dtype) if last else new_tile(tile_shape(data), float32)
        fields = {"dst": dst, "src": current}
        for k, (op, operand) in enumerate(group):
            fields[f"operator{k}"] = op
            fields[f"operand{k}"] = operand
        ctx().emit("tensor_scalar", fields, mask=mask)
        current = dst
    return current


def negative(x, dtype=None, mask=None):
    x = as_tile(x, "the input of negative")
    return scalar_chain(x, [("multiply", -1.0)], dtype or x.dtype, None, mask)


def inplace(target, value, op):
    """target <op>= value, written into target. `psum += nl.matmul(...)` accumulates in PSUM
    (start 0); into a freshly zeroed PSUM tile the accumulation starts on the first iteration
    instead of after the memset (context.first_accumulation)."""
    c = ctx()
    if (op == "add" and isinstance(value, TileView) and target.memory == "psum" and c.can_retarget(value)
            and c.last.op == "matmul" and c.last_mask is None and ex.size_eq(target.partitions, value.partitions)
            and ex.size_eq(target.free_size, value.free_size)):
        start = c.first_accumulation(target)
        c.retarget(value, target, start=0 if start is None else start)
        return target
    binary(target, value, op, out=target)
    return target


def assign(target, value):
    """target[...] = value: retarget the op that produced value when possible, else copy/memset."""
    if isinstance(value, TileView) and target.same_box(value):
        return
    if isinstance(value, BroadcastTile):
        value = materialize(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        memset(target, value)
        return
    if isinstance(value, HbmView):
        raise NkiError("assigning an HBM tensor to a tile: use nl.load")
    if not isinstance(value, TileView):
        raise NkiError(f"can't assign {describe(value)} to a tile")
    check_same_shape(target, value, "assignment")
    c = ctx()
    if c.can_retarget(value):
        op = c.last.op
        # Writing the target's type directly rounds once instead of twice; never skip a rounding
        # the kernel asked for (a bf16 result assigned to an fp32 tile stays bf16-rounded).
        fits = (target.memory == "psum") if op in ("matmul", "transpose") else \
            (target.memory == "sbuf" and target.dtype is value.dtype) if op == "dma" else \
            target.dtype.rank <= value.dtype.rank
        if fits:
            c.retarget(value, target)
            return
    copy(value, out=target)


# --- data movement ------------------------------------------------------------------------------------
def copy(src, dtype=None, engine="vector", out=None, mask=None):
    src = as_tile(src, "the source of a copy")
    dst = _result(out, tile_shape(src), dtype or src.dtype)
    fields = {"dst": dst, "src": src}
    if engine != "vector":
        fields["engine"] = engine
    ctx().emit("tensor_copy", fields, mask=mask)
    return dst


def memset(dst, value, mask=None):
    if isinstance(value, (ex.Expr, ex.Real)):
        value = scalar_of_args(value, "a fill value")
    elif not isinstance(value, (int, float)) or isinstance(value, bool):
        raise NkiError(f"a fill value is a constant number, got {describe(value)}")
    else:
        value = float(value)
    c = ctx()
    instr = c.emit("memset", {"dst": dst, "value": value}, mask=mask)
    if isinstance(value, float) and value == 0:
        c.zeroed(dst, instr)
    return dst


def full_tile(shape, dtype, value, memory="sbuf", hint=None, temp=False):
    dst = new_tile(shape, dtype, memory, hint, temp=temp)
    return memset(dst, value)


def _hbm_tile_shape(view):
    shape = view.shape
    if not shape:
        return (1, 1)
    if ex.at_defaults(shape[0])[1] > 128:
        raise NkiError(f"partition dimension {ex.render(shape[0])} > 128 (nl.tile_size.pmax): load at most 128 rows "
                       "at a time")
    return (shape[0],) + (shape[1:] or (1,))


def load(src, dtype=None, mask=None, out=None):
    if not isinstance(src, HbmView):
        raise NkiError(f"nl.load reads an HBM tensor, got {describe(src)}")
    shape = _hbm_tile_shape(src)
    dst = new_tile(shape, src.dtype) if out is None else out
    if out is not None:
        if out.memory != "sbuf":
            raise NkiError("a DMA writes SBUF, not PSUM")
        if not ex.size_eq(out.partitions, shape[0]) or not ex.size_eq(out.free_size, math.prod(shape[1:])):
            raise NkiError(f"DMA of {src.shape} elements into a tile of shape {out.shape}")
    c = ctx()
    instr = c.emit("dma", {"dst": dst, "src": src}, mask=mask)
    if dst.operand().is_whole() and mask is None:
        dst.buffer.load_src = src
        dst.buffer.load_instr = instr
    if out is None and dtype is not None and to_dtype(dtype) is not src.dtype:
        return copy(dst, dtype=to_dtype(dtype), mask=mask)
    return dst


def store(dst, value, mask=None):
    if not isinstance(dst, HbmView):
        raise NkiError(f"nl.store writes an HBM tensor, got {describe(dst)}")
    value = as_tile(value, "the stored value")
    shape = dst.shape or (1,)
    if not ex.size_eq(value.partitions, shape[0]) or not ex.size_eq(value.free_size, math.prod(shape[1:])):
        raise NkiError(f"storing a tile of shape {value.shape} into {dst.tensor.name}{list(shape)}")
    if value.memory != "sbuf" or value.dtype is not dst.dtype:  # DMA reads SBUF and doesn't convert
        c = ctx()
        if (c.can_retarget(value) and c.last.op not in ("dma", "matmul", "transpose")
                and dst.dtype.rank <= value.dtype.rank):
            converted = new_tile(tile_shape(value), dst.dtype)
            c.retarget(value, converted)  # the op that made value writes the stored type itself
            value = converted
        else:
            value = copy(value, dtype=dst.dtype, mask=mask)
    ctx().emit("dma", {"dst": dst, "src": value}, mask=mask)


# --- tensor engine ------------------------------------------------------------------------------------
def _matmul_dtypes(a, b):
    if a.dtype is b.dtype or (is_fp8(a.dtype) and is_fp8(b.dtype)):
        return
    raise NkiError(f"dtype mismatch in matmul: stationary is {a.dtype.name}, moving is {b.dtype.name}")


def matmul(stationary, moving, out=None, mask=None):
    """stationary.T @ moving on the tensor engine: (K, M) x (K, N) -> PSUM (M, N) fp32."""
    stationary = as_tile(stationary, "the stationary operand")
    moving = as_tile(moving, "the moving operand")
    for x, what in ((stationary, "stationary"), (moving, "moving")):
        if x.memory != "sbuf":
            raise NkiError(f"the {what} operand of a matmul must be in SBUF (copy the PSUM tile first)")
    k, m, k2, n = stationary.partitions, stationary.free_size, moving.partitions, moving.free_size
    if not ex.size_eq(k, k2):
        raise NkiError(f"matmul contraction mismatch: stationary has {k} partitions, moving {k2}")
    if ex.at_defaults(m)[1] > MATMUL_M_MAX or ex.at_defaults(n)[1] > MATMUL_N_MAX:
        raise NkiError(f"matmul past the array: M={m} (max {MATMUL_M_MAX}), N={n} (max {MATMUL_N_MAX})")
    _matmul_dtypes(stationary, moving)
    dst = _result(out, (m, n), float32, "psum")
    if dst.memory != "psum":
        raise NkiError("a matmul writes PSUM")
    ctx().emit("matmul", {"dst": dst, "stationary": stationary, "moving": moving}, mask=mask)
    return dst


def transpose(src, dtype=None, out=None, mask=None):
    """Partition <-> free on the tensor engine: SBUF (P, F) -> PSUM (F, P)."""
    src = as_tile(src, "the input of a transpose")
    if src.memory != "sbuf":
        raise NkiError("the tensor engine transposes an SBUF tile (copy the PSUM tile first)")
    p, f = src.partitions, src.free_size
    if ex.at_defaults(f)[1] > 128:
        raise NkiError(f"transpose of {src.shape}: the free size {f} becomes the partition dim (max 128)")
    dst = _result(out, (f, p), dtype or src.dtype, "psum")
    if dst.memory != "psum":
        raise NkiError("a tensor-engine transpose writes PSUM")
    ctx().emit("transpose", {"dst": dst, "src": src}, mask=mask)
    return dst


# --- reductions, select, iota -------------------------------------------------------------------------
def reduce(src, op, axis, negate=False, dtype=None, mask=None):
    src = as_tile(src, f"the input of a {op} reduction")
    if src.dims[:1] != ("p",):
        raise NkiError("reductions need a tile whose first dimension is the partition dimension")
    ndim = src.ndim
    axes = sorted({a + ndim if a < 0 else a for a in (axis if isinstance(axis, (list, tuple)) else [axis])})
    if not axes or axes[0] < 1 or axes[-1] >= max(ndim, 2) or axes != list(range(axes[0], max(ndim, 2))):
        raise NkiError(f"reduction axes {axis}: the subset reduces the last free axes of a tile "
                       "(axis 0, the partition axis, can't be reduced)")
    dt = dtype or src.dtype
    lead = src.shape[1:axes[0]]
    extra = {"negate": True} if negate else {}
    if not lead:
        dst = new_tile((src.partitions, 1), dt)
        ctx().emit("tensor_reduce", {"dst": dst, "src": src, "reduce": op, **extra}, mask=mask)
        return dst
    count = math.prod(lead)
    if not isinstance(count, int):
        raise NkiError(f"a reduction over the last axes leaves {ex.render(count)} rows per partition, a size of "
                       "symbolic arguments: outside the subset (reduce over all free axes)")
    if count > 64:
        raise NkiError(f"a reduction over the last axes leaves {count} rows per partition: outside the subset "
                       "(reduce over all free axes)")
    dst = new_tile((src.partitions,) + tuple(lead), dt)
    for flat in range(count):
        idx, rest = [], flat
        for n in reversed(lead):
            idx.insert(0, rest % n)
            rest //= n
        ctx().emit("tensor_reduce", {"dst": dst[(slice(None), *idx)], "src": src[(slice(None), *idx)],
                                     "reduce": op, **extra}, mask=mask)
    return dst


def mean(src, axis, dtype=None, mask=None):
    total = reduce(src, "add", axis, dtype=dtype or src.dtype, mask=mask)
    n = src.free_size // total.free_size
    return scalar_chain(total, [("multiply", 1.0 / n)], total.dtype, out=total, mask=mask)


def select(predicate, on_true, on_false, dtype=None, mask=None):
    predicate = as_tile(predicate, "the condition of where/select")
    shape = tile_shape(predicate)
    branches = []
    for x in (on_true, on_false):
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            x = full_tile(shape, float32, x, temp=True)
        x = as_tile(x, "a branch of where/select")
        check_same_shape(predicate, x, "where/select")
        branches.append(x)
    dst = new_tile(shape, dtype or promote(branches[0].dtype, branches[1].dtype))
    ctx().emit("select", {"dst": dst, "predicate": predicate, "on_true": branches[0],
                          "on_false": branches[1]}, mask=mask)
    return dst


def iota_expr(index):
    """The text of an nl.arange expression over the tile's own indices: p (partition), f0, f1, ..."""
    names = ["p"] + [f"f{k}" for k in range(max(index.ndim - 1, 0))]
    if index.ndim == 1:
        names = ["p"]
    total = index.base
    for axis, (c, pos) in index.coeffs.items():
        total = total + c * ex.var(names[pos])
    return ex.render(total)


def iota(index, dtype, mask=None):
    if not isinstance(index, IndexTensor):
        if is_index(index):
            raise NkiError("nisa.iota takes an nl.arange expression, got a plain integer")
        raise NkiError(f"nisa.iota takes an nl.arange expression, got {describe(index)}")
    shape = index.shape
    shape = (shape[0], 1) if len(shape) == 1 else shape
    dst = new_tile(shape, to_dtype(dtype))
    ctx().emit("iota", {"dst": dst, "expr": iota_expr(index)}, mask=mask)
    return dst


_COMPARISONS = {"<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal"}


def affine_select(pred, on_true, on_false_value, dtype=None):
    """Where an affine comparison of the tile's indices holds, on_true, else a number (NKI's
    nisa.affine_select, one GpSimd instruction). The format has no such op: the closest form is
    `iota` of (left - right), a `tensor_scalar` comparison with 0, a `memset` and a `select`."""
    if not isinstance(pred, Predicate) or len(pred.clauses) != 1:
        raise NkiError("nisa.affine_select takes one comparison of nl.arange expressions as pred")
    index, op, bound = pred.clauses[0]
    on_true = as_tile(on_true, "on_true_tile")
    values = iota(index - bound, float32)
    check_same_shape(values, on_true, "nisa.affine_select (pred's index space and on_true_tile)")
    condition = scalar_chain(values, [(_COMPARISONS[op], 0.0)], float32)
    return select(condition, on_true, on_false_value, dtype=dtype or on_true.dtype)


# --- broadcasts --------------------------------------------------------------------------------------
def broadcast_to(view, shape):
    view = as_tile(view, "broadcast_to's input")
    shape = tuple(shape)
    if len(shape) < 2:
        raise NkiError("broadcast_to takes a (partitions, free...) shape")
    p, free = shape[0], math.prod(shape[1:])
    if ex.size_eq(view.partitions, p) and ex.size_eq(view.free_size, free):
        return view
    if ex.size_eq(view.partitions, p) and ex.same(view.free_size, 1):
        return BroadcastTile(view, shape)
    if ex.same(view.partitions, 1) and ex.size_eq(view.free_size, free):
        return _broadcast_partitions(view, shape)
    raise NkiError(f"can't broadcast a tile of shape {view.shape} to {shape}")


def _broadcast_partitions(view, shape):
    """(1, F) -> (P, F): reload from HBM with a zero partition stride when the tile is a load's
    whole result, else a matmul against a ones vector on the tensor engine."""
    p = shape[0]
    src = view.buffer.load_src
    if src is not None and view.operand().is_whole():
        ctx().replaced_loads.add(view.buffer.load_instr)  # dropped at the end if nothing else reads it
        return load(HbmView(src.tensor, src.offset, ((0, p),) + src.axes[1:]))
    if view.memory != "sbuf":
        view = copy(view)
    ones = full_tile((1, p), view.dtype, 1.0, temp=True)
    dst = new_tile((p,) + tuple(shape[1:]), view.dtype)
    free = view.free_size
    for start in range(0, free, MATMUL_N_MAX):
        n = min(MATMUL_N_MAX, free - start)
        part = view if n == free else _flat_slice(view, start, n)
        out_part = dst if n == free else _flat_slice(dst, start, n)
        copy(matmul(ones, part), out=out_part)
    return dst


def _flat_slice(view, start, n):
    if len([d for d in view.dims if d != "p"]) != 1:
        raise NkiError("broadcasting a multi-dimensional tile wider than 512 across partitions is outside "
                       "the subset")
    return view[:, start:start + n]


def materialize(b):
    """A BroadcastTile as a real tile: zeros + the per-partition value."""
    dst = full_tile((b.partitions,) + b.shape[1:], b.dtype, 0.0, temp=True)
    return scalar_chain(dst, [("add", b.source)], b.dtype, out=dst)
