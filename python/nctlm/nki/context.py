"""The running kernel: loops, allocations and the instruction stream, for both backends.

One implementation of the API drives two backends:
- trace: `affine_range`/`sequential_range` run their body once with a symbolic loop variable and
  become `loop` nodes; instructions are appended to the innermost open loop body; a tile
  allocated inside loops is one buffer with `bufs` rotating copies, copy = the iteration's linear
  index over those loops.
- numpy: loops run with concrete indices and each instruction executes on numpy arrays
  (execute.Machine) as soon as it can no longer change (see `emit`).

The last emitted instruction stays open until the next one: `t[...] = nl.load(...)` first emits a
DMA into a fresh tile, then the assignment retargets that DMA to `t` instead of adding a copy, and
`psum += nl.matmul(...)` turns the matmul into an accumulating one (start = 0).
"""

import linecache
import math
import os
import re

from . import expr as ex
from .errors import NkiError, user_frame
from .program import Buffer, Hbm, Instr, Loop, OnChip, Tensor

PMAX = 128
PSUM_BANK_BYTES = 2048  # per partition: psum_partition_bytes / psum_banks (docs/kernels.md)
DEFAULT_BUFS = 2

_current = None

_FOR_TARGET = re.compile(r"^\s*for\s+([A-Za-z_]\w*)\s+in\b")
_ASSIGN_TARGET = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?(?:[-+*/]?=)(?!=)")
# Names a loop variable can't take: the format's own (pid, functions, operators, True/False) and
# those of iota expressions (p, f0, f1, ...).
_RESERVED = {"pid", "p", "min", "max", "and", "or", "not", "True", "False"}


def ctx():
    if _current is None:
        raise NkiError("this NKI call needs a running kernel (trace it with `python3 -m nctlm.nki`, "
                       "or call the @nki.jit function with numpy arrays)")
    return _current


class _Frame:
    __slots__ = ("value", "t", "trip", "start")

    def __init__(self, value, t, trip, start):
        self.value, self.t, self.trip, self.start = value, t, trip, start


class _Zeroing:
    """A memset of 0 over a whole buffer copy, and where it sits (see first_accumulation)."""

    def __init__(self, instr, body, depth):
        self.instr, self.body, self.depth = instr, body, depth


class KernelContext:
    def __init__(self, mode, program, machine=None, default_bufs=DEFAULT_BUFS, grid=(1,), pid=0,
                 shared_tensors=None, symbols=None):
        self.mode = mode  # "trace" | "numpy"
        self.program = program
        self.machine = machine
        self.default_bufs = default_bufs
        self.grid = tuple(grid)
        self.pid = pid  # ex.var("pid") when tracing a grid, else the instance number
        self.frames = []
        self.bodies = [program.body]
        # Symbolic arguments (trace): name -> default value; they stay names in the program.
        self.symbols = dict(symbols or {})
        self.scope = {"pid"} | set(self.symbols)
        self.last = None       # the open instruction
        self.last_mask = None
        # numpy mode runs the grid one instance at a time; the k-th HBM allocation of every
        # instance is the same tensor (shared_hbm is shared by the grid).
        self.shared_tensors = shared_tensors if shared_tensors is not None else []
        self.hbm_allocs = 0
        self.replaced_loads = set()  # loads a stride-0 reload made redundant (kernel.drop_dead)

    # --- lifetime ---------------------------------------------------------------------------
    def __enter__(self):
        global _current
        if _current is not None:
            raise NkiError("a kernel is already running: kernels can't call kernels")
        _current = self
        ex.RANGES.clear()
        ex.LOOPS.clear()
        ex.ARGS.clear()
        ex.ARGS.update(self.symbols)
        for name in self.symbols:
            ex.RANGES[name] = (1, math.inf)  # shapes and block sizes: positive
        if isinstance(self.pid, ex.Expr):
            ex.RANGES["pid"] = (0, math.prod(self.grid) - 1)
        return self

    def __exit__(self, *exc):
        global _current
        _current = None
        ex.RANGES.clear()
        ex.LOOPS.clear()
        ex.ARGS.clear()
        if exc[0] is None:
            self.flush()
        return False

    # --- source-derived names ------------------------------------------------------------------
    @staticmethod
    def _source_line():
        frame = user_frame()
        if frame is None:
            return ""
        return linecache.getline(frame.f_code.co_filename, frame.f_lineno)

    def line(self):
        frame = user_frame()
        if frame is None:
            return None
        return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"

    def hint(self, default):
        m = _ASSIGN_TARGET.match(self._source_line())
        return m.group(1) if m else default

    def _loop_name(self):
        m = _FOR_TARGET.match(self._source_line())
        base = m.group(1) if m else f"i{len(self.frames)}"
        if base in _RESERVED or re.fullmatch(r"f\d+", base):
            base += "_"
        name, n = base, 1
        while name in self.scope:
            n += 1
            name = f"{base}_{n}"
        return name

    # --- loops ----------------------------------------------------------------------------------
    def range_loop(self, kind, start, stop, step):
        if stop is None:
            start, stop = 0, start
        for v in (start, stop, step):
            if isinstance(v, float) or isinstance(v, bool) or not isinstance(v, (int, ex.Expr)):
                raise NkiError(f"{kind}_range takes integers, got {v!r}")
        if not isinstance(step, int) or step <= 0:
            raise NkiError(f"{kind}_range needs a constant positive step, got {step!r}")
        trip = ex.emax(0, ex.floordiv(stop - start + step - 1, step))
        if self.mode == "numpy":
            return self._concrete_loop(start, step, trip)
        return self._symbolic_loop(kind, start, step, trip)

    def _concrete_loop(self, start, step, trip):
        for t in range(trip):
            self._boundary()
            frame = _Frame(start + step * t, t, trip, start)
            self.frames.append(frame)
            try:
                yield frame.value
            finally:
                self.frames.pop()
                self._boundary()

    def _symbolic_loop(self, kind, start, step, trip):
        if isinstance(trip, int) and trip <= 0:
            return
        if isinstance(trip, int) and trip == 1:
            yield start
            return
        name = self._loop_name()
        self._boundary()
        node = Loop(name, trip, start, step, kind)
        parent = self.bodies[-1]
        parent.append(node)
        self.bodies.append(node.body)
        self.scope.add(name)
        first_lo, first_hi = ex.bounds(start)
        ex.RANGES[name] = (first_lo, first_hi + step * (ex.bounds(trip)[1] - 1))
        ex.LOOPS[name] = (start, step, trip)
        v = ex.var(name)
        self.frames.append(_Frame(v, ex.floordiv(v - start, step), trip, start))
        try:
            yield v
        finally:
            self._boundary()
            self.frames.pop()
            self.scope.discard(name)
            ex.RANGES.pop(name, None)
            ex.LOOPS.pop(name, None)
            self.bodies.pop()
            if not node.body:
                parent.remove(node)

    def _boundary(self):
        """Loop entry/exit: the open instruction can no longer be retargeted."""
        self.flush()

    def linear_iteration(self):
        """(linear index of the current iteration over the open loops, iteration count or None)."""
        index, count = 0, 1
        for frame in self.frames:
            index = index * frame.trip + frame.t
            count = count * frame.trip if isinstance(count, int) and isinstance(frame.trip, int) else None
        return index, count

    # --- allocation ------------------------------------------------------------------------------
    def new_buffer(self, hint, memory, partitions, shape, dtype, bufs=None, temp=False):
        """A buffer; `temp` marks an op's result, which an assignment may retarget away."""
        shape = tuple(shape) if shape else (1,)
        for n in (partitions,) + shape:
            if isinstance(n, bool) or not (isinstance(n, int) or ex.is_symbolic_size(n)) or (ex.known(n) or 0) <= 0:
                raise NkiError(f"tile dimensions must be positive integers (or sizes of symbolic arguments), got "
                               f"{(partitions,) + shape}")
        if ex.known(partitions) > PMAX:
            raise NkiError(f"partition dimension {ex.render(partitions)} > {PMAX} (nl.tile_size.pmax): split the "
                           f"tile, or put the dimension of size {ex.render(partitions)} in the free axes")
        per_copy = ex.known(math.prod(shape)) * dtype.itemsize
        if memory == "psum" and per_copy > PSUM_BANK_BYTES:
            raise NkiError(f"a PSUM tile holds at most {PSUM_BANK_BYTES} bytes per partition (one bank: "
                           f"{PSUM_BANK_BYTES // 4} fp32); this one needs {per_copy}")
        if bufs is not None and not isinstance(bufs, int) and not ex.is_symbolic_size(bufs):
            raise NkiError(f"bufs= is a positive integer (or a symbolic argument), got {bufs!r}")
        if self.mode == "trace":
            index, count = self.linear_iteration()
            if bufs is None:
                bufs = self.default_bufs if count is None else max(1, min(self.default_bufs, count))
            copy = index if not isinstance(bufs, int) or bufs > 1 else 0
        else:
            bufs, copy = 1, 0
        buf = Buffer(hint, memory, partitions, shape, dtype, bufs)
        buf.producer = None
        buf.zeroing = None
        buf.line = self.line()
        buf.temp = temp
        buf.read = False
        buf.load_src = None
        self.program.buffers.append(buf)
        if self.machine is not None:
            self.machine.allocate(buf)
        return buf, copy

    def new_tensor(self, name, shape, dtype, kind, per_instance=False):
        if self.mode == "numpy" and self.hbm_allocs < len(self.shared_tensors):
            t = self.shared_tensors[self.hbm_allocs]
            self.hbm_allocs += 1
            return t
        taken = {t.name for t in self.program.tensors}
        unique, n = name, 1
        while unique in taken:
            n += 1
            unique = f"{name}_{n}"
        t = Tensor(unique, shape, dtype, kind, per_instance)
        t.param = False
        t.written = t.read_first = False
        self.program.tensors.append(t)
        self.shared_tensors.append(t)
        self.hbm_allocs += 1
        if self.machine is not None:
            self.machine.allocate_tensor(t)
        return t

    # --- the instruction stream --------------------------------------------------------------------
    def flush(self):
        if self.last is not None and self.mode == "numpy":
            self.machine.run(self.last, {})
        self.last = None
        self.last_mask = None

    def emit(self, op, fields, writes=("dst",), mask=None):
        """Emit one instruction. `fields` holds views (tiles.TileView / tiles.HbmView), numbers and
        strings; views become operands (restricted by `mask`). Returns the instruction."""
        self.flush()
        instr = Instr(op, {}, self.line())
        self._fill(instr, fields, writes, mask)
        if self.mode == "trace":
            self.bodies[-1].append(instr)
        self.last = instr
        self.last_mask = mask
        return instr

    def _fill(self, instr, fields, writes, mask):
        from .tiles import operand_of  # tiles imports this module

        instr.fields.clear()
        for key, value in fields.items():
            operand = operand_of(value, mask)
            instr.fields[key] = operand
            written = key in writes
            if isinstance(operand, OnChip):
                operand.buffer.used = True
                operand.buffer.zeroing = None
                if written:
                    operand.buffer.producer = instr
                    operand.buffer.load_src = None
                else:
                    operand.buffer.read = True
            elif isinstance(operand, Hbm):
                t = operand.tensor
                if written:
                    t.written = True
                elif not t.written:
                    t.read_first = True
            if self.mode == "trace":
                self._check_scope(key, operand)
        instr.writes = writes
        instr.views = dict(fields)

    def _check_scope(self, key, operand):
        values = []
        if isinstance(operand, OnChip):
            values = [operand.copy, *operand.p] + [v for box in operand.f for v in box]
        elif isinstance(operand, Hbm):
            values = [operand.offset] + [v for pair in operand.ap for v in pair]
        else:
            values = [operand]
        used = set()
        for v in values:
            ex.real_names(v, used)
        stale = used - self.scope
        if stale:
            raise NkiError(
                f"'{key}' uses the loop variable '{sorted(stale)[0]}' outside its loop: a tile allocated "
                "inside an affine_range/sequential_range loop lives for one iteration (allocate it before "
                "the loop to keep it)")

    def zeroed(self, view, instr):
        """`instr` (just emitted) set the whole of view's buffer copy to 0."""
        if self.last_mask is None and view.operand().is_whole():
            view.buffer.zeroing = _Zeroing(instr, self.bodies[-1], len(self.frames))

    def first_accumulation(self, view):
        """If view's buffer copy was zeroed and nothing touched it since, the start flag of a matmul
        accumulating into it now: 1 on the first iteration of the loops opened since the zeroing,
        else 0 (1 outside such loops) — and the zeroing memset goes, the first matmul overwriting
        instead (0 + x is x exactly). None otherwise."""
        z = getattr(view.buffer, "zeroing", None)
        if z is None or not view.operand().is_whole():
            return None
        start = 1
        for frame in self.frames[z.depth:]:
            start = ex.logical("and", start, ex.compare("==", frame.value, frame.start))
        if self.mode == "trace":
            z.body.remove(z.instr)
        return start

    def can_retarget(self, view):
        """Whether `view` is the untouched result of the open instruction (so that instruction can
        write somewhere else instead)."""
        buf = view.buffer
        return (buf.temp and self.last is not None and buf.producer is self.last and not buf.read
                and not buf.dropped and view.operand().is_whole())

    def retarget(self, view, target, **changes):
        """Point the open instruction's dst at `target` (dropping `view`'s buffer); `changes` sets
        other fields (start=0 for an accumulating matmul)."""
        instr = self.last
        fields = dict(instr.views)
        fields["dst"] = target
        fields.update(changes)
        view.buffer.dropped = True
        self._fill(instr, fields, instr.writes, self.last_mask)
        view.alias(target)
