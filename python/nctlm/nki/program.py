"""The kernel program (docs/kernels.md, "Kernel program format, version 1") as Python objects.

The tracer builds these; `to_json` writes the format; `from_json` reads it back so the numpy
executor can run a written program (tests hold the trace to the direct numpy run that way).
Numbers anywhere may be ints or expressions (expr.Expr); floats only where the format takes a
number (memset value, scale, scalar operands).
"""

import math

from . import expr as ex
from .dtypes import by_name
from .errors import NkiError

FORMAT = "nctlm-kernel"
VERSION = 1
# JSON has no infinities: +-inf (a common mask value) is written as the largest float32.
FLOAT32_MAX = 3.4028234663852886e38


class Tensor:
    """An HBM tensor: a kernel parameter, or one the kernel allocates."""

    def __init__(self, name, shape, dtype, kind, per_instance=False):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype
        self.kind = kind  # "input" | "output" | "scratch"
        self.per_instance = per_instance
        self.strides = _row_major(self.shape)
        self.size = math.prod(self.shape)


def _row_major(shape):
    strides, s = [], 1
    for n in reversed(shape):
        strides.append(s)
        s *= n
    return tuple(reversed(strides))


class Buffer:
    """An SBUF or PSUM allocation: `partitions` x `shape` per copy, `bufs` rotating copies."""

    def __init__(self, hint, memory, partitions, shape, dtype, bufs=1):
        self.hint = hint  # the name wanted; `name` is made unique when the program is written
        self.name = hint
        self.memory = memory  # "sbuf" | "psum"
        self.partitions = partitions
        self.shape = tuple(shape)
        self.dtype = dtype
        self.bufs = bufs
        self.dropped = False  # an op's result retargeted into another tile before anything read it
        self.used = False     # named by an emitted instruction

    @property
    def free_elems(self):
        return math.prod(self.shape)


class OnChip:
    """An access to a box of one copy of a buffer: partitions p, free ranges f (start, size)."""

    __slots__ = ("buffer", "copy", "p", "f")

    def __init__(self, buffer, copy, p, f):
        self.buffer = buffer
        self.copy = copy
        self.p = p
        self.f = tuple(f)

    def is_whole(self):
        return ex.same_all(self.p, (0, self.buffer.partitions)) and all(
            ex.same_all(box, (0, n)) for box, n in zip(self.f, self.buffer.shape))


class Hbm:
    """An access pattern into an HBM tensor: element (i0, i1, ...) at offset + sum(i_d * stride_d)."""

    __slots__ = ("tensor", "offset", "ap")

    def __init__(self, tensor, offset, ap):
        self.tensor = tensor
        self.offset = offset
        self.ap = tuple(ap)


class Instr:
    __slots__ = ("op", "fields", "line", "writes", "views")

    def __init__(self, op, fields, line=None):
        self.op = op
        self.fields = fields  # dict, in the order written
        self.line = line
        self.writes = ("dst",)  # the fields it writes (the tracer's bookkeeping)
        self.views = None       # the tracer's views behind the operands (for retargeting)


class Loop:
    __slots__ = ("var", "trip", "start", "step", "kind", "body")

    def __init__(self, var, trip, start=0, step=1, kind="affine", body=None):
        self.var = var
        self.trip = trip
        self.start = start
        self.step = step
        self.kind = kind
        self.body = [] if body is None else body


class Program:
    def __init__(self, name, source=None, grid=1):
        self.name = name
        self.source = source
        self.grid = grid
        self.args = {}  # symbolic arguments: name -> default value
        self.tensors = []
        self.buffers = []
        self.body = []


# --- writing -------------------------------------------------------------------------------------
def _number(x):
    if isinstance(x, ex.Real):
        return x.text
    if isinstance(x, float):
        if math.isnan(x):
            raise NkiError("NaN can't be written into a kernel program")
        if math.isinf(x):
            return FLOAT32_MAX if x > 0 else -FLOAT32_MAX
        return x
    return ex.to_json(x)


def _operand_json(x):
    if isinstance(x, OnChip):
        d = {"buf": x.buffer.name}
        if not ex.same(x.buffer.bufs, 1):  # copies are taken modulo bufs: with one, every copy is 0
            d["copy"] = ex.to_json(x.copy)
        if not ex.same_all(x.p, (0, x.buffer.partitions)):
            d["p"] = [ex.to_json(v) for v in x.p]
        if not all(ex.same_all(box, (0, n)) for box, n in zip(x.f, x.buffer.shape)):
            d["f"] = [[ex.to_json(a), ex.to_json(b)] for a, b in x.f]
        return d
    if isinstance(x, Hbm):
        return {"tensor": x.tensor.name, "offset": ex.to_json(x.offset),
                "ap": [[ex.to_json(s), ex.to_json(n)] for s, n in x.ap]}
    return _number(x)


def _node_json(node):
    if isinstance(node, Loop):
        d = {"loop": node.var, "trip": ex.to_json(node.trip)}
        if not ex.same(node.start, 0):
            d["start"] = ex.to_json(node.start)
        if not ex.same(node.step, 1):
            d["step"] = ex.to_json(node.step)
        d["kind"] = node.kind
        d["body"] = [_node_json(n) for n in node.body]
        return d
    d = {"op": node.op}
    for key, value in node.fields.items():
        d[key] = _operand_json(value)
    if node.line:
        d["line"] = node.line
    return d


def live_buffers(program):
    return [b for b in program.buffers if b.used and not b.dropped]


def name_buffers(program):
    """Unique buffer names from their hints, distinct from tensor names."""
    taken = {t.name for t in program.tensors}
    for b in live_buffers(program):
        name, n = b.hint, 1
        while name in taken:
            name = f"{b.hint}_{n}"
            n += 1
        taken.add(name)
        b.name = name


def to_json(program):
    name_buffers(program)
    doc = {"format": FORMAT, "version": VERSION, "name": program.name}
    if program.source:
        doc["source"] = program.source
    doc["args"] = dict(program.args)
    doc["grid"] = ex.to_json(program.grid)
    tensors = []
    for t in program.tensors:
        d = {"name": t.name, "shape": [ex.to_json(n) for n in t.shape], "dtype": t.dtype.fmt, "kind": t.kind}
        if t.per_instance:
            d["per_instance"] = True
        tensors.append(d)
    doc["tensors"] = tensors
    doc["buffers"] = [{"name": b.name, "memory": b.memory, "partitions": ex.to_json(b.partitions),
                       "shape": [ex.to_json(n) for n in b.shape], "dtype": b.dtype.fmt, "bufs": ex.to_json(b.bufs)}
                      for b in live_buffers(program)]
    doc["body"] = [_node_json(n) for n in program.body]
    return doc


# --- reading (for the numpy interpreter of written programs) ---------------------------------------
_FMT_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8": "float8_e4m3",
              "int32": "int32"}
# Fields holding a number that may be written as an expression string.
_NUMERIC_KEYS = {"start", "stop", "value", "scale", "operand0", "operand1"}


def from_json(doc, args=None):
    """A Program from the format's JSON (the subset the tracer writes), its arguments at their
    defaults or at `args` (name -> value, as `--set kernel.NAME=VALUE` sets them)."""
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise NkiError(f"not a {FORMAT} version {VERSION} document")
    env = {k: ex.parse(v) for k, v in doc.get("args", {}).items()}
    for k, v in (args or {}).items():
        if k not in env:
            raise NkiError(f"the program has no argument '{k}'")
        env[k] = v
    program = Program(doc["name"], doc.get("source"), ex.evaluate(ex.parse(doc.get("grid", 1)), env))
    program.args = env
    tensors = {}
    for t in doc["tensors"]:
        shape = [ex.evaluate(ex.parse(n), env) for n in t["shape"]]
        tensors[t["name"]] = Tensor(t["name"], shape, by_name(_FMT_DTYPE[t["dtype"]]), t["kind"],
                                    t.get("per_instance", False))
    buffers = {}
    for b in doc["buffers"]:
        buf = Buffer(b["name"], b["memory"], ex.evaluate(ex.parse(b["partitions"]), env),
                     [ex.evaluate(ex.parse(n), env) for n in b["shape"]],
                     by_name(_FMT_DTYPE[b["dtype"]]), ex.evaluate(ex.parse(b.get("bufs", 1)), env))
        buf.used = True
        buffers[b["name"]] = buf
    program.tensors = list(tensors.values())
    program.buffers = list(buffers.values())

    def operand(value):
        if isinstance(value, dict) and "buf" in value:
            buf = buffers[value["buf"]]
            p = tuple(ex.parse(v) for v in value.get("p", [0, buf.partitions]))
            f = [tuple(ex.parse(v) for v in box) for box in value.get("f", [[0, n] for n in buf.shape])]
            return OnChip(buf, ex.parse(value.get("copy", 0)), p, f)
        if isinstance(value, dict) and "tensor" in value:
            return Hbm(tensors[value["tensor"]], ex.parse(value["offset"]),
                       [(ex.parse(s), ex.parse(n)) for s, n in value["ap"]])
        return value if isinstance(value, (float, bool)) else ex.parse_number(value)

    def node(d):
        if "loop" in d:
            return Loop(d["loop"], ex.parse(d["trip"]), ex.parse(d.get("start", 0)),
                        ex.parse(d.get("step", 1)), d.get("kind", "affine"), [node(n) for n in d["body"]])
        fields = {}
        for key, value in d.items():
            if key in ("op", "line"):
                continue
            numeric = isinstance(value, (int, float)) or key in _NUMERIC_KEYS
            fields[key] = operand(value) if isinstance(value, dict) or numeric else value
        return Instr(d["op"], fields, d.get("line"))

    program.body = [node(n) for n in doc["body"]]
    return program
