"""Running a kernel function: tracing it to a program, or executing it with numpy; `nki.jit`."""

import inspect
import math

from . import expr as ex
from .context import DEFAULT_BUFS, KernelContext
from .dtypes import to_dtype
from .errors import NkiError
from .program import Loop, OnChip, Program
from .tiles import HbmView, TileView


class Symbol:
    """A symbolic integer argument: traced as the name NAME, written into the program's `args`
    with `default` (the value --check runs with and the program's default). `default` None: the
    kernel parameter's own default, or another Symbol's of that name."""

    def __init__(self, name, default=None):
        if not name.isidentifier():
            raise NkiError(f"'{name}' is not a usable argument name", location=(None, None))
        if default is not None and (isinstance(default, bool) or not isinstance(default, int) or default <= 0):
            raise NkiError(f"symbolic argument {name}: the default is a positive integer, got {default!r}",
                           location=(None, None))
        self.name, self.default = name, default

    def __repr__(self):
        return f"sym:{self.name}" + ("" if self.default is None else f"={self.default}")


class TensorSpec:
    """A kernel parameter that is an HBM tensor: dtype[shape]; a dimension is an int or a Symbol."""

    def __init__(self, dtype, shape):
        self.dtype = to_dtype(dtype)
        self.shape = tuple(n if isinstance(n, Symbol) else int(n) for n in shape)
        if not self.shape or any(not isinstance(n, Symbol) and n <= 0 for n in self.shape):
            raise NkiError(f"a tensor's shape must be positive integers, got {list(self.shape)}")

    def __repr__(self):
        return f"{self.dtype.fmt}{list(self.shape)}"


def symbols_of(fn, args):
    """The symbolic arguments of `args` (name -> Symbol or TensorSpec with Symbol dimensions), in
    order of appearance, with their default values: name -> default."""
    params = inspect.signature(fn).parameters
    found = {}

    def note(sym, fallback=None):
        default = sym.default if sym.default is not None else fallback
        if sym.name in found and default is not None and found[sym.name] not in (None, default):
            raise NkiError(f"symbolic argument {sym.name} given two defaults, {found[sym.name]} and {default}",
                           location=(None, None))
        if found.get(sym.name) is None:
            found[sym.name] = default

    for name, value in args.items():
        if isinstance(value, Symbol):
            p = params.get(name)
            own = p.default if p is not None and p.default is not inspect.Parameter.empty else None
            note(value, own if isinstance(own, int) and not isinstance(own, bool) else None)
        elif isinstance(value, TensorSpec):
            for n in value.shape:
                if isinstance(n, Symbol):
                    note(n)
    missing = [n for n, v in found.items() if v is None]
    if missing:
        raise NkiError(f"symbolic argument {missing[0]} has no value: give one (--arg {missing[0]}=sym:VALUE, or "
                       f"a dimension {missing[0]}=VALUE), or a default in the kernel's signature", location=(None, None))
    for n, v in found.items():
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise NkiError(f"symbolic argument {n}: its value is a positive integer, got {v!r}", location=(None, None))
    return found


def concrete(args, symbols):
    """`args` with every symbolic argument at its value: what the numpy run (--check) takes."""
    out = {}
    for name, value in args.items():
        if isinstance(value, Symbol):
            out[name] = symbols[value.name]
        elif isinstance(value, TensorSpec) and any(isinstance(n, Symbol) for n in value.shape):
            out[name] = TensorSpec(value.dtype, [symbols[n.name] if isinstance(n, Symbol) else n for n in value.shape])
        else:
            out[name] = value
    return out


def bind(fn, args):
    """Check `args` (name -> value) against fn's parameters: each one without a default is given,
    no unknown name. Returns the names in parameter order."""
    params = inspect.signature(fn).parameters
    unknown = [n for n in args if n not in params]
    if unknown:
        raise NkiError(f"{fn.__name__} has no parameter '{unknown[0]}' (it takes: {', '.join(params)})",
                       location=(None, None))
    missing = [n for n, p in params.items() if n not in args and p.default is inspect.Parameter.empty
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if missing:
        raise NkiError(f"{fn.__name__} needs --arg for: {', '.join(missing)} (a tensor as NAME=dtype[d0,d1,...], "
                       "a number as NAME=value)", location=(None, None))
    return [n for n in params if n in args]


def _full_view(t):
    return HbmView(t, 0, zip(t.strides, t.shape))


def _grid(grid):
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    if not grid or any(not isinstance(g, int) or g <= 0 for g in grid):
        raise NkiError(f"a launch grid is positive integers, got {grid}", location=(None, None))
    return grid


def _returned(result):
    items = [] if result is None else list(result) if isinstance(result, (tuple, list)) else [result]
    tensors = []
    for item in items:
        if isinstance(item, TileView):
            raise NkiError("a kernel returns HBM tensors: store the tile into an nl.ndarray(..., "
                           "buffer=nl.shared_hbm) and return that")
        if not isinstance(item, HbmView) or not ex.same(item.offset, 0) or not ex.same_all(item.shape, item.tensor.shape):
            raise NkiError(f"a kernel returns whole HBM tensors, got {item!r}")
        tensors.append(item.tensor)
    return tensors


def _classify(program, returned):
    """Tensor kinds: a parameter the kernel stores into is an output (an input if it reads it
    first: in-place); an allocated tensor is an output when returned, else scratch."""
    for t in program.tensors:
        if t.param:
            t.kind = "output" if t.written and not t.read_first else "input"
        else:
            t.kind = "output" if t in returned else "scratch"
    outputs = list(returned) or [t for t in program.tensors if t.param and t.written]
    if not outputs:
        raise NkiError("the kernel neither returns a tensor nor stores into a parameter: it has no output",
                       location=(None, None))
    return outputs


def drop_dead(program, candidates):
    """Remove the candidate instructions whose results nothing reads (every operand they write is
    an on-chip buffer no remaining instruction reads): the (1, F) loads whose partition broadcast
    became a stride-0 reload of the same data. Emptied loops go too; buffers no instruction names
    any more are not allocated."""
    def walk(body):
        for node in body:
            if isinstance(node, Loop):
                yield from walk(node.body)
            else:
                yield node

    def operands(instr, written):
        for key, value in instr.fields.items():
            if isinstance(value, OnChip) and (key in instr.writes) == written:
                yield value

    while True:
        read = {o.buffer for instr in walk(program.body) for o in operands(instr, False)}
        dead = set()
        for instr in walk(program.body):
            written = [instr.fields[k] for k in instr.writes if k in instr.fields]
            if instr in candidates and written and all(isinstance(o, OnChip) and o.buffer not in read
                                                       for o in written):
                dead.add(instr)
        if not dead:
            break

        def prune(body):
            kept = []
            for node in body:
                if isinstance(node, Loop):
                    node.body = prune(node.body)
                    if node.body:
                        kept.append(node)
                elif node not in dead:
                    kept.append(node)
            return kept
        program.body = prune(program.body)
    named = {o.buffer for instr in walk(program.body) for o in operands(instr, True)} | \
        {o.buffer for instr in walk(program.body) for o in operands(instr, False)}
    for b in program.buffers:
        b.used = b in named


SBUF_PARTITION_BYTES = 192 * 1024  # trn1's (trn2 has 224 KiB): the smallest shipped platform
PSUM_PARTITION_BYTES = 16 * 1024
PSUM_BANK_BYTES = 2 * 1024


def footprint(buffer, bufs):
    """Bytes per partition of `bufs` copies: in SBUF one after another, in PSUM packed into banks
    (as many copies per 2 KiB bank as fit, none across a bank: docs/kernels.md, Buffers). Sizes of
    symbolic arguments count at their default values."""
    copy_bytes = ex.known(buffer.free_elems) * buffer.dtype.itemsize
    bufs = ex.known(bufs)
    if buffer.memory == "sbuf":
        return bufs * copy_bytes
    per_bank = max(1, PSUM_BANK_BYTES // copy_bytes)
    return -(-bufs // per_bank) * PSUM_BANK_BYTES


def fit_copies(program, sbuf_bytes=SBUF_PARTITION_BYTES, psum_bytes=PSUM_PARTITION_BYTES):
    """Where the rotating copies of a memory's buffers don't fit its bytes per partition, give the
    largest buffers one copy until they do. Buffers that don't fit with one copy each are an error
    naming the largest and their lines. Returns the buffers changed."""
    from .program import live_buffers

    changed = []
    for memory, capacity in (("sbuf", sbuf_bytes), ("psum", psum_bytes)):
        buffers = [b for b in live_buffers(program) if b.memory == memory]
        size = {b: footprint(b, 1) for b in buffers}
        total = sum(footprint(b, b.bufs) for b in buffers)
        for b in sorted(buffers, key=lambda b: -size[b]):
            if total <= capacity:
                break
            if ex.known(b.bufs) > 1:
                total -= footprint(b, b.bufs) - size[b]
                b.bufs = 1
                changed.append(b)
        if total > capacity:
            largest = sorted(buffers, key=lambda b: -size[b])[:3]
            names = ", ".join(f"{b.hint} {size[b]} B ({b.line})" for b in largest)
            raise NkiError(f"the kernel's {memory.upper()} tiles need {total} bytes per partition with one copy "
                           f"each, more than {capacity} (--{memory}-bytes); the largest: {names}",
                           location=(None, None))
    return changed


def trace(fn, args, grid=1, bufs=DEFAULT_BUFS, name=None, source=None, sbuf_bytes=SBUF_PARTITION_BYTES,
          psum_bytes=PSUM_PARTITION_BYTES):
    """Trace fn(**args) (TensorSpec or number per parameter) into a Program. Returns
    (program, output tensors)."""
    grid = _grid(grid)
    order = bind(fn, args)
    symbols = symbols_of(fn, args)
    instances = math.prod(grid)
    program = Program(name or fn.__name__, source, instances)
    program.args = dict(symbols)
    context = KernelContext("trace", program, default_bufs=bufs, grid=grid,
                            pid=ex.var("pid") if instances > 1 else 0, symbols=symbols)
    with context:
        kwargs = _parameters(context, order, args)
        result = fn(**kwargs)
        outputs = _classify(program, _returned(result))
        drop_dead(program, context.replaced_loads)
        fit_copies(program, sbuf_bytes, psum_bytes)
    return program, outputs


def _parameters(context, order, args):
    kwargs = {}
    for n in order:
        value = args[n]
        if isinstance(value, TensorSpec):
            shape = [ex.var(d.name) if isinstance(d, Symbol) else d for d in value.shape]
            t = context.new_tensor(n, shape, value.dtype, "input")
            t.param = True
            kwargs[n] = _full_view(t)
        elif isinstance(value, Symbol):
            kwargs[n] = ex.var(value.name)
        else:
            kwargs[n] = value
    return kwargs


def execute(fn, args, grid=1, dtypes=None, machine=None):
    """Run fn with numpy: `args` maps parameters to numpy arrays (tensors; their NKI dtype is
    `dtypes[name]`, else the array's) or numbers. Returns (program, output tensors, machine)."""
    from .executor import Machine

    grid = _grid(grid)
    order = bind(fn, args)
    machine = machine or Machine()
    program = Program(fn.__name__, None, math.prod(grid))
    shared, result = [], None
    for pid in range(math.prod(grid)):
        context = KernelContext("numpy", program, machine=machine, grid=grid, pid=pid, shared_tensors=shared)
        with context:
            specs = {n: (TensorSpec((dtypes or {}).get(n) or _numpy_dtype(args[n].dtype), args[n].shape)
                         if _is_array(args[n]) else args[n]) for n in order}
            kwargs = _parameters(context, order, specs)
            if pid == 0:
                for n in order:
                    if _is_array(args[n]):
                        machine.allocate_tensor(kwargs[n].tensor, args[n])
            out = fn(**kwargs)
            if pid == 0:
                result = out
    return program, _classify(program, _returned(result)), machine


def _is_array(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (HbmView, TileView))


def _numpy_dtype(d):
    name = getattr(d, "name", str(d))
    return {"float64": "float32"}.get(name, name)


class Kernel:
    """A kernel function (what @nki.jit returns). Calling it with numpy arrays runs it with numpy
    and returns its outputs; kernel[grid](...) launches an SPMD grid."""

    def __init__(self, fn, grid=1):
        self.fn = fn
        self.grid = grid
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __getitem__(self, grid):
        return Kernel(self.fn, grid)

    def __call__(self, *args, **kwargs):
        import numpy as np

        bound = inspect.signature(self.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        program, outputs, machine = execute(self.fn, dict(bound.arguments), self.grid)
        returned = [machine.tensor_values(t) for t in outputs]
        for n, value in bound.arguments.items():
            t = next((t for t in program.tensors if t.param and t.name == n), None)
            if t is not None and t.written and isinstance(value, np.ndarray):
                np.copyto(value, machine.tensor_values(t), casting="unsafe")
        if all(t.param for t in outputs):
            return None
        return returned[0] if len(returned) == 1 else tuple(returned)


def jit(fn=None, **options):
    """@nki.jit or @nki.jit(...): the options of the real compiler (mode, ...) change nothing here."""
    if fn is None:
        return lambda f: Kernel(f)
    return Kernel(fn)


def simulate_kernel(kernel, *args, **kwargs):
    """Run a kernel with numpy (NKI's nki.simulate_kernel)."""
    return (kernel if isinstance(kernel, Kernel) else Kernel(kernel))(*args, **kwargs)


baremetal = jit
