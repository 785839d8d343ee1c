"""Symbolic integer arguments (`--arg N=sym[:V]`, `dtype[ROWS=4096,COLS]`): the program keeps them as
`args` and expressions; products of symbols fold in the polynomial form; scalars computed from them
are real expressions; where the kernel's Python needs a number the trace stops with its line; the
limits are checked at the defaults and the loader checks them again at the values a run sets."""

import json
import os
import random
import subprocess
import unittest

import support
from nctlm.nki import cli, expr as ex
from nctlm.nki.errors import NkiError

NCTLM = os.environ.get("NCTLM") or os.path.join(support.PYTHON_DIR, "..", "build", "bin", "nctlm")


class Polynomials(unittest.TestCase):
    def test_products_of_symbols_distribute_and_cancel(self):
        i, bm, k = ex.var("i"), ex.var("BM"), ex.var("K")
        self.assertEqual(ex.render((i + 1) * bm - i * bm), "BM")
        self.assertEqual(ex.render((i + 1) * bm * k - k * bm * i), "BM * K")
        self.assertTrue(ex.same(bm * k, k * bm))
        self.assertEqual(ex.render((bm // 128) * (i * 2 + 1)), "BM // 128 + BM // 128 * i * 2")

    def test_random_products_evaluate_alike_in_every_form(self):
        rng = random.Random(3)
        names = ["i", "j", "M"]
        for _ in range(1000):
            terms = [ex.var(rng.choice(names)) * rng.randint(-3, 3) + rng.randint(-5, 5) for _ in range(3)]
            d = rng.randint(1, 4)
            e = ex.mul(ex.mul(terms[0], terms[1]), terms[2]) + ex.mul(ex.floordiv(terms[0], d), terms[1])
            env = {n: rng.randint(-9, 9) for n in names}
            a, b, c = (ex.evaluate(t, env) for t in terms)
            self.assertEqual(ex.evaluate(e, env), a * b * c + a // d * b, ex.render(e))
            self.assertEqual(ex.evaluate(ex.parse(ex.render(e)), env), a * b * c + a // d * b, ex.render(e))
            self.assertEqual(eval(ex.render(e), {}, dict(env)), a * b * c + a // d * b, ex.render(e))

    def test_floor_division_of_arguments_is_non_negative(self):
        ex.RANGES.update({"M": (1, float("inf")), "BM": (1, float("inf"))})
        try:
            self.assertEqual(ex.render(ex.emax(0, ex.floordiv(ex.var("M"), ex.var("BM")))), "M // BM")
        finally:
            ex.RANGES.clear()


class RealExpressions(unittest.TestCase):
    def test_scalars_of_arguments_render_parse_and_evaluate_as_python(self):
        cols, d = ex.var("COLS"), ex.var("D")
        rng = random.Random(5)
        for e in (1.0 / cols, -1.0 / cols, d ** -0.5, -(d ** 0.5), 2.0 - 3 / cols * 0.5, (cols // 2) / 2.0 + 1e-05):
            for _ in range(20):
                env = {"COLS": rng.randint(1, 5000), "D": rng.randint(1, 256)}
                value = eval(e.text, {}, dict(env))
                self.assertAlmostEqual(ex.evaluate_real(e, env), value, places=12, msg=e.text)
                self.assertAlmostEqual(ex.evaluate_real(ex.parse_number(e.text), env), value, places=12, msg=e.text)

    def test_a_real_expression_has_no_python_value(self):
        with self.assertRaises(NkiError):
            float(1.0 / ex.var("COLS"))
        with self.assertRaises(NkiError):
            bool(1.0 / ex.var("COLS"))


KERNEL = """
import math


def k(x, g, BLOCK=64):
    ROWS, COLS = x.shape
    out = nl.ndarray((ROWS, COLS), dtype=x.dtype, buffer=nl.shared_hbm)
    gt = nl.load(g.reshape((1, COLS))).broadcast_to((128, COLS))
    for i in nl.affine_range(ROWS // 128):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
        m = nisa.tensor_scalar(t, nl.multiply, 1.0 / COLS)
        w = nl.ndarray((128, BLOCK), dtype=x.dtype, bufs=2)
        w[...] = nl.copy(m[:, 0:BLOCK])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(m, gt))
    return out
"""


class Tracing(unittest.TestCase):
    def trace(self, *args, source=KERNEL):
        return support.trace(support.write_kernel(source), "k", *args)

    def test_shapes_and_symbols_become_args_and_expressions(self):
        doc, _, _ = self.trace("x=fp32[ROWS=512,COLS=256]", "g=fp32[COLS]", "BLOCK=sym")
        self.assertEqual(doc["args"], {"ROWS": 512, "COLS": 256, "BLOCK": 64})  # BLOCK: the parameter's default
        self.assertEqual([t["shape"] for t in doc["tensors"]], [["ROWS", "COLS"], ["COLS"], ["ROWS", "COLS"]])
        (loop,) = [n for n in doc["body"] if "loop" in n]
        self.assertEqual(loop["trip"], "ROWS // 128")
        instrs = support.instructions(doc["body"])
        self.assertEqual(instrs[1]["src"], {"tensor": "x", "offset": "COLS * i * 128", "ap": [["COLS", 128], [1, "COLS"]]})
        self.assertEqual(instrs[2]["operand0"], "1.0 / COLS")
        self.assertEqual({b["name"]: b["shape"] for b in doc["buffers"]}["w"], ["BLOCK"])

    def test_a_symbol_may_be_given_its_value_once(self):
        doc, _, _ = self.trace("x=fp32[ROWS=512,COLS=256]", "g=fp32[COLS=256]", "BLOCK=sym:32")
        self.assertEqual(doc["args"]["BLOCK"], 32)
        with self.assertRaisesRegex(NkiError, "symbolic argument COLS given two defaults, 256 and 128"):
            self.trace("x=fp32[ROWS=512,COLS=256]", "g=fp32[COLS=128]")
        with self.assertRaisesRegex(NkiError, "symbolic argument N has no value"):
            self.trace("x=fp32[ROWS=512,N]", "g=fp32[N]")

    def test_where_the_python_needs_a_number_the_trace_stops_at_the_line(self):
        cases = [
            ("if COLS > 128:\n        pass", "if COLS", "depends on the symbolic argument 'COLS'"),
            ("for r in range(ROWS // 128):\n        pass", "for r in range", "depends on the symbolic argument 'ROWS'"),
            ("s = math.sqrt(COLS)", "math.sqrt", "no float value while tracing"),
            ("a = nl.load(x[0:128, :])\n    b = nl.load(x[0:128, 0:ROWS])\n    c = a + b", "c = a + b",
             "the sizes 'COLS' and 'ROWS' are equal at the arguments' default values (256)"),
        ]
        for body, where, message in cases:
            with self.subTest(message=message):
                path = support.write_kernel("import math\n\ndef k(x):\n    ROWS, COLS = x.shape\n    " + body
                                            + "\n    return x\n")
                with self.assertRaises(NkiError) as caught:
                    support.trace(path, "k", "x=fp32[ROWS=256,COLS=256]")
                self.assertIn(message, str(caught.exception))
                self.assertTrue(str(caught.exception).startswith(support.line_of(path, where, full=True)),
                                str(caught.exception))

    def test_limits_are_checked_at_the_defaults_and_by_the_loader_at_the_run_values(self):
        source = """
def k(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.exp(nl.load(x)))
    return out
"""
        with self.assertRaisesRegex(NkiError, "partition dimension P > 128"):
            self.trace("x=fp32[P=256,F=64]", source=source)
        doc, _, _ = self.trace("x=fp32[P=128,F=64]", source=source)
        path = os.path.join(support._tmp.name, "limits.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        ok = subprocess.run([NCTLM, "run", "-p", "trn1", "-t", "kernel", "-w", path, "--set", "kernel.P=64", "-q"],
                            capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        bad = subprocess.run([NCTLM, "run", "-p", "trn1", "-t", "kernel", "-w", path, "--set", "kernel.P=256", "-q"],
                             capture_output=True, text=True)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("spans 256 partitions", bad.stderr)

    def test_a_loop_of_symbolic_trip_is_checked_over_its_range_at_the_defaults(self):
        # p < 128 // G: at G = 4, p * G + G <= 128 (p <= 31), though over every G p goes to 127.
        source = """
def k(x):
    G, F = x.shape
    out = nl.ndarray((128, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, F), dtype=x.dtype)
    for p in nl.affine_range(128 // G):
        t[p * G:(p + 1) * G, :] = nl.load(x)
    nl.store(out, value=t)
    return out
"""
        doc, _, _ = self.trace("x=fp32[G=4,F=64]", source=source)
        (loop,) = [n for n in doc["body"] if "loop" in n]
        self.assertEqual(loop["trip"], "128 // G")
        over = source.replace("affine_range(128 // G)", "affine_range(128 // G + 1)")
        with self.assertRaisesRegex(NkiError, "outside a dimension of size 128"):
            self.trace("x=fp32[G=4,F=64]", source=over)

    def test_check_runs_at_the_defaults(self):
        path = support.write_kernel(KERNEL + """

def reference(x, g, BLOCK=64):
    return x / x.shape[1] * g
""")
        code, out, err = support.run_cli(f"{path}::k", "--arg", "x=fp32[ROWS=256,COLS=128]", "--arg", "g=fp32[COLS]",
                                         "--arg", "BLOCK=sym:32", "-o", os.devnull, "--check", f"{path}::reference")
        self.assertEqual(code, 0, out + err)
        self.assertIn("out[256, 128]", out)

    def test_argument_syntax(self):
        self.assertEqual(repr(cli.parse_arg("BM=sym")[1]), "sym:BM")
        self.assertEqual(repr(cli.parse_arg("BM=sym:512")[1]), "sym:BM=512")
        name, spec = cli.parse_arg("x=bf16[ROWS=4096, COLS, 7]")
        self.assertEqual((name, repr(spec)), ("x", "bf16[sym:ROWS=4096, sym:COLS, 7]"))
        with self.assertRaisesRegex(NkiError, "dimension 'ROWS=' is neither"):
            cli.parse_arg("x=bf16[ROWS=]")


if __name__ == "__main__":
    unittest.main()
