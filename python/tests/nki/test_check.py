"""--check: correct kernels match their numpy references, a wrong one exits 4; and each written
program, interpreted with its loops and rotating copies, computes what the direct run computes."""

import json
import os
import unittest

import numpy as np

import support
from nctlm.nki import check, kernel, program
from nctlm.nki.executor import run_program

# (file, kernel, reference, --arg..., extra options)
PASSING = [
    ("scaled_softmax.py", "scaled_softmax", "reference", ["x=bf16[256,512]", "scale=0.3"], []),
    ("rmsnorm.py", "rmsnorm", "reference", ["a=fp32[300,256]", "g=fp32[256]"], []),
    ("rmsnorm.py", "rmsnorm", "reference", ["a=bf16[256,128]", "g=bf16[128]"], []),
    ("matmul.py", "matmul_blocked", "reference", ["lhsT=bf16[512,256]", "rhs=bf16[512,2048]"], []),
    ("matmul.py", "matmul_tiled", "reference", ["lhsT=fp32[256,256]", "rhs=fp32[256,512]"], []),
    ("add.py", "add", "reference", ["a=fp32[1024,64]", "b=fp32[1024,64]"], ["--grid", "4"]),
    ("layernorm.py", "layernorm", "reference", ["x=fp32[256,192]", "gamma=fp32[192]", "beta=fp32[192]"], []),
]
FAILING = [
    ("scaled_softmax.py", "scaled_softmax", "unscaled_reference", ["x=bf16[256,512]", "scale=0.3"], []),
    ("rmsnorm.py", "rmsnorm", "wrong_reference", ["a=bf16[256,128]", "g=bf16[128]"], []),
    ("add.py", "add", "wrong_reference", ["a=fp32[512,64]", "b=fp32[512,64]"], ["--grid", "2"]),
]


def cli_args(case):
    name, fn, ref, args, extra = case
    path = support.kernel_path(name)
    out = os.path.join(support._tmp.name, f"{fn}-{ref}.json")
    argv = [f"{path}::{fn}", "-o", out, "--check", f"{path}::{ref}"] + extra
    for a in args:
        argv += ["--arg", a]
    return argv, out


class Check(unittest.TestCase):
    def test_correct_kernels_match_their_references(self):
        for case in PASSING:
            with self.subTest(kernel=case[1], args=case[3]):
                argv, out = cli_args(case)
                code, stdout, stderr = support.run_cli(*argv)
                self.assertEqual(code, 0, stdout + stderr)
                self.assertRegex(stdout, r"check: \w+\[[\d, ]+\]: max abs err [-\de.+]+, max rel err .*: ok")
                with open(out) as f:
                    self.assertEqual(json.load(f)["name"], case[1])

    def test_a_wrong_result_exits_4_and_says_where(self):
        for case in FAILING:
            with self.subTest(kernel=case[1], reference=case[2]):
                argv, out = cli_args(case)
                code, stdout, stderr = support.run_cli(*argv)
                self.assertEqual(code, 4, stdout + stderr)
                self.assertIn("MISMATCH", stdout)
                self.assertTrue(os.path.exists(out))  # the program is written before the check

    def test_unwritten_output_elements_fail(self):
        path = support.write_kernel("""
            def half(x):
                out = nl.ndarray((256, 64), nl.float32, buffer=nl.shared_hbm)
                nl.store(out[0:128, :], value=nl.load(x[0:128, :]))
                return out

            def ref(x):
                return x
            """)
        code, stdout, _ = support.run_cli(f"{path}::half", "--arg", "x=fp32[256,64]", "-o", os.devnull,
                                          "--check", f"{path}::ref")
        self.assertEqual(code, 4)
        self.assertIn("NaN: elements never written?", stdout)

    def test_tolerance_follows_the_least_precise_type(self):
        for dtype, tol in (("fp32", 1e-4), ("bf16", 2e-2), ("fp8_e4m3", 0.25)):
            doc, prog, _ = support.trace(support.kernel_path("add.py"), "add", f"a={dtype}[128,64]",
                                         f"b={dtype}[128,64]")
            self.assertEqual(check.default_tolerance(prog), tol)


class WrittenProgramComputesTheSame(unittest.TestCase):
    def test_interpreting_the_json_matches_the_direct_run(self):
        for name, fn, _, args, extra in PASSING:
            with self.subTest(kernel=fn, args=args):
                grid = extra[1] if extra else "1"
                doc, prog, _ = support.trace(support.kernel_path(name), fn, *args, grid=grid)
                f = support.cli.load_function(f"{support.kernel_path(name)}::{fn}")
                parsed = dict(support.cli.parse_arg(a) for a in args)
                kernel_args, _, dtypes = check.random_inputs(f, parsed, prog, seed=3)
                _, outputs, direct = kernel.execute(f, kernel_args, support.cli.parse_grid(grid), dtypes=dtypes)
                written = program.from_json(json.loads(json.dumps(doc)))
                inputs = {n: v for n, v in kernel_args.items() if hasattr(v, "shape")}
                interpreted = run_program(written, inputs)
                for t in outputs:
                    t2 = next(x for x in written.tensors if x.name == t.name)
                    want = direct.tensor_values(t)
                    self.assertFalse(np.isnan(want).any())
                    np.testing.assert_array_equal(interpreted.tensor_values(t2), want)

    def test_the_comparison_sees_a_wrong_index(self):
        # Not vacuous: the same program with one access pattern's loop term dropped computes
        # something else, and the interpreter shows it.
        doc, prog, outputs = support.trace(support.kernel_path("scaled_softmax.py"), "scaled_softmax",
                                           "x=fp32[512,64]", "scale=1.0")
        x = np.random.default_rng(0).standard_normal((512, 64)).astype(np.float32)
        good = run_program(program.from_json(doc), {"x": x})
        load = support.instructions(doc["body"])[0]
        self.assertEqual(load["src"]["offset"], "i * 8192")
        load["src"]["offset"] = 0
        bad = run_program(program.from_json(doc), {"x": x})
        y_good, y_bad = (next(m.tensor_values(t) for t in m.hbm if t.name == "y") for m in (good, bad))
        self.assertFalse(np.isnan(y_good).any())
        self.assertFalse(np.allclose(y_good, y_bad))

if __name__ == "__main__":
    unittest.main()
