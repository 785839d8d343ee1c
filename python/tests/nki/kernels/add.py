"""Elementwise add of two [rows, cols] tensors over an SPMD grid: each program instance takes
rows / num_programs rows, 128 at a time."""
import nctlm.nki as nki
import nctlm.nki.language as nl


@nki.jit
def add(a, b):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    per_program = rows // nl.num_programs()
    first = nl.program_id(0) * per_program
    for i in nl.affine_range(per_program // 128):
        r = first + i * 128
        at = nl.load(a[r:r + 128, :])
        bt = nl.load(b[r:r + 128, :])
        nl.store(out[r:r + 128, :], value=at + bt)
    return out


def reference(a, b):
    return a.astype("float64") + b


def wrong_reference(a, b):
    return a.astype("float64") - b
