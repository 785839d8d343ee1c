"""A kernel the tracer can't express stops with exit 2 and `file:line: message` naming the
user's line: calls and arguments outside the subset, bad shapes, dtype mismatches."""

import unittest

import support

# (kernel body, the text of the offending line, the expected message (a prefix))
KERNEL_ERRORS = [
    ("t = nl.load(x[0:128, :])\n    s = nisa.bn_stats(t)", "nisa.bn_stats",
     "nki.isa.bn_stats is outside nctlm's NKI subset"),
    ("t = nl.softmax(nl.load(x[0:128, :]), axis=1)", "nl.softmax", "nki.language.softmax is outside nctlm's NKI subset"),
    ("t = nl.load(x)", "nl.load", "partition dimension 256 > 128"),
    ("t = nl.ndarray((129, 4), nl.float32)", "(129, 4)", "partition dimension 129 > 128"),
    ("a = nl.load(x[0:128, 0:64])\n    b = nl.load(x[0:128, 0:32])\n    c = a + b", "c = a + b",
     "add: tile shapes (128, 64) and (128, 32) don't match"),
    ("a = nl.load(x[0:128, :])\n    b = nl.load(y[0:128, :])\n    c = nisa.nc_matmul(a, b)", "nc_matmul",
     "dtype mismatch in matmul: stationary is float32, moving is bfloat16"),
    ("a = nl.load(x[0:128, 0:64])\n    b = nl.load(w)\n    c = nisa.nc_matmul(a, b)", "nc_matmul",
     "matmul past the array: M=64 (max 128), N=1024 (max 512)"),
    ("a = nl.load(x[0:128, 0:64])\n    p = nisa.nc_matmul(a, a)\n    c = nisa.nc_matmul(p, a)", "c = nisa",
     "the stationary operand of a matmul must be in SBUF"),
    ("for i in nl.affine_range(2):\n        if i == 0:\n            pass", "if i == 0",
     "the value of 'i == 0' is only known when the kernel runs"),
    ("for i in nl.affine_range(2):\n        t = nl.load(x[i * 128:(i + 1) * 128, :])\n    nl.store(out, value=t)",
     "nl.store", "'src' uses the loop variable 'i' outside its loop"),
    ("for i in nl.affine_range(2):\n        t = nl.load(x[i * 128:i * 256, :])", "nl.load",
     "a slice's size must be a constant"),
    ("t = nl.load(x[0:128, :])\n    u = t[:, 0:64:2]", "u = t", "strided on-chip access is outside the subset"),
    ("t = nl.load(x[200:328, :])", "nl.load", "slice [200:328] outside a dimension of size 256"),
    ("i = nl.arange(128)[:, None]\n    t = nl.load(x[i + 200, nl.arange(64)[None, :]])", "t = nl.load",
     "index range [200, 327] outside a dimension of size 256"),
    ("t = nl.load(x[0:128, :])\n    nisa.dma_copy(dst=out, src=t, dst_rmw_op=nl.add)", "dma_copy",
     "nisa.dma_copy: dst_rmw_op (read-modify-write DMA) is outside the subset"),
    ("t = nisa.tensor_copy(nl.load(x[0:128, :]), engine=nisa.engine.gpsimd)", "tensor_copy",
     "nisa.tensor_copy: engine=gpsimd is outside the subset"),
    ("t = nisa.iota(nl.arange(128)[:, None], dtype=nl.int32, channel_multiplier=2)", "iota",
     "nisa.iota: argument 'channel_multiplier' is outside the subset"),
    ("t = nl.exp(nl.load(x[0:128, :]), dtype=nl.float64)", "nl.exp", "nki.language.float64 is outside nctlm's NKI subset"),
    ("t = nl.exp(x)", "nl.exp", "the input of exp must be an on-chip tile (SBUF or PSUM), got the HBM tensor 'x'"),
    ("for i in nl.affine_range(2):\n        t = nl.multiply(nl.load(x[0:128, :]), i)", "nl.multiply",
     "the operand is the loop expression 'i': the format's scalar operands are constants"),
    ("i = nl.arange(128)[:, None]\n    j = nl.arange(64)[None, :]\n    t = nl.load(x[i, j], mask=(i + j < 100))",
     "mask=", "each comparison in a mask must involve exactly one nl.arange axis"),
    ("assert x.shape[0] == 7, 'needs 7 rows'", "assert", "AssertionError: needs 7 rows"),
]

TEMPLATE = """
def k(x, y, w):
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    {body}
    return out
"""
ARGS = ["--arg", "x=fp32[256,64]", "--arg", "y=bf16[256,64]", "--arg", "w=fp32[128,1024]"]


class KernelErrors(unittest.TestCase):
    def test_each_error_names_the_users_line_and_exits_2(self):
        for body, where, message in KERNEL_ERRORS:
            with self.subTest(message=message):
                path = support.write_kernel(TEMPLATE.format(body=body))
                code, stdout, stderr = support.run_cli(f"{path}::k", *ARGS, "-o", "-")
                self.assertEqual(code, 2, stderr)
                self.assertEqual(stdout, "")
                expected = f"{support.line_of(path, where, full=True)}: {message}"
                self.assertTrue(stderr.startswith(expected), f"\n{stderr}\nexpected: {expected}")
                self.assertNotIn("Traceback", stderr)


class LoadErrors(unittest.TestCase):
    def test_neuronxcc_imports_point_to_the_import_line_to_change(self):
        path = support.write_kernel("import neuronxcc.nki.language as nl\n\ndef k(x):\n    return x\n")
        code, _, stderr = support.run_cli(f"{path}::k", "--arg", "x=fp32[4,4]")
        self.assertEqual(code, 2)
        self.assertIn(f"{support.line_of(path, 'import neuronxcc', full=True)}: No module named 'neuronxcc'", stderr)
        self.assertIn("change the import lines to nctlm.nki", stderr)

    def test_syntax_error(self):
        path = support.write_kernel("def k(x):\n    return x +\n")
        code, _, stderr = support.run_cli(f"{path}::k", "--arg", "x=fp32[4,4]")
        self.assertEqual(code, 2)
        self.assertTrue(stderr.startswith(f"{support.line_of(path, 'return x +', full=True)}: syntax error"), stderr)

    def test_usage_errors(self):
        path = support.kernel_path("add.py")
        cases = [
            ([f"{path}::add", "--arg", "a=fp32[128,64]"], "nctlm.nki: add needs --arg for: b"),
            ([f"{path}::add", "--arg", "a=fp32[128,64]", "--arg", "b=fp32[128,64]", "--arg", "c=1"],
             "nctlm.nki: add has no parameter 'c'"),
            ([f"{path}::add", "--arg", "a=fp33[128,64]", "--arg", "b=fp32[128,64]"],
             "nctlm.nki: unknown or unsupported data type 'fp33'"),
            ([f"{path}::add", "--arg", "a=fp32[128,64", "--arg", "b=fp32[128,64]"],
             "nctlm.nki: --arg a: 'fp32[128,64' is neither dtype[shape] nor a number"),
            ([f"{path}::add", "--arg", "a=fp32[128,64]", "--arg", "b=fp32[128,64]", "--grid", "0"],
             "nctlm.nki: --grid takes positive integers"),
            ([f"{path}::nope"], "nctlm.nki: no function 'nope'"),
            ([f"{path}"], "nctlm.nki: the kernel is given as FILE.py::FUNCTION"),
            (["missing.py::k"], "nctlm.nki: kernel file 'missing.py' not found"),
            ([f"{path}::add", "--arg", "a=fp32[128,64]", "--arg", "b=fp32[128,64]", "--check", f"{path}::nope"],
             "nctlm.nki: no function 'nope'"),
        ]
        for argv, message in cases:
            with self.subTest(message=message):
                code, _, stderr = support.run_cli(*argv, "-o", "-")
                self.assertEqual(code, 2, stderr)
                self.assertTrue(stderr.startswith(message), stderr)


if __name__ == "__main__":
    unittest.main()
