"""Index expressions: affine folding, the format's text, and reading the text back."""

import random
import unittest

import support  # noqa: F401
from nctlm.nki import expr as ex
from nctlm.nki.errors import NkiError


class Folding(unittest.TestCase):
    def test_affine_terms_cancel_to_an_integer(self):
        i, j = ex.var("i"), ex.var("j")
        self.assertEqual((i + 1) * 128 - i * 128, 128)
        self.assertIsInstance((i + 1) * 128 - i * 128, int)
        self.assertEqual(ex.render(i * 128 + j * 4 + 3 - j * 4), "i * 128 + 3")

    def test_division_folds_when_every_coefficient_divides(self):
        i = ex.var("i")
        self.assertEqual(ex.render((i * 256 + 128) // 128), "i * 2 + 1")
        self.assertEqual(ex.render((i * 256 + 128) % 128), "0")
        self.assertEqual(ex.render((i + 1) // 2), "(i + 1) // 2")

    def test_comparisons_of_equal_variables_fold(self):
        i = ex.var("i")
        self.assertEqual(i + 3 < i + 5, 1)
        self.assertEqual(ex.render(i < 5), "i < 5")

    def test_a_symbolic_value_refuses_python_control_flow(self):
        i = ex.var("i")
        with self.assertRaises(NkiError):
            bool(i == 0)
        with self.assertRaises(NkiError):
            range(i)

    def test_negated_floor_division_keeps_its_parentheses(self):
        i = ex.var("i")
        e = -((i + 1) // 2)
        self.assertEqual(ex.evaluate(ex.parse(ex.render(e)), {"i": 2}), -1)


def random_expr(rng, depth=0):
    names = ["i", "j", "k"]
    choice = rng.randrange(9 if depth < 3 else 2)
    if choice == 0:
        return rng.randint(-50, 50)
    if choice == 1:
        return ex.var(rng.choice(names))
    a, b = random_expr(rng, depth + 1), random_expr(rng, depth + 1)
    if choice == 2:
        return a + b
    if choice == 3:
        return a - b
    if choice == 4:
        return a * rng.randint(-5, 5) if rng.random() < 0.7 else ex.mul(a, b)
    if choice == 5:
        return ex.floordiv(a, rng.randint(1, 9))
    if choice == 6:
        return ex.mod(a, rng.randint(1, 9))
    if choice == 7:
        return (ex.emin if rng.random() < 0.5 else ex.emax)(a, b)
    return ex.logical("and", ex.compare("<", a, b), ex.compare(">=", b, 0)) if rng.random() < 0.5 else -a


def python_value(e, env):
    """Evaluate by Python on the rendered text: the format's grammar is Python's."""
    return int(eval(ex.render(e), {"min": min, "max": max}, dict(env)))


class RoundTrip(unittest.TestCase):
    def test_random_expressions_evaluate_alike_in_every_form(self):
        rng = random.Random(11)
        for _ in range(2000):
            e = random_expr(rng)
            env = {n: rng.randint(-20, 20) for n in "ijk"}
            direct = ex.evaluate(e, env)
            self.assertEqual(ex.evaluate(ex.parse(ex.render(e)), env), direct, ex.render(e))
            self.assertEqual(python_value(e, env), direct, ex.render(e))

    def test_text_outside_the_grammar_is_refused(self):
        for text in ("i ** 2", "f(i)", "i / 2", "[1]", "'a'"):
            with self.assertRaises(NkiError, msg=text):
                ex.parse(text)


if __name__ == "__main__":
    unittest.main()
