"""The command line's contract (nctlm kernel calls it) and the Python entry points."""

import json
import os
import subprocess
import sys
import unittest

import numpy as np

import support
import nctlm.nki as nki


class CommandLine(unittest.TestCase):
    def test_help(self):
        code, stdout, _ = support.run_cli("--help")
        self.assertEqual(code, 0)
        for option in ("--arg", "-o", "--grid", "--bufs", "--check", "--seed", "--rtol", "--atol"):
            self.assertIn(option, stdout)

    def test_without_o_the_program_goes_to_stdout_and_check_to_stderr(self):
        path = support.kernel_path("add.py")
        code, stdout, stderr = support.run_cli(f"{path}::add", "--arg", "a=bf16[256,64]", "--arg", "b=bf16[256,64]",
                                               "--check", f"{path}::reference", "--seed", "5")
        self.assertEqual(code, 0, stderr)
        doc = json.loads(stdout)
        self.assertEqual((doc["format"], doc["version"], doc["name"], doc["source"]), ("nctlm-kernel", 1, "add", path))
        self.assertEqual(doc["args"], {})
        self.assertIn("check: seed 5", stderr)

    def test_one_instruction_per_line(self):
        path = support.kernel_path("matmul.py")
        code, stdout, _ = support.run_cli(f"{path}::matmul_tiled", "--arg", "lhsT=bf16[256,256]",
                                          "--arg", "rhs=bf16[256,1024]")
        self.assertEqual(code, 0)
        ops = [line for line in stdout.splitlines() if '"op": ' in line]
        self.assertEqual(len(ops), 5)
        self.assertTrue(all(line.count('"op": ') == 1 for line in ops))

    def test_explicit_tolerances_and_seed_change_the_check(self):
        path = support.kernel_path("scaled_softmax.py")
        base = [f"{path}::scaled_softmax", "--arg", "x=bf16[128,256]", "--arg", "scale=0.5", "-o", os.devnull,
                "--check", f"{path}::reference"]
        code, stdout, _ = support.run_cli(*base, "--rtol", "0", "--atol", "0")
        self.assertEqual(code, 4)  # bf16 output can't equal the float64 reference exactly
        code, stdout, _ = support.run_cli(*base, "--rtol", "0.02", "--atol", "1e-3")
        self.assertEqual(code, 0, stdout)
        self.assertIn("rtol 0.02, atol 0.001", stdout)

    def test_number_arguments(self):
        path = support.write_kernel("""
            def k(x, n, scale, flag):
                out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                for i in range(n):
                    t = nl.multiply(t, scale if flag else 1.0)
                nl.store(out, value=t)
                return out
            """)
        doc, _, _ = support.trace(path, "k", "x=fp32[128,64]", "n=3", "scale=0.5", "flag=true")
        muls = [i for i in support.instructions(doc["body"]) if i["op"] == "tensor_scalar"]
        self.assertEqual([m["operand0"] for m in muls], [0.5] * 3)


    def test_tracing_needs_no_numpy_and_check_says_it_does(self):
        path = support.kernel_path("matmul.py")
        run = ("import sys; sys.modules['numpy'] = None; sys.argv[0] = 'nctlm.nki'\n"
               "from nctlm.nki.cli import main\nsys.exit(main(sys.argv[1:]))")
        argv = [sys.executable, "-c", run, f"{path}::matmul_tiled", "--arg", "lhsT=bf16[256,256]",
                "--arg", "rhs=bf16[256,512]", "-o", os.devnull]
        env = dict(os.environ, PYTHONPATH=support.PYTHON_DIR)
        traced = subprocess.run(argv, capture_output=True, text=True, env=env)
        self.assertEqual(traced.returncode, 0, traced.stderr)
        checked = subprocess.run(argv + ["--check", f"{path}::reference"], capture_output=True, text=True, env=env)
        self.assertEqual(checked.returncode, 2)
        self.assertIn("--check runs the kernel with numpy", checked.stderr)


class PythonEntryPoints(unittest.TestCase):
    def test_a_jit_kernel_called_with_arrays_runs_with_numpy(self):
        source = support.cli.load_function(f"{support.kernel_path('add.py')}::add")
        add = nki.jit(source)
        a = np.arange(256 * 8, dtype=np.float32).reshape(256, 8)
        np.testing.assert_array_equal(add[2](a, a), 2 * a)
        np.testing.assert_array_equal(nki.simulate_kernel(add, a, -a), np.zeros_like(a))

    def test_an_output_parameter_is_written_back(self):
        path = support.write_kernel("""
            @nki.jit
            def scale(x, out):
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
            """)
        kernel = support.cli.load_function(f"{path}::scale")
        x = np.ones((128, 4), np.float32)
        out = np.zeros_like(x)
        self.assertIsNone(nki.jit(kernel)(x, out))
        np.testing.assert_array_equal(out, 2 * x)


if __name__ == "__main__":
    unittest.main()
