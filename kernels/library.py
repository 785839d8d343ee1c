"""The kernel library's index: each kernel of kernels/NAME.py, how it is traced into the parametric
configs/kernels/NAME.json (scripts/gen-kernels), the shapes docs/kernels.md reports
(scripts/kernel-table) and the reduced shapes the tests run.

`shape`: the arguments that are the shape (what a caller sets; the others are block sizes with
defaults). `trace`: the tracer's --arg values. A dimension written NAME=VALUE and an argument NAME=sym are
symbolic: the program keeps NAME as an `args` entry (VALUE, or the kernel's default, is its
default), so `nctlm run -t kernel -w NAME --set kernel.NAME=...` re-instantiates it.
`docs`: (platform, args) rows of the docs table. `test`: reduced args for the tests (both
platforms). `variants`: other args the tests hold the program to (the symbolic program at those
values against a trace with them as numbers).
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GEMM_BLOCKING = ["BM=sym", "BN=sym", "BK=sym", "ABUFS=sym", "PSUM_BUFS=sym"]

KERNELS = {
    "gemm": {
        "shape": ["M", "K", "N"],
        "trace": ["a_t=bf16[K=8192,M=4096]", "b=bf16[K,N=8192]"] + GEMM_BLOCKING,
        "docs": [("trn1", {}), ("trn2", {})] + [
            ("trn2", {"M": n, "K": n, "N": n}) for n in (2048, 3072, 4096, 5120)],
        "test": {"M": 256, "K": 512, "N": 1024, "BM": 256, "BN": 512, "BK": 256},
        "variants": [{"M": 128, "K": 256, "N": 512, "BM": 128, "BN": 512, "BK": 128},
                     {"M": 256, "K": 256, "N": 1024, "BM": 256, "BN": 1024, "BK": 256, "ABUFS": 1}],
    },
    "flash_attention": {
        "shape": ["H", "KVH", "S", "D"],
        "trace": ["q_t=bf16[H=32,D=128,S=2048]", "k_t=bf16[KVH=8,D,S]", "v=bf16[KVH,S,D]"],
        "docs": [("trn1", {}), ("trn2", {})],
        "test": {"H": 4, "KVH": 2, "S": 1024, "D": 64},
        "variants": [{"H": 2, "KVH": 1, "S": 512, "D": 32}, {"H": 4, "KVH": 4, "S": 1024, "D": 64}],
    },
    "gqa_decode": {
        "shape": ["PAIRS", "G", "C", "D"],
        "trace": ["q_t=bf16[PAIRS=64,D=128,G=4]", "k_t=bf16[PAIRS,D,C=2048]", "v=bf16[PAIRS,C,D]"],
        "docs": [("trn1", {}), ("trn2", {})],
        "test": {"PAIRS": 64, "G": 4, "C": 1024, "D": 64},
        "variants": [{"PAIRS": 16, "G": 8, "C": 512, "D": 128}, {"PAIRS": 128, "G": 2, "C": 512, "D": 32}],
    },
    "rmsnorm": {
        "shape": ["ROWS", "COLS"],
        "trace": ["x=bf16[ROWS=4096,COLS=4096]", "g=bf16[COLS]"],
        "docs": [("trn1", {}), ("trn2", {})],
        "test": {"ROWS": 300, "COLS": 512},
        "variants": [{"ROWS": 128, "COLS": 64}, {"ROWS": 8, "COLS": 256}],
    },
    "layernorm": {
        "shape": ["ROWS", "COLS"],
        "trace": ["x=bf16[ROWS=4096,COLS=4096]", "gamma=bf16[COLS]", "beta=bf16[COLS]"],
        "docs": [("trn1", {}), ("trn2", {})],
        "test": {"ROWS": 300, "COLS": 512},
        "variants": [{"ROWS": 128, "COLS": 64}, {"ROWS": 8, "COLS": 256}],
    },
    "softmax": {
        "shape": ["ROWS", "COLS"],
        "trace": ["x=bf16[ROWS=4096,COLS=4096]"],
        "docs": [("trn1", {}), ("trn2", {})],
        "test": {"ROWS": 300, "COLS": 512},
        "variants": [{"ROWS": 128, "COLS": 64}, {"ROWS": 8, "COLS": 256}],
    },
    "silu_mul": {
        "shape": ["ROWS", "COLS"],
        "trace": ["gate=bf16[ROWS=4096,COLS=14336]", "up=bf16[ROWS,COLS]", "TC=sym"],
        "docs": [("trn1", {}), ("trn2", {})],
        "test": {"ROWS": 300, "COLS": 1000, "TC": 512},
        "variants": [{"ROWS": 128, "COLS": 512, "TC": 512}, {"ROWS": 8, "COLS": 300, "TC": 256}],
    },
    "add": {
        "shape": ["ROWS", "COLS"],
        "trace": ["a=bf16[ROWS=4096,COLS=4096]", "b=bf16[ROWS,COLS]", "TC=sym"],
        "docs": [("trn1", {}), ("trn2", {})],
        "test": {"ROWS": 300, "COLS": 1000, "TC": 512},
        "variants": [{"ROWS": 128, "COLS": 512, "TC": 512}, {"ROWS": 8, "COLS": 300, "TC": 256}],
    },
}


def source(name):
    """The kernel's Python file, relative to the repository root (what the programs' `source` says)."""
    return f"kernels/{name}.py"


def json_path(name):
    return os.path.join(ROOT, "configs", "kernels", f"{name}.json")


def _python():
    import sys

    path = os.path.join(ROOT, "python")
    if path not in sys.path:
        sys.path.insert(0, path)


def defaults(name):
    """The program's arguments and their default values (name -> int), as the trace gives them."""
    _python()
    from nctlm.nki import cli, kernel

    fn = cli.load_function(os.path.join(ROOT, source(name)) + f"::{name}")
    return kernel.symbols_of(fn, dict(cli.parse_arg(a) for a in KERNELS[name]["trace"]))


def trace_args(name, values=None, symbolic=True):
    """The kernel's --arg list with its arguments at `values` (the others at their defaults):
    symbolic (NAME=sym:V, DIM=V: the library's program with other defaults) or, with
    symbolic=False, as plain numbers (a program specialized to them)."""
    import re

    merged = dict(defaults(name), **(values or {}))
    out = []
    for arg in KERNELS[name]["trace"]:
        param, _, value = arg.partition("=")
        m = re.fullmatch(r"(\w+)\[(.*)\]", value)
        if m:
            dims = []
            for d in m.group(2).split(","):
                dim = d.split("=")[0].strip()
                dims.append(f"{dim}={merged[dim]}" if symbolic else str(merged[dim]))
            out.append(f"{param}={m.group(1)}[{','.join(dims)}]")
        elif value.startswith("sym"):
            out.append(f"{param}=sym:{merged[param]}" if symbolic else f"{param}={merged[param]}")
        else:
            out.append(arg)
    return out


def generate(name):
    """The parametric program of a library kernel, as the tracer writes it (text)."""
    _python()
    from nctlm.nki import cli, kernel, program

    cwd = os.getcwd()
    os.chdir(ROOT)  # so that `source` and `line` name kernels/NAME.py as the repository does
    try:
        fn = cli.load_function(f"{source(name)}::{name}")
        args = dict(cli.parse_arg(a) for a in KERNELS[name]["trace"])
        prog, _ = kernel.trace(fn, args, name=name, source=source(name))
        return cli.dumps(program.to_json(prog))
    finally:
        os.chdir(cwd)
