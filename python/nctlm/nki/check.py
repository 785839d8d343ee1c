"""--check: run the kernel with numpy on random inputs and compare with a reference function.

Inputs are standard-normal values (integers in [-8, 8) for int32) from the seed, rounded to each
tensor's type; output-only parameters start as zeros. The reference is called positionally with
the kernel's arguments (tensors as float32 numpy arrays holding the same rounded values) and
returns the expected outputs, one array per kernel output: the tensors the kernel returns, or, if
it returns nothing, the parameters it stores into, in parameter order.

An output matches when every element satisfies |out - ref| <= atol + rtol * |ref| (NaN never
matches). The default tolerance t follows the least precise type among the kernel's tensors and
tiles, since every write rounds to its destination's type (TOLERANCES): rtol = t and atol =
t * max|ref| of that output, so that an output of small values (softmax over thousands of
columns) is still compared at its own scale. --rtol/--atol give absolute values instead.
"""

import sys

from .dtypes import round_to
from .errors import NkiError
from .kernel import TensorSpec, bind, execute
from .program import live_buffers

# By the least precise type involved: a few roundings of that type's epsilon (fp32 2^-24,
# fp16/tf32 2^-11, bf16 2^-8, fp8 e4m3 2^-4) accumulate through a kernel.
TOLERANCES = {"fp32": 1e-4, "int32": 1e-4, "fp16": 5e-3, "tf32": 5e-3, "bf16": 2e-2, "fp8": 0.25}
_ORDER = ["fp8", "bf16", "fp16", "tf32", "fp32", "int32"]


def default_tolerance(program):
    """The tolerance of the least precise type among the program's tensors and tiles."""
    kinds = set()
    for x in list(program.tensors) + live_buffers(program):
        kinds.add("tf32" if x.dtype.name == "tfloat32" else x.dtype.fmt)
    for kind in _ORDER:
        if kind in kinds:
            return TOLERANCES[kind]
    return TOLERANCES["fp32"]


def random_inputs(fn, args, program, seed):
    """(arrays for the kernel, arrays for the reference, dtypes) in parameter order."""
    import numpy as np

    rng = np.random.default_rng(seed)
    params = {t.name: t for t in program.tensors if t.param}
    kernel_args, ref_args, dtypes = {}, [], {}
    for name in bind(fn, args):
        spec = args[name]
        if not isinstance(spec, TensorSpec):
            kernel_args[name] = spec
            ref_args.append(spec)
            continue
        t = params[name]
        if t.kind == "input":
            raw = rng.integers(-8, 8, spec.shape) if spec.dtype.name == "int32" else rng.standard_normal(spec.shape)
            values = round_to(raw, spec.dtype)
        else:
            values = np.zeros(spec.shape)
        kernel_args[name] = values.astype(np.float32)
        dtypes[name] = spec.dtype
        ref_args.append(values.astype(np.int32 if spec.dtype.name == "int32" else np.float32))
    return kernel_args, ref_args, dtypes


def check(fn, args, program, reference, grid, seed, rtol, atol, out):
    """Run and compare; print one line per output to `out`. True when every output matches."""
    try:
        import numpy as np
    except ImportError:
        raise NkiError(f"--check runs the kernel with numpy, which {sys.executable} lacks (Debian: "
                       "python3-numpy, installed by scripts/install-deps)", location=(None, None)) from None

    tolerance = default_tolerance(program)
    rtol = tolerance if rtol is None else rtol
    kernel_args, ref_args, dtypes = random_inputs(fn, args, program, seed)
    _, outputs, machine = execute(fn, kernel_args, grid, dtypes=dtypes)
    expected = reference(*ref_args)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    if len(expected) != len(outputs):
        raise NkiError(f"the reference returned {len(expected)} arrays for {len(outputs)} kernel outputs "
                       f"({', '.join(t.name for t in outputs)})", location=(None, None))
    ok = True
    print(f"check: seed {seed}, rtol {rtol:g}, atol {'%g' % atol if atol is not None else f'{tolerance:g} x max|ref|'}",
          file=out)
    for t, ref in zip(outputs, expected):
        got = machine.tensor_values(t)
        ref = np.asarray(ref, dtype=np.float64)
        if ref.shape != got.shape:
            if ref.size != got.size:
                raise NkiError(f"the reference's output for '{t.name}' has shape {ref.shape}, the kernel's "
                               f"{got.shape}", location=(None, None))
            ref = ref.reshape(got.shape)
        finite = np.abs(ref[np.isfinite(ref)])
        scale = float(finite.max()) if finite.size else 0.0
        out_atol = atol if atol is not None else tolerance * scale
        diff = np.abs(got - ref)
        bad = ~(diff <= out_atol + rtol * np.abs(ref))
        significant = np.abs(ref) > out_atol
        max_abs = float(np.nanmax(diff)) if diff.size and not np.isnan(diff).all() else float("nan")
        rel = diff[significant] / np.abs(ref[significant])
        max_rel = float(np.nanmax(rel)) if rel.size and not np.isnan(rel).all() else 0.0
        nans = int(np.isnan(got).sum())
        verdict = "ok" if not bad.any() else f"MISMATCH: {int(bad.sum())} of {bad.size} elements outside"
        if nans:
            verdict += f" ({nans} NaN: elements never written?)"
        print(f"check: {t.name}{list(got.shape)}: max abs err {max_abs:.3g}, max rel err {max_rel:.3g} "
              f"(where |ref| > atol {out_atol:.3g}): {verdict}", file=out)
        ok = ok and not bad.any()
    return ok
