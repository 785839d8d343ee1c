"""NKI data types, their names in the kernel format, and how the numpy backend rounds to them.

The numpy backend keeps every value in float64 and rounds it to the destination's type on every
write: float32, float16 and int32 by a cast; bfloat16 by round-to-nearest-even on the upper 16
bits of the float32 pattern; tfloat32 likewise on 10 mantissa bits; the float8 formats by rounding
the mantissa to 3 (e4m3) or 2 (e5m2) bits with their exponent range and saturation at the largest
finite value (an approximation: no NaN encodings, subnormals on the format's grid).
"""

from .errors import NkiError


class DType:
    __slots__ = ("name", "fmt", "itemsize", "is_float", "rank", "mantissa", "min_exp", "max_value")

    def __init__(self, name, fmt, itemsize, is_float, rank, mantissa=None, min_exp=None, max_value=None):
        self.name = name          # NKI's name (nl.bfloat16)
        self.fmt = fmt            # the kernel format's element type
        self.itemsize = itemsize  # bytes per element
        self.is_float = is_float
        self.rank = rank          # precision order for result-type promotion
        self.mantissa = mantissa  # explicit mantissa bits, for the float8/tf32 rounding
        self.min_exp = min_exp    # exponent of the smallest normal number
        self.max_value = max_value

    def __repr__(self):
        return f"nl.{self.name}"

    def __reduce__(self):
        return (by_name, (self.name,))


float8_e4m3 = DType("float8_e4m3", "fp8", 1, True, 1, 3, -6, 448.0)
float8_e5m2 = DType("float8_e5m2", "fp8", 1, True, 1, 2, -14, 57344.0)
bfloat16 = DType("bfloat16", "bf16", 2, True, 2)
float16 = DType("float16", "fp16", 2, True, 3)
tfloat32 = DType("tfloat32", "fp32", 4, True, 4, 10, -126, 3.4028234663852886e38)
float32 = DType("float32", "fp32", 4, True, 5)
int32 = DType("int32", "int32", 4, False, 0)

ALL = (float8_e4m3, float8_e5m2, bfloat16, float16, tfloat32, float32, int32)
_BY_NAME = {d.name: d for d in ALL}
# Spellings accepted for --arg and dtype= besides NKI's names.
_ALIASES = {"bf16": bfloat16, "fp16": float16, "half": float16, "fp32": float32, "float": float32,
            "tf32": tfloat32, "fp8": float8_e4m3, "fp8_e4m3": float8_e4m3, "fp8_e5m2": float8_e5m2,
            "float8_e4m3fn": float8_e4m3, "int": int32, "i32": int32}


def by_name(name):
    d = _BY_NAME.get(name) or _ALIASES.get(name)
    if d is None:
        known = ", ".join(sorted(set(_BY_NAME) | set(_ALIASES)))
        raise NkiError(f"unknown or unsupported data type '{name}' (the subset has: {known})")
    return d


def to_dtype(x):
    """An NKI dtype from nl.<type>, a numpy type or dtype, or a name."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        return by_name(x)
    name = getattr(x, "__name__", None) or getattr(x, "name", None)
    if isinstance(name, str):
        return by_name(name)
    raise NkiError(f"not a data type: {x!r}")


def promote(*dtypes):
    """The result type of an op over inputs of these types: the most precise one."""
    return max(dtypes, key=lambda d: d.rank)


def is_fp8(d):
    return d.fmt == "fp8"


# --- rounding (numpy backend only; numpy is imported where needed) -----------------------------
def round_to(values, dtype):
    """values (a float64 numpy array) rounded to what `dtype` can hold, as float64."""
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    if dtype is float32:
        return v.astype(np.float32).astype(np.float64)
    if dtype is float16:
        return v.astype(np.float16).astype(np.float64)
    if dtype is int32:
        return np.clip(np.rint(np.nan_to_num(v)), -2 ** 31, 2 ** 31 - 1)
    if dtype is bfloat16:
        bits = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        out = bits.astype(np.uint32).view(np.float32).astype(np.float64)
        return np.where(np.isnan(v), v, out)
    return _round_mantissa(v, dtype)


def _round_mantissa(v, dtype):
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.abs(v)
        exp = np.floor(np.log2(np.where(mag > 0, mag, 1.0)))
        exp = np.maximum(exp, dtype.min_exp)
        step = np.exp2(exp - dtype.mantissa)
        out = np.round(v / step) * step
    out = np.clip(out, -dtype.max_value, dtype.max_value)
    return np.where(np.isfinite(v), out, v)
