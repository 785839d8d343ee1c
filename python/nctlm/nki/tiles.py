"""Tiles, HBM tensor views and NKI's index objects, and how indexing them becomes operands.

- HBM: a view is an access pattern, offset + [(stride, count), ...] in elements. Integers, loop
  variables, slices, `nl.ds` and `nl.arange`/`nl.mgrid` expressions all compose into one: the
  first pair of a loaded/stored view is the partition axis.
- On chip: a tile is a box of one copy of a buffer (partitions p, one (start, size) per free
  dimension); indices narrow the box. Boxes can't stride or transpose, so on-chip indices must be
  unit-step ranges in order (the format has no strided on-chip access).
- `nl.arange`/`nl.mgrid` build IndexTensors: base + sum(coeff * axis), with numpy's broadcast
  layout deciding which axis is the partition axis (position 0) and which are free. Comparing an
  IndexTensor gives a Predicate, the `mask=` of NKI calls: it narrows the instruction's partition
  or free range (to an expression when it depends on a loop variable).
"""

import math

from . import expr as ex
from .context import ctx
from .errors import NkiError
from .program import Hbm, OnChip


def is_index(x):
    return isinstance(x, (int, ex.Expr)) and not isinstance(x, bool)


# --- nl.arange / nl.mgrid / nl.ds / nl.par_dim ------------------------------------------------------
class _Axis:
    __slots__ = ("size",)

    def __init__(self, size):
        self.size = size


class IndexTensor:
    """base + sum(coeff * axis) over arange axes, each axis at a position of an ndim layout."""

    def __init__(self, base, coeffs, ndim):
        self.base = base
        self.coeffs = coeffs  # {_Axis: (coeff, pos)}
        self.ndim = ndim

    @property
    def shape(self):
        shape = [1] * self.ndim
        for axis, (_, pos) in self.coeffs.items():
            shape[pos] = axis.size
        return tuple(shape)

    def _combine(self, other, sign):
        if is_index(other):
            return IndexTensor(self.base + sign * other, dict(self.coeffs), self.ndim)
        if not isinstance(other, IndexTensor):
            return NotImplemented
        ndim = max(self.ndim, other.ndim)
        coeffs = {a: (c, p + ndim - self.ndim) for a, (c, p) in self.coeffs.items()}
        for axis, (c, p) in other.coeffs.items():
            p += ndim - other.ndim
            if axis in coeffs:
                if coeffs[axis][1] != p:
                    raise NkiError("the same nl.arange axis appears at two positions")
                coeffs[axis] = (coeffs[axis][0] + sign * c, p)
            else:
                coeffs[axis] = (sign * c, p)
        return IndexTensor(self.base + sign * other.base, {a: v for a, v in coeffs.items() if v[0]}, ndim)

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        return (-self)._combine(other, 1)

    def __neg__(self):
        return self * -1

    def __mul__(self, k):
        if not isinstance(k, int) or isinstance(k, bool):
            raise NkiError("an nl.arange index can only be scaled by a constant integer")
        return IndexTensor(self.base * k, {a: (c * k, p) for a, (c, p) in self.coeffs.items()}, self.ndim)

    __rmul__ = __mul__

    def __getitem__(self, key):
        """Layout changes only: `[:, None]`, `[None, :]`."""
        key = key if isinstance(key, tuple) else (key,)
        kept = [i for i, k in enumerate(key) if k is not None]
        if len(kept) != self.ndim or any(not (isinstance(key[i], slice) and key[i] == slice(None)) for i in kept):
            raise NkiError("an nl.arange index takes only ':' and None, e.g. nl.arange(128)[:, None]")
        return IndexTensor(self.base, {a: (c, kept[p]) for a, (c, p) in self.coeffs.items()}, len(key))

    def single_axis(self):
        if len(self.coeffs) != 1:
            return None
        (axis, (c, pos)), = self.coeffs.items()
        return axis, c, pos

    def _compare(self, op, bound):
        return Predicate([(self, op, bound)])

    def __lt__(self, b):
        return self._compare("<", b)

    def __le__(self, b):
        return self._compare("<=", b)

    def __gt__(self, b):
        return self._compare(">", b)

    def __ge__(self, b):
        return self._compare(">=", b)

    __hash__ = object.__hash__


class Predicate:
    """A conjunction of `index op bound` over nl.arange indices: an NKI mask."""

    def __init__(self, clauses):
        self.clauses = clauses

    def __and__(self, other):
        if not isinstance(other, Predicate):
            raise NkiError("a mask combines comparisons of nl.arange indices with '&'")
        return Predicate(self.clauses + other.clauses)

    def ranges(self):
        """{instruction axis (0 = partition, k = free axis k-1): (start, size)} of the kept range."""
        out = {}
        for index, op, bound in self.clauses:
            if not is_index(bound):
                raise NkiError("a mask compares an nl.arange index with an integer or loop expression")
            found = index.single_axis()
            if found is None:
                raise NkiError("each comparison in a mask must involve exactly one nl.arange axis")
            axis, c, pos = found
            base = index.base
            if c < 0:  # -a < B  <=>  a > -B
                c, base, bound = -c, -base, -bound
                op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
            lo, hi = 0, axis.size
            diff = bound - base
            if op == "<":
                hi = ex.floordiv(diff + c - 1, c)
            elif op == "<=":
                hi = ex.floordiv(diff, c) + 1
            elif op == ">":
                lo = ex.floordiv(diff, c) + 1
            else:
                lo = ex.floordiv(diff + c - 1, c)
            key = pos + (2 - index.ndim if index.ndim < 2 else 0)
            prev_lo, prev_hi = out.get(key, (0, axis.size))
            out[key] = (ex.emax(prev_lo, lo), ex.emin(prev_hi, hi))
        return {k: (lo, ex.emax(0, hi - lo)) for k, (lo, hi) in out.items()}


def arange(start, stop=None, step=1):
    if stop is None:
        start, stop = 0, start
    if ex.is_symbolic_size(stop) and isinstance(start, int) and step == 1:
        n = stop - start  # nl.arange(COLS) of a symbolic argument: a symbolic size
        if (ex.known(n) or 0) <= 0:
            raise NkiError(f"nl.arange({start}, {ex.render(stop)}) is empty at the arguments' defaults")
        return IndexTensor(start, {_Axis(n): (1, 0)}, 1)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, stop, step)) or step <= 0:
        raise NkiError("nl.arange takes constant integers (and a positive step), or a stop of symbolic "
                       "arguments")
    n = len(range(start, stop, step))
    if n <= 0:
        raise NkiError(f"nl.arange({start}, {stop}, {step}) is empty")
    return IndexTensor(start, {_Axis(n): (step, 0)}, 1)


class MGridResult(tuple):
    """The IndexTensors of nl.mgrid[...]: unpack them, or use .p (partition), .x, .y, .z."""

    p = property(lambda self: self[0])
    x = property(lambda self: self[1])
    y = property(lambda self: self[2])
    z = property(lambda self: self[3])


class _MGrid:
    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        out = []
        for pos, s in enumerate(key):
            if not isinstance(s, slice):
                raise NkiError("nl.mgrid takes slices, e.g. nl.mgrid[0:128, 0:512]")
            index = arange(s.start or 0, s.stop, s.step or 1)
            (axis, (c, _)), = index.coeffs.items()
            out.append(IndexTensor(index.base, {axis: (c, pos)}, len(key)))
        return MGridResult(out)


mgrid = _MGrid()


class DynSlice:
    """nl.ds(start, size): a slice whose start may be a loop expression."""

    def __init__(self, start, size):
        if not is_index(start) or not isinstance(size, int) or size <= 0:
            raise NkiError("nl.ds(start, size) takes an integer/loop-expression start and a constant size")
        self.start, self.size = start, size


class ParDim:
    """nl.par_dim(n): marks the partition dimension of a tile's shape."""

    def __init__(self, size):
        self.size = size

    def __index__(self):
        return self.size

    def __repr__(self):
        return f"par_dim({self.size})"


# --- indexing helpers ----------------------------------------------------------------------------------
def _normalize(key, ndim):
    key = list(key) if isinstance(key, tuple) else [key]
    if any(k is Ellipsis for k in key):
        i = key.index(Ellipsis)
        key[i:i + 1] = [slice(None)] * (ndim - len(key) + 1)
    if len(key) > ndim:
        raise NkiError(f"{len(key)} indices for {ndim} dimensions")
    return key + [slice(None)] * (ndim - len(key))


def _slice(item, size):
    """(start, count, step) of a slice or nl.ds over a dimension of `size`."""
    if isinstance(item, DynSlice):
        start, n, step = item.start, item.size, 1
    else:
        step = 1 if item.step is None else item.step
        if not isinstance(step, int) or step <= 0:
            raise NkiError("slices take a constant positive step")
        start = 0 if item.start is None else item.start
        stop = size if item.stop is None else item.stop
        if not is_index(start) or not is_index(stop):
            raise NkiError(f"slice bounds must be integers or loop expressions, got {item}")
        if isinstance(start, int) and start < 0:
            start += size
        if isinstance(stop, int) and stop < 0:
            stop += size
        diff = stop - start
        if not isinstance(diff, int) and not ex.is_symbolic_size(diff):
            raise NkiError(f"a slice's size must be a constant (or of symbolic arguments): {ex.render(stop)} - "
                           f"{ex.render(start)} is not")
        n = max(0, -(-diff // step)) if isinstance(diff, int) else ex.floordiv(diff + step - 1, step)
    n_known = ex.known(n)
    if n_known is not None and n_known <= 0:
        raise NkiError("empty slice" + ("" if isinstance(n, int) else f" at the arguments' defaults ({ex.render(n)})"))
    lo, hi = ex.at_defaults(start)
    size_known = ex.known(size)
    if (n_known is not None and size_known is not None and math.inf not in (abs(lo), abs(hi))
            and (lo < 0 or hi + (n_known - 1) * step >= size_known)):
        raise NkiError(f"slice [{ex.render(start)}:{ex.render(start + n * step)}] outside a dimension of size "
                       f"{ex.render(size)}" + ("" if isinstance(size, int) and isinstance(start, int) else
                                               " (at the arguments' defaults)"))
    return start, n, step


def _scalar_index(item, size):
    if isinstance(item, int):
        if item < 0:
            item += size
        size_known = ex.known(size)
        if size_known is not None and not 0 <= ex.known(item) < size_known:
            raise NkiError(f"index {ex.render(item)} outside a dimension of size {ex.render(size)}")
    return item


def _index_extent_check(index, size):
    values = [ex.known(index.base), ex.known(size)] + [ex.known(a.size) for a in index.coeffs]
    if any(v is None for v in values):
        return
    base, size = values[:2]
    lo = base + sum(min(0, c * (n - 1)) for n, (c, _) in zip(values[2:], index.coeffs.values()))
    hi = base + sum(max(0, c * (n - 1)) for n, (c, _) in zip(values[2:], index.coeffs.values()))
    if lo < 0 or hi >= size:
        raise NkiError(f"index range [{lo}, {hi}] outside a dimension of size {size}")


# --- HBM -------------------------------------------------------------------------------------------------
class HbmView:
    """A view of an HBM tensor: offset + [(stride, count)] in elements. `checks` keeps, for each
    dimension indexed by nl.arange expressions, (base, [(coeff, position, size)], dimension size):
    its bounds are checked when an instruction uses the view, after the mask narrowed it."""

    def __init__(self, tensor, offset, axes, checks=()):
        self.tensor = tensor
        self.offset = offset
        self.axes = tuple(axes)
        self.checks = tuple(checks)

    shape = property(lambda self: tuple(n for _, n in self.axes))
    dtype = property(lambda self: self.tensor.dtype)
    ndim = property(lambda self: len(self.axes))

    def __getitem__(self, key):
        items = _normalize(key, len(self.axes))
        offset, basic, advanced = self.offset, [], []
        for (stride, size), item in zip(self.axes, items):
            if isinstance(item, IndexTensor):
                advanced.append((stride, item, size))
            elif isinstance(item, (slice, DynSlice)):
                start, n, step = _slice(item, size)
                offset = offset + start * stride
                basic.append((stride * step, n))
            elif is_index(item):
                offset = offset + _scalar_index(item, size) * stride
            else:
                raise NkiError(f"unsupported index {item!r} (the subset takes ints, loop expressions, "
                               "slices, nl.ds, nl.arange/nl.mgrid expressions)")
        if not advanced:
            return HbmView(self.tensor, offset, basic)
        if basic:
            raise NkiError("mixing slices with nl.arange/nl.mgrid indices is outside the subset: index "
                           "every dimension with nl.arange/nl.mgrid expressions (or integers)")
        ndim = max(item.ndim for _, item, _ in advanced)
        at, strides, checks = {}, {}, []
        for stride, item, size in advanced:
            offset = offset + item.base * stride
            terms = []
            for axis, (c, pos) in item.coeffs.items():
                pos += ndim - item.ndim
                if at.setdefault(pos, axis) is not axis:
                    raise NkiError("two different nl.arange axes at the same position of an index")
                strides[axis] = strides.get(axis, 0) + c * stride
                terms.append((c, pos, axis.size))
            checks.append((item.base, terms, size))
        axes = [(strides[at[k]], at[k].size) if k in at else (0, 1) for k in range(ndim)]
        return HbmView(self.tensor, offset, axes, checks)

    def __setitem__(self, key, value):
        raise NkiError("an HBM tensor is written with nl.store (or nisa.dma_copy), not by assignment")

    def reshape(self, shape):
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        total = math.prod(self.shape)
        wild = [k for k, n in enumerate(shape) if isinstance(n, int) and n == -1]
        if len(wild) == 1:
            known = math.prod(n for k, n in enumerate(shape) if k != wild[0])
            shape = tuple(ex.floordiv(total, known) if k == wild[0] else n for k, n in enumerate(shape))
        if not ex.size_eq(math.prod(shape), total):
            raise NkiError(f"can't reshape {self.shape} to {shape}")
        expect = 1
        for stride, n in reversed(self.axes):
            if not ex.same(n, 1) and not ex.same(stride, expect):
                raise NkiError("reshape works on a contiguous HBM tensor or view only")
            expect *= n
        strides, s = [], 1
        for n in reversed(shape):
            strides.append(s)
            s *= n
        return HbmView(self.tensor, self.offset, list(zip(reversed(strides), shape)))

    def operand(self):
        axes = self.axes if len(self.axes) > 1 else self.axes + ((1, 1),)
        return Hbm(self.tensor, self.offset, axes)

    def __repr__(self):
        return f"<HBM {self.tensor.name}{list(self.shape)} {self.dtype.name}>"


# --- on chip -----------------------------------------------------------------------------------------------
class TileView:
    """A box of one copy of an SBUF/PSUM buffer, with the dimensions still left to index."""

    __slots__ = ("buffer", "copy", "p", "f", "dims")

    def __init__(self, buffer, copy, p, f, dims):
        self.buffer = buffer
        self.copy = copy
        self.p = p                 # (start, size)
        self.f = tuple(f)          # (start, size) per buffer free dimension
        self.dims = tuple(dims)    # "p" or the index of a free dimension, in the tile's order

    @staticmethod
    def whole(buffer, copy, dims=None):
        if dims is None:
            dims = ("p",) + tuple(range(len(buffer.shape)))
        return TileView(buffer, copy, (0, buffer.partitions), [(0, n) for n in buffer.shape], dims)

    def _box(self, d):
        return self.p if d == "p" else self.f[d]

    shape = property(lambda self: tuple(self._box(d)[1] for d in self.dims))
    dtype = property(lambda self: self.buffer.dtype)
    ndim = property(lambda self: len(self.dims))
    partitions = property(lambda self: self.p[1])
    free_size = property(lambda self: math.prod(n for _, n in self.f))
    memory = property(lambda self: self.buffer.memory)

    def __getitem__(self, key):
        items = _normalize(key, len(self.dims))
        p, f, dims, last_pos = self.p, list(self.f), [], -1
        ndim = max([i.ndim for i in items if isinstance(i, IndexTensor)] or [0])
        for d, item in zip(self.dims, items):
            start, size = self._box(d)
            if isinstance(item, IndexTensor):
                found = item.single_axis()
                if found is None and not item.coeffs:
                    box, keep = (start + _scalar_index(item.base, size), 1), False
                elif found is None or found[1] != 1:
                    raise NkiError("on-chip tiles are indexed by boxes: an nl.arange index with step 1 "
                                   "(plus an offset) per dimension")
                else:
                    axis, _, pos = found
                    pos += ndim - item.ndim
                    if pos <= last_pos:
                        raise NkiError("on-chip indices must keep the dimensions in order (a tile can't "
                                       "be transposed by indexing)")
                    last_pos = pos
                    _index_extent_check(item, size)
                    box, keep = (start + item.base, axis.size), True
            elif isinstance(item, (slice, DynSlice)):
                s0, n, step = _slice(item, size)
                if step != 1:
                    raise NkiError("strided on-chip access is outside the subset (the format's on-chip "
                                   "operands are boxes)")
                box, keep = (start + s0, n), True
            elif is_index(item):
                box, keep = (start + _scalar_index(item, size), 1), False
            else:
                raise NkiError(f"unsupported tile index {item!r}")
            if d == "p":
                p = box
            else:
                f[d] = box
            if keep:
                dims.append(d)
        return TileView(self.buffer, self.copy, p, f, dims)

    def __setitem__(self, key, value):
        from .ops import assign

        assign(self[key], value)

    def operand(self):
        return OnChip(self.buffer, self.copy, self.p, self.f)

    def same_box(self, other):
        return (isinstance(other, TileView) and other.buffer is self.buffer and ex.same(other.copy, self.copy)
                and ex.same_all(other.p + sum(other.f, ()), self.p + sum(self.f, ())))

    def alias(self, other):
        for slot in TileView.__slots__:
            setattr(self, slot, getattr(other, slot))

    def broadcast_to(self, shape):
        from .ops import broadcast_to

        return broadcast_to(self, shape)

    def __repr__(self):
        return f"<tile {self.buffer.hint}{list(self.shape)} {self.dtype.name} {self.memory}>"

    __hash__ = object.__hash__


def _arith(name, reverse=False):
    def method(self, other):
        from . import ops

        return ops.binary(other, self, name) if reverse else ops.binary(self, other, name)
    return method


def _inplace(name):
    def method(self, other):
        from . import ops

        return ops.inplace(self, other, name)
    return method


for _name, _op in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide"),
                   ("pow", "pow")):
    setattr(TileView, f"__{_name}__", _arith(_op))
    setattr(TileView, f"__r{_name}__", _arith(_op, reverse=True))
    setattr(TileView, f"__i{_name}__", _inplace(_op))
for _name, _op in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"),
                   ("eq", "equal"), ("ne", "not_equal")):
    setattr(TileView, f"__{_name}__", _arith(_op))


def _negate(self):
    from .ops import negative

    return negative(self)


TileView.__neg__ = _negate


class BroadcastTile:
    """tile.broadcast_to(shape) of a (P, 1) tile along its free axis: elementwise ops use it as a
    per-partition operand; anything else materializes it (ops.materialize)."""

    def __init__(self, source, shape):
        self.source = source
        self.shape = tuple(shape)

    dtype = property(lambda self: self.source.dtype)
    partitions = property(lambda self: self.shape[0])
    free_size = property(lambda self: math.prod(self.shape[1:]))


# --- operands ---------------------------------------------------------------------------------------------
def _restrict_tile(view, axis, start, size):
    if axis == 0:
        if ex.same(view.p[1], 1) and not ex.same(size, 1):
            return view
        return TileView(view.buffer, view.copy, (view.p[0] + start, size), view.f, view.dims)
    free_dims = [d for d in view.dims if d != "p"]
    if axis - 1 >= len(free_dims) or ex.same(view.f[free_dims[axis - 1]][1], 1):
        return view
    f = list(view.f)
    j = free_dims[axis - 1]
    f[j] = (f[j][0] + start, size)
    return TileView(view.buffer, view.copy, view.p, f, view.dims)


def _restrict_hbm(view, axis, start, size):
    if axis >= len(view.axes) or ex.same(view.axes[axis][1], 1):
        return view
    stride = view.axes[axis][0]
    axes = list(view.axes)
    axes[axis] = (stride, size)
    return HbmView(view.tensor, view.offset + start * stride, axes)


def _check_hbm_bounds(view, ranges):
    """Each arange-indexed dimension stays inside the tensor over the (masked) ranges, where known."""
    for base, terms, size in view.checks:
        lo = hi = base
        for c, pos, n in terms:
            start, count = ranges.get(pos, (0, n))
            if not all(isinstance(v, int) for v in (lo, start, count)) or count <= 0:
                return
            lo, hi = lo + min(c * start, c * (start + count - 1)), hi + max(c * start, c * (start + count - 1))
        if isinstance(lo, int) and isinstance(size, int) and (lo < 0 or hi >= size):
            raise NkiError(f"index range [{lo}, {hi}] outside a dimension of size {size} of "
                           f"'{view.tensor.name}' (a mask= can exclude the rows past the end)")


def operand_of(value, mask=None):
    """The format operand for a field value, narrowed by the mask's ranges."""
    if isinstance(value, (TileView, HbmView)):
        ranges = mask.ranges() if mask is not None else {}
        if isinstance(value, HbmView):
            _check_hbm_bounds(value, ranges)
        for axis, (start, size) in sorted(ranges.items()):
            value = (_restrict_tile if isinstance(value, TileView) else _restrict_hbm)(value, axis, start, size)
        return value.operand()
    return value


def new_tile(shape, dtype, memory="sbuf", hint=None, temp=True, bufs=None):
    """A fresh tile of shape (P, free...) for an op's result."""
    shape = tuple(shape)
    c = ctx()
    buf, copy = c.new_buffer(hint or c.hint("t"), memory, shape[0], shape[1:], dtype, bufs=bufs, temp=temp)
    return TileView.whole(buf, copy)
