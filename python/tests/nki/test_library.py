"""The kernel library (kernels/NAME.py, configs/kernels/NAME.json; kernels/library.py lists it): each
parametric program is what tracing its Python with symbolic shapes writes, each kernel matches its
numpy reference, the parametric program at other argument values is the kernel traced with those
values (instruction for instruction, value for value), and both forms run on the simulator alike."""

import json
import os
import subprocess
import sys
import unittest

import numpy as np

import support
from nctlm.nki import cli, kernel, program
from nctlm.nki.dtypes import round_to
from nctlm.nki.executor import run_program

REPO = os.path.abspath(os.path.join(support.PYTHON_DIR, ".."))
sys.path.insert(0, os.path.join(REPO, "kernels"))
import library  # noqa: E402

NCTLM = os.environ.get("NCTLM") or os.path.join(REPO, "build", "bin", "nctlm")


def kernel_file(name):
    return os.path.join(REPO, library.source(name))


def shipped(name):
    with open(library.json_path(name)) as f:
        return json.load(f)


class Programs(unittest.TestCase):
    def test_each_shipped_program_is_its_python_traced_with_symbolic_shapes(self):
        for name in library.KERNELS:
            with self.subTest(kernel=name), open(library.json_path(name)) as f:
                self.assertEqual(library.generate(name), f.read(), "stale: run scripts/gen-kernels")

    def test_shapes_and_blocks_are_arguments_with_the_traced_defaults(self):
        for name in library.KERNELS:
            with self.subTest(kernel=name):
                doc = shipped(name)
                self.assertEqual(doc["args"], library.defaults(name))
                self.assertEqual(doc["source"], library.source(name))
                for t in doc["tensors"]:  # every dimension an expression of the arguments
                    self.assertTrue(all(isinstance(d, str) for d in t["shape"]), t)

    def test_a_scalar_computed_from_an_argument_is_a_real_expression(self):
        def real_operands(name):
            return {v for i in support.instructions(shipped(name)["body"]) for k, v in i.items()
                    if k in ("operand0", "operand1", "scale", "bias", "value") and isinstance(v, str)}
        self.assertEqual(real_operands("rmsnorm"), {"1.0 / COLS"})
        self.assertEqual(real_operands("layernorm"), {"1.0 / COLS", "-1.0 / COLS"})
        self.assertEqual(real_operands("flash_attention"), {"D ** -0.5"})


class Reference(unittest.TestCase):
    def test_each_kernel_matches_its_numpy_reference(self):
        for name, spec in library.KERNELS.items():
            with self.subTest(kernel=name):
                args = [a for arg in library.trace_args(name, spec["test"]) for a in ("--arg", arg)]
                code, out, err = support.run_cli(f"{kernel_file(name)}::{name}", *args, "-o", os.devnull,
                                                 "--check", f"{kernel_file(name)}::reference")
                self.assertEqual(code, 0, out + err)
                self.assertIn(": ok", out)


def random_inputs(prog, seed):
    rng = np.random.default_rng(seed)
    return {t.name: round_to(rng.standard_normal(t.shape), t.dtype).astype(np.float32)
            for t in prog.tensors if t.kind == "input"}


class SymbolicIsTheTraceAtThoseValues(unittest.TestCase):
    def test_the_parametric_program_at_other_arguments_equals_the_kernel_traced_with_them(self):
        for name, spec in library.KERNELS.items():
            doc = shipped(name)
            fn = cli.load_function(f"{kernel_file(name)}::{name}")
            for values in spec["variants"] + [spec["test"]]:
                with self.subTest(kernel=name, args=values):
                    concrete = library.trace_args(name, values, symbolic=False)
                    traced, _, _ = support.trace(kernel_file(name), name, *concrete)
                    self.assertEqual(traced["args"], {})
                    # The same instructions, op by op, once the loops expand.
                    self.assertEqual(support.expanded_ops(doc, values), support.expanded_ops(traced))
                    # The same values: the parametric program interpreted at these arguments, the
                    # kernel run with numpy on the same inputs.
                    prog = program.from_json(doc, args=values)
                    inputs = random_inputs(prog, seed=len(values))
                    machine = run_program(prog, inputs)
                    parsed = dict(cli.parse_arg(a) for a in concrete)
                    call = {n: inputs[n] if isinstance(v, kernel.TensorSpec) else v for n, v in parsed.items()}
                    dtypes = {n: v.dtype for n, v in parsed.items() if isinstance(v, kernel.TensorSpec)}
                    _, outputs, direct = kernel.execute(fn, call, dtypes=dtypes)
                    for t in outputs:
                        mine = next(x for x in prog.tensors if x.name == t.name)
                        got = machine.tensor_values(mine)
                        self.assertFalse(np.isnan(got).any())
                        np.testing.assert_array_equal(got, direct.tensor_values(t), err_msg=t.name)


class RunsOnTheSimulator(unittest.TestCase):
    def run_stats(self, argv, stats):
        run = subprocess.run([NCTLM, *argv, "-q", "--stats-json", stats], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        with open(stats) as f:
            return json.load(f)["results"]

    def test_each_kernel_runs_from_the_tracer_as_its_shipped_program_does_on_both_platforms(self):
        self.assertTrue(os.access(NCTLM, os.X_OK), f"no nctlm binary at {NCTLM} (set NCTLM)")
        for name, spec in library.KERNELS.items():
            for platform in ("trn1", "trn2"):
                with self.subTest(kernel=name, platform=platform):
                    base = os.path.join(support._tmp.name, f"{name}-{platform}")
                    traced = self.run_stats(
                        ["kernel", f"{kernel_file(name)}::{name}",
                         *[a for arg in library.trace_args(name, spec["test"], symbolic=False) for a in ("--arg", arg)],
                         "-p", platform], base + ".traced.json")
                    sets = [a for k, v in spec["test"].items() for a in ("--set", f"kernel.{k}={v}")]
                    shipped_run = self.run_stats(["run", "-p", platform, "-t", "kernel", "-w", name, *sets],
                                                 base + ".json")
                    self.assertEqual(traced["instructions_by_op"], shipped_run["instructions_by_op"])
                    self.assertEqual(traced["dma"], shipped_run["dma"])
                    self.assertEqual(traced["flops"], shipped_run["flops"])
                    # A program specialized to these values differs from the parametric one only in
                    # how it writes them (trips of 1 unrolled, min(...) folded), not in timing.
                    self.assertAlmostEqual(traced["sim_time_ns"], shipped_run["sim_time_ns"],
                                           delta=1e-9 * shipped_run["sim_time_ns"])


if __name__ == "__main__":
    unittest.main()
