"""Runs kernel-format instructions on numpy arrays.

The same executor serves the numpy backend (instructions run as the kernel emits them, loop
indices concrete) and `run_program`, which interprets a written program (loops expanded, buffers
with their rotating copies) so tests can hold a trace to the direct run. Values are float64,
rounded to the destination's data type on every write (dtypes.round_to); on-chip memory starts as
NaN so a read of something never written shows in the outputs.
"""

import numpy as np

from . import expr as ex
from .dtypes import float32, round_to
from .errors import NkiError
from .program import Hbm, Loop, OnChip

_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(x):
    # Abramowitz & Stegun 7.1.26, |error| < 1.5e-7 (numpy has no erf).
    t = 1.0 / (1.0 + _ERF_P * np.abs(x))
    poly = t * (_ERF_A[0] + t * (_ERF_A[1] + t * (_ERF_A[2] + t * (_ERF_A[3] + t * _ERF_A[4]))))
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


FUNCS = {
    "exp": np.exp, "log": np.log, "tanh": np.tanh, "sigmoid": _sigmoid,
    "relu": lambda x: np.maximum(x, 0.0),
    "gelu": lambda x: 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0))),
    "gelu_apprx_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3))),
    "silu": lambda x: x * _sigmoid(x), "softplus": lambda x: np.logaddexp(0.0, x),
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "sqrt": np.sqrt, "reciprocal": lambda x: 1.0 / x,
    "square": np.square, "abs": np.abs, "sin": np.sin, "cos": np.cos, "erf": _erf, "sign": np.sign,
    "copy": lambda x: x, "identity": lambda x: x,
}
OPERATORS = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "max": np.maximum, "min": np.minimum, "pow": np.power,
    "equal": lambda a, b: (a == b).astype(np.float64), "not_equal": lambda a, b: (a != b).astype(np.float64),
    "greater": lambda a, b: (a > b).astype(np.float64), "greater_equal": lambda a, b: (a >= b).astype(np.float64),
    "less": lambda a, b: (a < b).astype(np.float64), "less_equal": lambda a, b: (a <= b).astype(np.float64),
}
REDUCTIONS = {"add": np.sum, "max": np.max, "min": np.min, "multiply": np.prod}


class Machine:
    """HBM tensors and on-chip buffers as numpy arrays."""

    def __init__(self):
        self.hbm = {}
        self.onchip = {}

    def allocate(self, buf):
        self.onchip[buf] = np.full((buf.bufs, buf.partitions) + tuple(buf.shape), np.nan)

    def allocate_tensor(self, tensor, values=None):
        if values is None:
            self.hbm[tensor] = np.full(tensor.size, np.nan)
        else:
            self.hbm[tensor] = round_to(np.asarray(values, dtype=np.float64).reshape(-1), tensor.dtype)

    def tensor_values(self, tensor):
        return self.hbm[tensor].reshape(tensor.shape)

    # --- operands ----------------------------------------------------------------------------------
    def _onchip_index(self, x, env):
        buf = x.buffer
        copy = ex.evaluate(x.copy, env) % buf.bufs
        p0, pn = (ex.evaluate(v, env) for v in x.p)
        boxes = [(ex.evaluate(a, env), ex.evaluate(b, env)) for a, b in x.f]
        if p0 < 0 or pn < 0 or p0 + pn > buf.partitions or any(
                s < 0 or n < 0 or s + n > dim for (s, n), dim in zip(boxes, buf.shape)):
            raise NkiError(f"access outside the buffer '{buf.name}' ({buf.partitions} x {list(buf.shape)}): "
                           f"p [{p0}, {pn}], f {[list(b) for b in boxes]}")
        return (copy, slice(p0, p0 + pn)) + tuple(slice(s, s + n) for s, n in boxes)

    def _hbm_index(self, x, env):
        idx = np.array(ex.evaluate(x.offset, env), dtype=np.int64)
        for stride, count in x.ap:
            s, n = ex.evaluate(stride, env), ex.evaluate(count, env)
            idx = idx[..., None] + s * np.arange(n, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= x.tensor.size):
            raise NkiError(f"access outside the tensor '{x.tensor.name}' of {x.tensor.size} elements")
        return idx

    def read(self, x, env):
        """The operand's values as (partitions, elements per partition)."""
        if isinstance(x, OnChip):
            values = self.onchip[x.buffer][self._onchip_index(x, env)]
        elif isinstance(x, Hbm):
            values = self.hbm[x.tensor][self._hbm_index(x, env)]
        else:
            return ex.evaluate_real(x, env)
        if values.ndim == 0:
            return values.reshape(1, 1)
        return values.reshape(values.shape[0], -1)

    def write(self, x, values, env):
        if isinstance(x, OnChip):
            index = self._onchip_index(x, env)
            store, dtype = self.onchip[x.buffer], x.buffer.dtype
        else:
            index = self._hbm_index(x, env)
            store, dtype = self.hbm[x.tensor], x.tensor.dtype
        target = store[index]
        values = np.asarray(values, dtype=np.float64)
        if values.size != target.size:
            raise NkiError(f"{values.size} elements written into an operand of {target.size}")
        store[index] = round_to(values.reshape(target.shape), dtype)

    # --- instructions ----------------------------------------------------------------------------
    def run(self, instr, env):
        try:
            getattr(self, "_op_" + instr.op)(instr.fields, env)
        except NkiError as e:
            if instr.line:  # executed after the kernel moved on: name the instruction's own line
                e.location = tuple(instr.line.rsplit(":", 1))
            raise

    def _op_dma(self, f, env):
        self.write(f["dst"], self.read(f["src"], env), env)

    def _op_tensor_copy(self, f, env):
        self.write(f["dst"], self.read(f["src"], env), env)

    def _op_matmul(self, f, env):
        st, mv = self.read(f["stationary"], env), self.read(f["moving"], env)
        result = round_to(st.T @ mv, float32)
        if not ex.evaluate(f.get("start", 1), env):
            result = result + self.read(f["dst"], env)
        self.write(f["dst"], result, env)

    def _op_transpose(self, f, env):
        self.write(f["dst"], self.read(f["src"], env).T, env)

    def _op_tensor_tensor(self, f, env):
        a, b = self.read(f["in0"], env), self.read(f["in1"], env)
        self.write(f["dst"], OPERATORS[f["operator"]](a, b.reshape(a.shape)), env)

    def _op_tensor_scalar(self, f, env):
        v = self.read(f["src"], env)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            v = OPERATORS[f["operator0"]](v, self.read(f["operand0"], env))
            if "operator1" in f:
                v = OPERATORS[f["operator1"]](v, self.read(f["operand1"], env))
        self.write(f["dst"], v, env)

    def _op_tensor_reduce(self, f, env):
        v = REDUCTIONS[f["reduce"]](self.read(f["src"], env), axis=1, keepdims=True)
        self.write(f["dst"], -v if f.get("negate") else v, env)

    def _op_select(self, f, env):
        pred = self.read(f["predicate"], env)
        self.write(f["dst"], np.where(pred != 0, self.read(f["on_true"], env),
                                      self.read(f["on_false"], env)), env)

    def _op_memset(self, f, env):
        dst = self.read(f["dst"], env)
        self.write(f["dst"], np.full(dst.shape, ex.evaluate_real(f["value"], env)), env)

    def _op_iota(self, f, env):
        dst = f["dst"]
        index = self._onchip_index(dst, env)
        shape = self.onchip[dst.buffer][index].shape  # (P, f0, f1, ...)
        grids = np.indices(shape)
        local = dict(env, p=grids[0], **{f"f{k}": g for k, g in enumerate(grids[1:])})
        self.write(dst, np.broadcast_to(ex.evaluate(ex.parse(f["expr"]), local), shape), env)

    def _op_activation(self, f, env):
        v = self.read(f["src"], env)
        scale = self.read(f["scale"], env) if "scale" in f else 1.0
        bias = self.read(f["bias"], env) if "bias" in f else 0.0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            v = FUNCS[f["func"]](v * scale + bias)
        self.write(f["dst"], v, env)
        if "reduce" in f:
            self.write(f["reduce"], np.sum(v, axis=1, keepdims=True), env)



def run_program(program, inputs, machine=None):
    """Interpret a written program: `inputs` maps input tensor names to arrays. Returns the machine."""
    machine = machine or Machine()
    for t in program.tensors:
        machine.allocate_tensor(t, inputs.get(t.name) if t.kind == "input" else None)
    for b in program.buffers:
        machine.allocate(b)
    for pid in range(program.grid):
        _run_body(machine, program.body, dict(program.args, pid=pid))
    return machine


def _run_body(machine, body, env):
    for node in body:
        if isinstance(node, Loop):
            start, step = ex.evaluate(node.start, env), ex.evaluate(node.step, env)
            for t in range(ex.evaluate(node.trip, env)):
                _run_body(machine, node.body, dict(env, **{node.var: start + step * t}))
        else:
            machine.run(node, env)
