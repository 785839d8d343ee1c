"""Integer expressions over loop variables, as the kernel format writes them.

A traced `affine_range` loop runs its body once with a symbolic loop variable, so every index the
kernel computes from it becomes an expression; so does every value computed from a symbolic
argument (`--arg ROWS=sym:4096`, a shape or block size the program keeps as an `args` entry).
Expressions are kept in a canonical polynomial form (integer coefficient x monomial + constant,
a monomial being a variable, an opaque atom or a product of them) so that `(i + 1) * 128 - i * 128`
folds to the integer 128 and `(i + 1) * BM - i * BM` to `BM`; anything else (`//`, `%`, `min`,
a comparison) becomes an opaque atom. An expression with no variable left is a plain Python int.

Real-valued expressions of symbolic arguments (`1.0 / COLS`, `D ** -0.5`: the scalar operands of
a kernel whose shapes are arguments) are `Real`s, written as the format's real expressions.

The textual form is the format's: integers, names, `+ - * // %`, unary `-`, parentheses,
`min`, `max`, comparisons, `and`, `or`, `not` (docs/kernels.md, "Expressions"). It is also
valid Python, which `parse` relies on.
"""

import ast

from .errors import NkiError

# Python's precedence levels, loosest first; used to parenthesize only where needed.
_OR, _AND, _NOT, _CMP, _SUM, _PROD, _UNARY, _POW, _ATOM = range(9)
_CMP_OPS = {"<": _CMP, "<=": _CMP, ">": _CMP, ">=": _CMP, "==": _CMP, "!=": _CMP}


class Atom:
    """A non-affine sub-expression (or a variable), compared and ordered by its text."""

    __slots__ = ("kind", "args", "text", "prec")

    def __init__(self, kind, args):
        self.kind = kind
        self.args = args
        self.text, self.prec = _render_atom(kind, args)

    def __eq__(self, other):
        return isinstance(other, Atom) and self.text == other.text

    def __hash__(self):
        return hash(self.text)


class Expr:
    """sum(coeff * atom) + const, with at least one atom (otherwise it is an int)."""

    __slots__ = ("terms", "const")

    def __init__(self, terms, const):
        self.terms = terms  # tuple of (Atom, int), sorted by atom text, no zero coefficient
        self.const = const

    # --- arithmetic (other operand types, e.g. nl.arange indices or tiles, handle it themselves) ---
    def __add__(self, other):
        return _add(self, other, 1) if _is_int(other) else _real_or_not(other, "+", self, other)

    def __radd__(self, other):
        return _add(self, other, 1) if _is_int(other) else _real_or_not(other, "+", other, self)

    def __sub__(self, other):
        return _add(self, other, -1) if _is_int(other) else _real_or_not(other, "-", self, other)

    def __rsub__(self, other):
        return _add(_scale(self, -1), other, 1) if _is_int(other) else _real_or_not(other, "-", other, self)

    def __neg__(self):
        return _scale(self, -1)

    def __pos__(self):
        return self

    def __mul__(self, other):
        return mul(self, other) if _is_int(other) else _real_or_not(other, "*", self, other)

    def __rmul__(self, other):
        return mul(other, self) if _is_int(other) else _real_or_not(other, "*", other, self)

    def __floordiv__(self, other):
        return floordiv(self, other) if _is_int(other) else NotImplemented

    def __rfloordiv__(self, other):
        return floordiv(other, self) if _is_int(other) else NotImplemented

    def __mod__(self, other):
        return mod(self, other) if _is_int(other) else NotImplemented

    def __rmod__(self, other):
        return mod(other, self) if _is_int(other) else NotImplemented

    # With floats, or '/' and '**': a real expression (a scalar operand), args only: set below.

    # --- comparisons build expressions (1 or 0), as the format's comparisons do ------------
    def __lt__(self, other):
        return compare("<", self, other) if _is_int(other) else NotImplemented

    def __le__(self, other):
        return compare("<=", self, other) if _is_int(other) else NotImplemented

    def __gt__(self, other):
        return compare(">", self, other) if _is_int(other) else NotImplemented

    def __ge__(self, other):
        return compare(">=", self, other) if _is_int(other) else NotImplemented

    def __eq__(self, other):
        return compare("==", self, other) if _is_int(other) else NotImplemented

    def __ne__(self, other):
        return compare("!=", self, other) if _is_int(other) else NotImplemented

    def __hash__(self):
        return hash(render(self))

    # --- a symbolic value cannot steer Python --------------------------------------------
    def __bool__(self):
        args = sorted(names(self) & set(ARGS))
        if args:
            raise NkiError(
                f"the value of '{render(self)}' depends on the symbolic argument '{args[0]}' (--arg "
                f"{args[0]}=sym): Python control flow can't depend on it (compute with it, use it in "
                "loop trips, slices and masks; or trace with a number)")
        raise NkiError(
            f"the value of '{render(self)}' is only known when the kernel runs: an affine_range/"
            "sequential_range loop variable can't decide Python control flow (use range or "
            "nl.static_range to unroll, or express the condition as a mask)")

    def __index__(self):
        args = sorted(names(self) & set(ARGS))
        if args:
            raise NkiError(
                f"'{render(self)}' depends on the symbolic argument '{args[0]}' (--arg {args[0]}=sym): "
                "it can't be used as a Python integer (list index, range bound, nl.arange size); "
                "use nl.affine_range/sequential_range for loops, or trace with a number")
        raise NkiError(
            f"'{render(self)}' is symbolic: it can't be used as a Python integer (list index, "
            "range bound); use range or nl.static_range to unroll the loop")

    __int__ = __index__

    def __float__(self):
        raise NkiError(f"'{render(self)}' is symbolic: it has no float value while tracing (math.sqrt and "
                       "friends need a number; write x ** 0.5, 1 / x: real expressions of arguments)")

    def __repr__(self):
        return render(self)


def _is_int(x):
    return isinstance(x, (int, Expr))


def _real_or_not(other, op, a, b):
    return real_op(op, a, b) if isinstance(other, (float, Real)) else NotImplemented


def var(name):
    return Expr(((Atom("var", (name,)), 1),), 0)


def same(a, b):
    """Structural equality of two expressions (== on expressions builds a comparison)."""
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        return a == b
    return isinstance(a, Expr) and isinstance(b, Expr) and render(a) == render(b)


def same_all(xs, ys):
    return len(xs) == len(ys) and all(same(a, b) for a, b in zip(xs, ys))


def _linear(x):
    if isinstance(x, Expr):
        return dict(x.terms), x.const
    if isinstance(x, bool):
        return {}, int(x)
    if isinstance(x, int):
        return {}, x
    raise NkiError(f"expected an integer index expression, got {type(x).__name__} {x!r}")


def make(terms, const):
    items = tuple(sorted(((a, c) for a, c in terms.items() if c != 0), key=lambda t: t[0].text))
    return Expr(items, const) if items else const


def _add(a, b, sign):
    ta, ca = _linear(a)
    tb, cb = _linear(b)
    for atom, c in tb.items():
        ta[atom] = ta.get(atom, 0) + sign * c
    return make(ta, ca + sign * cb)


def _scale(a, k):
    t, c = _linear(a)
    return make({atom: k * v for atom, v in t.items()}, k * c)


def _as_atom_expr(kind, args):
    return Expr(((Atom(kind, args), 1),), 0)


def _factors(atom):
    return atom.args if atom.kind == "*" else (atom,)


def _product(x, y):
    """The monomial x * y of two atoms: a '*' atom of their factors, sorted."""
    return Atom("*", tuple(sorted(_factors(x) + _factors(y), key=lambda a: a.text)))


def mul(a, b):
    """a * b, distributed: (i + 1) * BM is i * BM + BM."""
    if not isinstance(a, Expr):
        _linear(a)
        return _scale(b, a)
    if not isinstance(b, Expr):
        _linear(b)
        return _scale(a, b)
    terms = {}
    for x, cx in a.terms + ((None, a.const),):
        for y, cy in b.terms + ((None, b.const),):
            if x is None and y is None:
                continue
            atom = x if y is None else y if x is None else _product(x, y)
            terms[atom] = terms.get(atom, 0) + cx * cy
    return make(terms, a.const * b.const)


def floordiv(a, b):
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        if b == 0:
            raise NkiError("integer division by zero in an index expression")
        return a // b
    if isinstance(b, int) and b > 0:
        terms, const = _linear(a)
        if all(c % b == 0 for c in terms.values()):
            return make({t: c // b for t, c in terms.items()}, const // b)
        if b == 1:
            return a
    return _as_atom_expr("//", (a, b))


def mod(a, b):
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        if b == 0:
            raise NkiError("modulo by zero in an index expression")
        return a % b
    if isinstance(b, int) and b > 0:
        terms, const = _linear(a)
        if all(c % b == 0 for c in terms.values()):
            return const % b
    return _as_atom_expr("%", (a, b))


# Value ranges of the variables in scope (loop variables, pid, symbolic arguments: >= 1), kept by
# the running kernel: they let min/max fold where one side bounds the other (max(0, i * 16) is
# i * 16 for i >= 0).
RANGES = {}
# The symbolic arguments of the kernel being traced, with the values they default to.
ARGS = {}
_INF = float("inf")


def bounds(x):
    """(lowest, highest) value of x over RANGES (infinite where unknown)."""
    if not isinstance(x, Expr):
        return x, x
    lo = hi = x.const
    for atom, c in x.terms:
        a_lo, a_hi = _atom_bounds(atom)
        lo += min(c * a_lo, c * a_hi) if c else 0
        hi += max(c * a_lo, c * a_hi) if c else 0
    return lo, hi


def _atom_bounds(atom):
    kind, args = atom.kind, atom.args
    if kind == "var":
        return RANGES.get(args[0], (-_INF, _INF))
    if kind in _CMP_OPS or kind in ("and", "or", "not"):
        return 0, 1
    if kind == "*":
        return _product_bounds(args)
    (a_lo, a_hi), (b_lo, b_hi) = bounds(args[0]), bounds(args[1])
    if kind == "min":
        return min(a_lo, b_lo), min(a_hi, b_hi)
    if kind == "max":
        return max(a_lo, b_lo), max(a_hi, b_hi)
    if kind == "%" and isinstance(args[1], int) and args[1] > 0:
        return 0, args[1] - 1
    if kind == "//" and isinstance(args[1], int) and args[1] > 0:
        return (a_lo if abs(a_lo) == _INF else a_lo // args[1]), (a_hi if abs(a_hi) == _INF else a_hi // args[1])
    if kind == "//" and a_lo >= 0 and b_lo >= 1:  # M // BM of positive arguments
        return (0 if b_hi == _INF else a_lo // b_hi), (a_hi if a_hi == _INF else a_hi // b_lo)
    return -_INF, _INF


def _product_bounds(factors):
    lo = hi = 1
    for f in factors:
        f_lo, f_hi = _atom_bounds(f)
        # An endpoint is a limit: 0 times an unbounded side is still 0 at that end.
        ends = [0 if 0 in (x, y) else x * y for x in (lo, hi) for y in (f_lo, f_hi)]
        lo, hi = min(ends), max(ends)
    return lo, hi


# Open loops of symbolic trip: name -> (start, step, trip), outermost first (at_defaults).
LOOPS = {}


def at_defaults(x):
    """(lowest, highest) value of x with every symbolic argument at its default value (loop
    variables over their ranges): what the tracer checks limits against. The loader checks them
    again at the values a run sets."""
    if not isinstance(x, Expr):
        return x, x
    saved = {a: RANGES[a] for a in list(ARGS) + list(LOOPS) if a in RANGES}
    RANGES.update({a: (v, v) for a, v in ARGS.items()})
    # A loop variable's range again with the arguments fixed (outer loops first): p < 128 // G
    # is p <= 31 at G = 4, where over every G it is p <= 127.
    for name, (start, step, trip) in LOOPS.items():
        first_lo, first_hi = bounds(start)
        RANGES[name] = (first_lo, first_hi + step * (bounds(trip)[1] - 1))
    try:
        return bounds(x)
    finally:
        for a in ARGS:
            RANGES.pop(a, None)
        RANGES.update(saved)


def known(x):
    """x's value at the arguments' defaults, or None where a loop variable leaves it open."""
    lo, hi = at_defaults(x)
    return lo if lo == hi and abs(lo) != _INF else None


def is_symbolic_size(x):
    """An integer expression of symbolic arguments only (no loop variable, no pid)."""
    return isinstance(x, Expr) and names(x) <= set(ARGS)


def size_eq(a, b):
    """Whether two sizes are equal for every value of the symbolic arguments: structurally equal
    expressions are; sizes that differ at the defaults aren't; sizes equal at the defaults only
    (ROWS and COLS, both 2048) are an error, since the program would be wrong at other values."""
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        return a == b
    if same(a, b):
        return True
    ka, kb = known(a), known(b)
    if ka is None or kb is None or ka != kb:
        return False
    raise NkiError(f"the sizes '{render(a)}' and '{render(b)}' are equal at the arguments' default values "
                   f"({ka}) but not for every value of them: the program would only be right there (make the "
                   "kernel use one expression for both, or trace with numbers)")


def emin(a, b):
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        return min(a, b)
    if same(a, b) or bounds(a)[1] <= bounds(b)[0]:
        return a
    if bounds(b)[1] <= bounds(a)[0]:
        return b
    return _as_atom_expr("min", (a, b))


def emax(a, b):
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        return max(a, b)
    if same(a, b) or bounds(a)[0] >= bounds(b)[1]:
        return a
    if bounds(b)[0] >= bounds(a)[1]:
        return b
    return _as_atom_expr("max", (a, b))


_PY_CMP = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
           ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def compare(op, a, b):
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        return int(_PY_CMP[op](a, b))
    diff = _add(a, b, -1)
    if not isinstance(diff, Expr):  # i + 3 < i + 5 folds
        return int(_PY_CMP[op](diff, 0))
    return _as_atom_expr(op, (a, b))


def _is_boolean(x):
    """A 0/1-valued expression: a comparison or a logical operation."""
    return (isinstance(x, Expr) and len(x.terms) == 1 and x.terms[0][1] == 1 and not x.const and
            x.terms[0][0].kind in (*_CMP_OPS, "and", "or", "not"))


def logical(op, *args):
    """'and', 'or' (two arguments) or 'not' (one), on 0/1 expressions."""
    if all(not isinstance(a, Expr) for a in args):
        if op == "not":
            return int(not args[0])
        return int(bool(args[0]) and bool(args[1])) if op == "and" else int(bool(args[0]) or bool(args[1]))
    if op != "not":
        for known, other in ((args[0], args[1]), (args[1], args[0])):
            if not isinstance(known, Expr) and _is_boolean(other):
                if op == "and":
                    return other if known else 0
                return 1 if known else other
    return _as_atom_expr(op, tuple(args))


# --- text ------------------------------------------------------------------------------------
def _paren(text_prec, minimum):
    text, prec = text_prec
    return text if prec >= minimum else f"({text})"


def _render_prec(x):
    if not isinstance(x, Expr):
        return (str(x), _ATOM) if x >= 0 else (str(x), _UNARY)
    if len(x.terms) == 1 and x.terms[0][1] == 1 and not x.const:
        return x.terms[0][0].text, x.terms[0][0].prec
    parts = []
    for atom, c in x.terms:
        if c == 1:
            body = _paren((atom.text, atom.prec), _SUM + 1 if parts else _SUM)
            parts.append(("+", body))
        elif c == -1:
            parts.append(("-", _paren((atom.text, atom.prec), _PROD)))
        else:
            body = _paren((atom.text, atom.prec), _PROD) + " * " + str(abs(c))
            parts.append(("+" if c > 0 else "-", body))
    parts.sort(key=lambda part: part[0] == "-")  # p - f0 * 2 rather than -f0 * 2 + p
    if x.const > 0 and parts[0][0] == "-":
        parts.insert(0, ("+", str(x.const)))  # 1000 - i * 128 rather than -i * 128 + 1000
    elif x.const:
        parts.append(("+" if x.const > 0 else "-", str(abs(x.const))))
    sign, first = parts[0]
    if sign == "-" and x.terms[0][0].prec < _ATOM:  # all terms negative: the first is terms[0]
        first = f"({first})"  # -(a // 2): a bare "-a // 2" would negate a first
    text = first if sign == "+" else "-" + first
    for sign, body in parts[1:]:
        text += f" {sign} {body}"
    if len(parts) == 1:
        return text, _PROD if sign == "+" else _UNARY
    return text, _SUM


def _render_atom(kind, args):
    if kind == "var":
        return args[0], _ATOM
    if kind in ("min", "max"):
        return f"{kind}({render(args[0])}, {render(args[1])})", _ATOM
    if kind == "*":  # a monomial: factors are atoms; all but the first must not read as a // b * c
        parts = [_paren((f.text, f.prec), _PROD if k == 0 else _PROD + 1) for k, f in enumerate(args)]
        return " * ".join(parts), _PROD
    if kind in ("//", "%"):
        left = _paren(_render_prec(args[0]), _PROD)
        right = _paren(_render_prec(args[1]), _PROD + 1)
        return f"{left} {kind} {right}", _PROD
    if kind in _CMP_OPS:
        left = _paren(_render_prec(args[0]), _SUM)
        right = _paren(_render_prec(args[1]), _SUM)
        return f"{left} {kind} {right}", _CMP
    if kind == "not":
        return "not " + _paren(_render_prec(args[0]), _NOT), _NOT
    if kind in ("and", "or"):
        prec = _AND if kind == "and" else _OR
        left = _paren(_render_prec(args[0]), prec)
        right = _paren(_render_prec(args[1]), prec + 1)
        return f"{left} {kind} {right}", prec
    raise AssertionError(kind)


def render(x):
    """The format's text for an expression; ints stay ints (the JSON writes them as numbers)."""
    return _render_prec(x)[0]


def to_json(x):
    return x if not isinstance(x, Expr) else render(x)


def names(x, out=None):
    """The variable names an expression uses."""
    out = set() if out is None else out
    if isinstance(x, Expr):
        for atom, _ in x.terms:
            _atom_names(atom, out)
    return out


def _atom_names(atom, out):
    if atom.kind == "var":
        out.add(atom.args[0])
    elif atom.kind == "*":
        for f in atom.args:
            _atom_names(f, out)
    else:
        for a in atom.args:
            names(a, out)


# --- evaluation --------------------------------------------------------------------------------
def evaluate(x, env):
    """The integer value of x with the variables bound in env."""
    if not isinstance(x, Expr):
        return x
    total = x.const
    for atom, c in x.terms:
        total += c * _eval_atom(atom, env)
    return total


def _eval_atom(atom, env):
    kind, args = atom.kind, atom.args
    if kind == "var":
        try:
            return env[args[0]]
        except KeyError:
            raise NkiError(f"unknown name '{args[0]}' in an expression") from None
    if kind == "*":
        product = 1
        for f in args:
            product *= _eval_atom(f, env)
        return product
    vals = [evaluate(a, env) for a in args]
    if kind in ("//", "%"):
        if vals[1] == 0:
            raise NkiError(f"division by zero in '{atom.text}'")
        return vals[0] // vals[1] if kind == "//" else vals[0] % vals[1]
    if kind == "min":
        return min(vals)
    if kind == "max":
        return max(vals)
    if kind in _PY_CMP:
        return int(_PY_CMP[kind](vals[0], vals[1]))
    if kind == "not":
        return int(not vals[0])
    if kind == "and":
        return int(bool(vals[0]) and bool(vals[1]))
    return int(bool(vals[0]) or bool(vals[1]))


_AST_BIN = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: mul,
            ast.FloorDiv: floordiv, ast.Mod: mod}
_AST_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def parse(value):
    """An expression from the format's JSON (an int or a string) back to int/Expr."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise NkiError(f"expected an integer or an expression string, got {value!r}")
    if isinstance(value, int):
        return value
    return _from_ast(_tree(value), value)


def _tree(text):
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        raise NkiError(f"malformed expression '{text}'") from None


def _from_ast(node, text):
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        return var(node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in _AST_BIN:
        return _AST_BIN[type(node.op)](_from_ast(node.left, text), _from_ast(node.right, text))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_from_ast(node.operand, text)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return logical("not", _from_ast(node.operand, text))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _AST_CMP:
        return compare(_AST_CMP[type(node.ops[0])], _from_ast(node.left, text),
                       _from_ast(node.comparators[0], text))
    if isinstance(node, ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        result = _from_ast(node.values[0], text)
        for v in node.values[1:]:
            result = logical(op, result, _from_ast(v, text))
        return result
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max")
            and len(node.args) == 2 and not node.keywords):
        f = emin if node.func.id == "min" else emax
        return f(_from_ast(node.args[0], text), _from_ast(node.args[1], text))
    raise NkiError(f"expression '{text}' uses something outside the format's grammar")


# --- real expressions (scalar operands computed from symbolic arguments) ----------------------------
_REAL_PREC = {"+": _SUM, "-": _SUM, "*": _PROD, "/": _PROD, "**": _POW}
_REAL_FN = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
            "/": lambda a, b: a / b, "**": lambda a, b: a ** b}


class Real:
    """A real-valued expression over symbolic arguments, e.g. 1 / COLS or D ** -0.5: kind "num"
    (a float), "int" (an integer expression), "neg", or a binary operator over two Reals."""

    __slots__ = ("kind", "args", "text", "prec")

    def __init__(self, kind, args):
        self.kind, self.args = kind, args
        if kind == "num":
            self.text, self.prec = repr(args[0]), _ATOM if args[0] >= 0 else _UNARY
        elif kind == "int":
            self.text, self.prec = _render_prec(args[0])
        elif kind == "neg":
            self.text, self.prec = "-" + _paren((args[0].text, args[0].prec), _UNARY), _UNARY
        else:
            prec = _REAL_PREC[kind]
            a, b = args
            if kind == "**":  # right-associative; its left operand is a primary
                left, right = _paren((a.text, a.prec), _ATOM), _paren((b.text, b.prec), _UNARY)
            else:
                left, right = _paren((a.text, a.prec), prec), _paren((b.text, b.prec), prec + 1)
            self.text, self.prec = f"{left} {kind} {right}", prec

    def __neg__(self):
        return Real("neg", (self,))

    def __pos__(self):
        return self

    def __bool__(self):
        raise NkiError(f"the value of '{self.text}' depends on symbolic arguments: Python control flow "
                       "can't depend on it")

    def __float__(self):
        raise NkiError(f"'{self.text}' depends on symbolic arguments: it has no float value while tracing "
                       "(math.sqrt and friends need a number; write x ** 0.5, 1 / x)")

    __int__ = __index__ = __float__

    def __repr__(self):
        return self.text


def _real_operators(cls, ops):
    """cls.__op__ and cls.__rop__ building real expressions, for each (method name, operator)."""
    for name, op in ops:
        setattr(cls, f"__{name}__", lambda self, other, op=op: real_op(op, self, other))
        setattr(cls, f"__r{name}__", lambda self, other, op=op: real_op(op, other, self))


_real_operators(Real, (("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("pow", "**")))
_real_operators(Expr, (("truediv", "/"), ("pow", "**")))


def _as_real(x):
    if isinstance(x, Real):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, float, Expr)):
        return None
    if isinstance(x, float) and (x != x or x in (_INF, -_INF)):
        raise NkiError(f"{x} can't be part of a real expression")
    return Real("num", (x,)) if isinstance(x, float) else Real("int", (x,))


def real_op(op, a, b):
    """a <op> b where one side is symbolic and the result is real-valued."""
    if not isinstance(a, (Expr, Real)) and not isinstance(b, (Expr, Real)):
        return _REAL_FN[op](a, b)
    ra, rb = _as_real(a), _as_real(b)
    if ra is None or rb is None:
        return NotImplemented
    return Real(op, (ra, rb))


def real_names(x, out=None):
    out = set() if out is None else out
    if isinstance(x, Real):
        if x.kind == "int":
            names(x.args[0], out)
        elif x.kind != "num":
            for a in x.args:
                real_names(a, out)
    else:
        names(x, out)
    return out


def evaluate_real(x, env):
    """The float value of a Real (or an int/Expr/float) with the variables bound in env."""
    if not isinstance(x, Real):
        return float(evaluate(x, env)) if isinstance(x, Expr) else float(x)
    if x.kind == "num":
        return float(x.args[0])
    if x.kind == "int":
        return float(evaluate(x.args[0], env))
    if x.kind == "neg":
        return -evaluate_real(x.args[0], env)
    a, b = (evaluate_real(v, env) for v in x.args)
    try:
        return float(_REAL_FN[x.kind](a, b))
    except (ZeroDivisionError, OverflowError) as e:
        raise NkiError(f"'{x.text}': {e}") from None


_AST_REAL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


def parse_number(value):
    """A number field of the format: a JSON number, or an expression string — an integer one
    (int/Expr), else a real one (Real)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    try:
        return parse(value)
    except NkiError:
        return _real_from_ast(_tree(value), value)


def _real_from_ast(node, text):
    if isinstance(node, ast.Constant) and isinstance(node.value, float):
        return Real("num", (node.value,))
    if isinstance(node, ast.BinOp) and type(node.op) in _AST_REAL:
        return Real(_AST_REAL[type(node.op)], (_as_real(_real_from_ast(node.left, text)),
                                               _as_real(_real_from_ast(node.right, text))))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_as_real(_real_from_ast(node.operand, text))
    return _from_ast(node, text)
