"""nctlm.nki: kernels written against the Neuron Kernel Interface, traced into nctlm's kernel
program format (docs/kernels.md) or run with numpy.

A kernel written for NKI runs after changing its import lines:

    import nctlm.nki as nki
    import nctlm.nki.language as nl
    import nctlm.nki.isa as nisa

`python3 -m nctlm.nki FILE.py::FN --arg x=bf16[4096,8192] -o kernel.json` traces one (see cli.py).
"""

from . import isa, language
from .errors import NkiError
from .kernel import Kernel, TensorSpec, baremetal, execute, jit, simulate_kernel, trace

__all__ = ["isa", "language", "NkiError", "Kernel", "TensorSpec", "baremetal", "execute", "jit",
           "simulate_kernel", "trace"]
