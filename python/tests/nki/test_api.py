"""Each API call of the subset maps to the documented kernel-format instructions and computes what
NKI documents (numpy backend against a numpy expression), and the written program computes the
same as the direct numpy run."""

import json
import unittest

import numpy as np

import support  # noqa: F401  (puts the package on sys.path)
from nctlm.nki import kernel, program
from nctlm.nki.dtypes import bfloat16, round_to
from nctlm.nki.executor import run_program

TEMPLATE = """
import numpy as np


def k(x, w, rr):
    t = nl.load(x)        # (128, 64)
    v = nl.load(w)        # (128, 1): one value per partition
    r = nl.load(rr)       # (1, 64): one row
{body}
    out = nl.ndarray(y.shape, nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=y)
    return out
"""

sigmoid = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
erf = np.vectorize(__import__("math").erf)

# (call, body defining y, [ops after the three loads, before the final store's DMA],
#  {field: value} of the first of those instructions, numpy of (x, w, rr))
CASES = [
    ("nl.exp", "y = nl.exp(t)", ["activation"], {"func": "exp"}, lambda x, w, r: np.exp(x)),
    ("nl.log", "y = nl.log(t)", ["activation"], {"func": "log"}, lambda x, w, r: np.log(x)),
    ("nl.tanh", "y = nl.tanh(t)", ["activation"], {"func": "tanh"}, lambda x, w, r: np.tanh(x)),
    ("nl.sigmoid", "y = nl.sigmoid(t)", ["activation"], {"func": "sigmoid"}, lambda x, w, r: sigmoid(x)),
    ("nl.relu", "y = nl.relu(t - 1.2)", ["tensor_scalar", "activation"], {"operator0": "subtract"},
     lambda x, w, r: np.maximum(x - 1.2, 0)),
    ("nl.gelu", "y = nl.gelu(t)", ["activation"], {"func": "gelu"},
     lambda x, w, r: 0.5 * x * (1 + erf(x / np.sqrt(2)))),
    ("nl.silu", "y = nl.silu(t)", ["activation"], {"func": "silu"}, lambda x, w, r: x * sigmoid(x)),
    ("nl.rsqrt", "y = nl.rsqrt(t)", ["activation"], {"func": "rsqrt"}, lambda x, w, r: 1 / np.sqrt(x)),
    ("nl.sqrt", "y = nl.sqrt(t)", ["activation"], {"func": "sqrt"}, lambda x, w, r: np.sqrt(x)),
    ("nl.reciprocal", "y = nl.reciprocal(t)", ["activation"], {"func": "reciprocal"}, lambda x, w, r: 1 / x),
    ("nl.square", "y = nl.square(t)", ["activation"], {"func": "square"}, lambda x, w, r: x * x),
    ("nl.negative", "y = nl.negative(t)", ["tensor_scalar"], {"operator0": "multiply", "operand0": -1.0},
     lambda x, w, r: -x),
    ("nl.add", "y = nl.add(t, t)", ["tensor_tensor"], {"operator": "add"}, lambda x, w, r: x + x),
    ("nl.subtract (per-partition)", "y = nl.subtract(t, v)", ["tensor_scalar"], {"operator0": "subtract"},
     lambda x, w, r: x - w),
    ("nl.multiply (number)", "y = nl.multiply(t, 3.0)", ["tensor_scalar"],
     {"operator0": "multiply", "operand0": 3.0}, lambda x, w, r: 3 * x),
    ("nl.divide", "y = nl.divide(t, v)", ["tensor_scalar"], {"operator0": "divide"}, lambda x, w, r: x / w),
    ("nl.maximum", "y = nl.maximum(t, 1.0)", ["tensor_scalar"], {"operator0": "max"},
     lambda x, w, r: np.maximum(x, 1.0)),
    ("nl.minimum", "y = nl.minimum(t, t * 0.5)", ["tensor_scalar", "tensor_tensor"], {"operator0": "multiply"},
     lambda x, w, r: np.minimum(x, x * 0.5)),
    ("nl.power", "y = nl.power(t, 2.0)", ["tensor_scalar"], {"operator0": "pow"}, lambda x, w, r: x ** 2),
    ("nl.greater", "y = nl.greater(t, 1.0)", ["tensor_scalar"], {"operator0": "greater"},
     lambda x, w, r: (x > 1.0) * 1.0),
    ("number - tile", "y = 2.0 - t", ["tensor_scalar"],
     {"operator0": "multiply", "operand0": -1.0, "operator1": "add", "operand1": 2.0}, lambda x, w, r: 2 - x),
    ("number / tile", "y = 3.0 / t", ["activation", "tensor_scalar"], {"func": "reciprocal"},
     lambda x, w, r: 3 / x),
    ("number < tile", "y = 1.0 < t", ["tensor_scalar"], {"operator0": "greater"},
     lambda x, w, r: (x > 1.0) * 1.0),
    ("nl.max", "y = nl.max(t, axis=1)", ["tensor_reduce"], {"reduce": "max"},
     lambda x, w, r: x.max(axis=1, keepdims=True)),
    ("nl.min", "y = nl.min(t, axis=[1])", ["tensor_reduce"], {"reduce": "min"},
     lambda x, w, r: x.min(axis=1, keepdims=True)),
    ("nl.sum", "y = nl.sum(t, axis=-1)", ["tensor_reduce"], {"reduce": "add"},
     lambda x, w, r: x.sum(axis=1, keepdims=True)),
    ("nl.mean", "y = nl.mean(t, axis=1)", ["tensor_reduce", "tensor_scalar"], {"reduce": "add"},
     lambda x, w, r: x.mean(axis=1, keepdims=True)),
    ("nl.matmul transpose_x", "y = nl.matmul(t, t, transpose_x=True)", ["matmul", "tensor_copy"], {},
     lambda x, w, r: x.T @ x),
    ("nl.matmul", "y = nl.matmul(t, nl.load(x[0:64, :]))", ["dma", "transpose", "tensor_copy", "matmul",
                                                         "tensor_copy"], {}, lambda x, w, r: x @ x[0:64]),
    ("nl.transpose", "y = nl.transpose(t)", ["transpose", "tensor_copy"], {}, lambda x, w, r: x.T),
    ("nl.where", "y = nl.where(nl.greater(t, 1.0), t, nl.negative(t))",
     ["tensor_scalar", "tensor_scalar", "select"], {"operator0": "greater"},
     lambda x, w, r: np.where(x > 1.0, x, -x)),
    ("nl.where (number)", "y = nl.where(t > 1.0, t, 0.0)", ["tensor_scalar", "memset", "select"], {},
     lambda x, w, r: np.where(x > 1.0, x, 0.0)),
    ("nl.copy", "y = nl.copy(t, dtype=nl.bfloat16)", ["tensor_copy", "tensor_copy"], {},
     lambda x, w, r: round_to(x, bfloat16)),
    ("nl.zeros", "y = nl.zeros((128, 64), nl.float32)", ["memset"], {"value": 0.0},
     lambda x, w, r: np.zeros((128, 64))),
    ("nl.full", "y = nl.full((128, 64), 2.5, nl.float32)", ["memset"], {"value": 2.5},
     lambda x, w, r: np.full((128, 64), 2.5)),
    ("nl.load_transpose2d", "y = nl.load_transpose2d(x)", ["dma"], {}, lambda x, w, r: x.T),
    # The row's own load goes (nothing else reads it): the third DMA is its stride-0 reload.
    ("tile.broadcast_to (loaded row)", "y = t + r.broadcast_to((128, 64))", ["tensor_tensor"], {},
     lambda x, w, r: x + r),
    ("nl.broadcast_to (computed row)", "y = t + nl.broadcast_to(nl.exp(r), (128, 64))",
     ["activation", "memset", "matmul", "tensor_copy", "tensor_tensor"], {"func": "exp"},
     lambda x, w, r: x + np.exp(r)),
    ("nl.static_range", "y = nl.copy(t)\n    for j in nl.static_range(3):\n        y[...] = y + 1.0",
     ["tensor_copy", "tensor_scalar", "tensor_scalar", "tensor_scalar"], {}, lambda x, w, r: x + 3),
    ("tile[...] = op (retargeted)", "y = nl.ndarray((128, 64), nl.float32)\n    y[...] = nl.exp(t)",
     ["activation"], {"func": "exp"}, lambda x, w, r: np.exp(x)),
    ("tile += tile", "y = nl.copy(t)\n    y += t", ["tensor_copy", "tensor_tensor"], {},
     lambda x, w, r: 2 * x),
    ("psum += matmul (accumulate; the zeroing memset folds into start)", "y = nl.zeros((64, 64), nl.float32, buffer=nl.psum)\n"
     "    y += nl.matmul(t, t, transpose_x=True)\n    y += nl.matmul(t, t, transpose_x=True)",
     ["matmul", "matmul", "tensor_copy"], {"start": 1}, lambda x, w, r: 2 * x.T @ x),
    ("nisa.nc_matmul", "y = nisa.nc_matmul(t, t)", ["matmul", "tensor_copy"], {}, lambda x, w, r: x.T @ x),
    ("nisa.nc_transpose", "y = nisa.nc_transpose(t)", ["transpose", "tensor_copy"], {}, lambda x, w, r: x.T),
    ("nisa.activation", "y = nisa.activation(op=nl.exp, data=t, bias=v, scale=0.5)", ["activation"],
     {"func": "exp", "scale": 0.5}, lambda x, w, r: np.exp(0.5 * x + w)),
    ("nisa.activation (tile scale)", "y = nisa.activation(op=np.tanh, data=t, scale=v)", ["activation"],
     {"func": "tanh"}, lambda x, w, r: np.tanh(w * x)),
    ("nisa.activation reduce", "y = nl.ndarray((128, 1), nl.float32)\n"
     "    nisa.activation(op=nl.exp, data=t, reduce_op=nl.add, reduce_res=y)", ["activation"], {"func": "exp"},
     lambda x, w, r: np.exp(x).sum(axis=1, keepdims=True)),
    ("nisa.activation_reduce", "y = nl.ndarray((128, 1), nl.float32)\n"
     "    nisa.activation_reduce(op=nl.square, data=t, reduce_op=np.add, reduce_res=y)", ["activation"],
     {"func": "square"}, lambda x, w, r: (x * x).sum(axis=1, keepdims=True)),
    ("nisa.tensor_tensor", "y = nisa.tensor_tensor(t, t, np.multiply)", ["tensor_tensor"],
     {"operator": "multiply"}, lambda x, w, r: x * x),
    ("nisa.tensor_scalar", "y = nisa.tensor_scalar(t, nl.subtract, v, op1=nl.multiply, operand1=2.0)",
     ["tensor_scalar"], {"operator0": "subtract", "operator1": "multiply", "operand1": 2.0},
     lambda x, w, r: (x - w) * 2),
    ("nisa.tensor_scalar reverse0", "y = nisa.tensor_scalar(t, nl.subtract, 1.0, reverse0=True)",
     ["tensor_scalar"], {"operator0": "multiply", "operator1": "add"}, lambda x, w, r: 1 - x),
    ("nisa.tensor_scalar reversed divide", "y = nisa.tensor_scalar(t, np.divide, v, reverse0=True)",
     ["activation", "tensor_scalar"], {"func": "reciprocal"}, lambda x, w, r: w / x),
    ("nisa.tensor_reduce", "y = nisa.tensor_reduce(nl.max, t, axis=[1], negate=True)", ["tensor_reduce"],
     {"reduce": "max", "negate": True}, lambda x, w, r: -x.max(axis=1, keepdims=True)),
    ("nisa.tensor_copy", "y = nisa.tensor_copy(t, engine=nisa.engine.scalar)", ["tensor_copy"],
     {"engine": "scalar"}, lambda x, w, r: x),
    ("nisa.iota", "y = nisa.iota(nl.arange(128)[:, None] * 64 + nl.arange(64)[None, :], dtype=nl.float32)",
     ["iota"], {"expr": "f0 + p * 64"}, lambda x, w, r: np.arange(128 * 64).reshape(128, 64) * 1.0),
    ("nisa.affine_select", "y = nisa.affine_select(pred=(nl.arange(128)[:, None] + 3 >= nl.arange(64)[None, :] * 2),\n"
     "        on_true_tile=t, on_false_value=-9984.0)", ["iota", "tensor_scalar", "memset", "select"],
     {"expr": "p - f0 * 2 + 3"},
     lambda x, w, r: np.where(np.arange(128)[:, None] + 3 >= 2 * np.arange(64)[None, :], x, -9984.0)),
    ("nisa.memset", "y = nisa.memset((128, 64), 1.5, nl.float32)", ["memset"], {"value": 1.5},
     lambda x, w, r: np.full((128, 64), 1.5)),
    ("nisa.memset (dst=)", "y = nl.ndarray((128, 64), nl.float32)\n    nisa.memset(dst=y, value=-2.0)", ["memset"],
     {"value": -2.0}, lambda x, w, r: np.full((128, 64), -2.0)),
    ("nisa.dma_copy", "y = nl.ndarray((128, 64), nl.float32)\n    nisa.dma_copy(dst=y, src=x)", ["dma"], {},
     lambda x, w, r: x),
]


def body(text):
    """The case's statements inside the kernel (continuation lines carry their own indent)."""
    return "    " + text


class ApiMapping(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rng = np.random.default_rng(7)
        cls.x = rng.uniform(0.5, 2.0, (128, 64)).astype(np.float32)
        cls.w = rng.uniform(0.5, 2.0, (128, 1)).astype(np.float32)
        cls.r = rng.uniform(0.5, 2.0, (1, 64)).astype(np.float32)

    def check_case(self, name, text, ops, fields, expected):
        path = support.write_kernel(TEMPLATE.format(body=body(text)))
        doc, _, _ = support.trace(path, "k", "x=fp32[128,64]", "w=fp32[128,1]", "rr=fp32[1,64]")
        instrs = support.instructions(doc["body"])
        self.assertEqual([i["op"] for i in instrs[:3]], ["dma"] * 3)
        self.assertEqual(instrs[-1]["op"], "dma")
        self.assertEqual(instrs[-1]["dst"]["tensor"], "out")
        self.assertEqual([i["op"] for i in instrs[3:-1]], ops, f"{name}: {json.dumps(instrs[3:-1])}")
        for key, value in fields.items():
            self.assertEqual(instrs[3][key], value, f"{name}: {json.dumps(instrs[3])}")
        source = support.cli.load_function(f"{path}::k")
        args = {"x": self.x, "w": self.w, "rr": self.r}
        prog, outputs, machine = kernel.execute(source, args)
        got = machine.tensor_values(outputs[0])
        want = np.asarray(expected(self.x.astype(np.float64), self.w.astype(np.float64), self.r.astype(np.float64)))
        np.testing.assert_allclose(got, want.reshape(got.shape), rtol=2e-6, atol=1e-6, err_msg=name)
        # The written program, interpreted with its loops and rotating copies, computes the same.
        written = program.from_json(doc)
        interpreted = run_program(written, args)
        out = next(t for t in written.tensors if t.name == "out")
        np.testing.assert_array_equal(interpreted.tensor_values(out), got, err_msg=name)


def _make(case):
    def test(self):
        self.check_case(*case)
    return test


for _case in CASES:
    _name = "test_" + "".join(c if c.isalnum() else "_" for c in _case[0]).strip("_")
    setattr(ApiMapping, _name, _make(_case))


if __name__ == "__main__":
    unittest.main()
