"""python3 -m nctlm.nki FILE.py::FN --arg NAME=bf16[4096,8192] --arg n=16 [-o kernel.json] [--check ...]

Traces the kernel function FN of FILE.py into the kernel program format and writes it (to -o, or
to stdout). `nctlm kernel` calls exactly this. Exit codes: 0 ok; 2 a bad kernel or bad usage
(`file:line: message` on stderr); 4 `--check` found outputs differing from the reference (the
program was written); 1 an internal error of the tracer (with a traceback).
"""

import argparse
import ast
import importlib.util
import json
import os
import re
import sys
import traceback

from .errors import NkiError, location_of_traceback
from . import kernel
from .kernel import Kernel, Symbol, TensorSpec, concrete, symbols_of, trace
from .program import to_json

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_KERNEL, EXIT_CHECK_MISMATCH = 0, 1, 2, 4
_TENSOR_ARG = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\[([0-9,\sx]*)\]$")
_SYMBOLIC_TENSOR_ARG = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\[([A-Za-z0-9_=,\s]*)\]$")
_SYMBOLIC_DIM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\s*=\s*([0-9]+))?$")
_SYMBOLIC = re.compile(r"^sym(?::([0-9]+))?$")
_loaded = 0


def load_function(spec, what="kernel"):
    """FILE.py::FN -> the function (a @nki.jit kernel's function)."""
    global _loaded
    path, sep, name = spec.rpartition("::")
    if not sep or not path or not name:
        raise NkiError(f"the {what} is given as FILE.py::FUNCTION, got '{spec}'", location=(None, None))
    if not os.path.isfile(path):
        raise NkiError(f"{what} file '{path}' not found", location=(None, None))
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    _loaded += 1
    module_name = f"_nctlm_nki_{what}_{_loaded}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as e:
        raise NkiError(f"syntax error: {e.msg}", location=(e.filename, e.lineno)) from None
    except ModuleNotFoundError as e:
        hint = ""
        if e.name and e.name.split(".")[0] in ("neuronxcc", "nki"):
            hint = " (change the import lines to nctlm.nki, nctlm.nki.language, nctlm.nki.isa)"
        raise NkiError(f"{e}{hint}", location=location_of_traceback(e.__traceback__)) from None
    fn = getattr(module, name, None)
    if fn is None:
        raise NkiError(f"no function '{name}' in {path}", location=(None, None))
    return fn.fn if isinstance(fn, Kernel) else fn


def parse_arg(text):
    """NAME=dtype[d0,d1,...] (an HBM tensor), NAME=number, or a symbolic integer NAME=sym or
    NAME=sym:VALUE -> (name, TensorSpec, Symbol or value). A tensor's dimension may be symbolic:
    DIM=VALUE, or DIM alone (a symbol given a value elsewhere)."""
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name.isidentifier() or not value:
        raise NkiError(f"--arg takes NAME=dtype[d0,d1,...] or NAME=number, got '{text}'", location=(None, None))
    m = _TENSOR_ARG.match(value)
    if m:
        dims = [d for d in re.split(r"[,x\s]+", m.group(2)) if d]
        return name, TensorSpec(m.group(1), [int(d) for d in dims])
    m = _SYMBOLIC_TENSOR_ARG.match(value)
    if m:
        dims = []
        for d in (d.strip() for d in m.group(2).split(",")):
            dm = _SYMBOLIC_DIM.match(d)
            if d.isdigit():
                dims.append(int(d))
            elif dm:
                dims.append(Symbol(dm.group(1), int(dm.group(2)) if dm.group(2) else None))
            else:
                raise NkiError(f"--arg {name}: dimension '{d}' is neither a number, NAME=VALUE nor NAME",
                               location=(None, None))
        return name, TensorSpec(m.group(1), dims)
    m = _SYMBOLIC.match(value)
    if m:
        return name, Symbol(name, int(m.group(1)) if m.group(1) else None)
    if value.lower() in ("true", "false"):
        return name, value.lower() == "true"
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        raise NkiError(f"--arg {name}: '{value}' is neither dtype[shape] nor a number", location=(None, None)) from None
    if not isinstance(parsed, (int, float, tuple)):
        raise NkiError(f"--arg {name}: '{value}' is neither dtype[shape] nor a number", location=(None, None))
    return name, parsed


def parse_grid(text):
    try:
        dims = tuple(int(d) for d in re.split(r"[,x]", text) if d)
    except ValueError:
        dims = ()
    if not dims or any(d <= 0 for d in dims):
        raise NkiError(f"--grid takes positive integers like 4 or 2,2, got '{text}'", location=(None, None))
    return dims


def dumps(doc):
    """The program as JSON with one instruction per line (compact, and still readable)."""
    def node(n, indent):
        if "loop" not in n:
            return " " * indent + json.dumps(n)
        head = {k: v for k, v in n.items() if k != "body"}
        text = json.dumps(head)[:-1] + ', "body": [\n'
        return " " * indent + text + ",\n".join(node(c, indent + 2) for c in n["body"]) + "]}"
    lines = ["{" + json.dumps({k: v for k, v in doc.items() if k not in ("tensors", "buffers", "body")})[1:-1] + ","]
    for key in ("tensors", "buffers"):
        items = ",\n".join("  " + json.dumps(x) for x in doc[key])
        lines.append(f' "{key}": [\n{items}],' if items else f' "{key}": [],')
    lines.append(' "body": [\n' + ",\n".join(node(n, 2) for n in doc["body"]) + "]}")
    return "\n".join(lines) + "\n"


def build_parser():
    p = argparse.ArgumentParser(
        prog="python3 -m nctlm.nki",
        description="Trace an NKI kernel into nctlm's kernel program format (docs/kernels.md).")
    p.add_argument("kernel", help="FILE.py::FUNCTION")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="a kernel parameter: a tensor NAME=dtype[d0,d1,...] (bf16, fp16, fp32, fp8_e4m3, "
                        "fp8_e5m2, int32, or NKI's names) or a number NAME=16; symbolic (kept as a program "
                        "argument): NAME=sym[:VALUE], or dimensions dtype[ROWS=4096,COLS=2048]")
    p.add_argument("-o", "--output", default="-", help="the program's JSON file (default: stdout)")
    p.add_argument("--grid", default="1", help="SPMD launch grid, e.g. 4 or 2,2 (default 1)")
    p.add_argument("--bufs", type=int, default=2,
                   help="rotating copies of a tile allocated inside a loop (default 2)")
    p.add_argument("--sbuf-bytes", type=int, default=kernel.SBUF_PARTITION_BYTES,
                   help="SBUF bytes per partition the rotating copies must fit (default 192 KiB; the platform's "
                        "pe.sbuf_partition_bytes)")
    p.add_argument("--psum-bytes", type=int, default=kernel.PSUM_PARTITION_BYTES,
                   help="PSUM bytes per partition (default 16 KiB)")
    p.add_argument("--check", metavar="REF.py::FUNCTION",
                   help="also run the kernel with numpy on random inputs and compare its outputs with "
                        "the reference function's")
    p.add_argument("--seed", type=int, default=0, help="random inputs' seed for --check (default 0)")
    p.add_argument("--rtol", type=float, help="--check relative tolerance (default by data type)")
    p.add_argument("--atol", type=float, help="--check absolute tolerance (default by data type)")
    return p


def main(argv=None):
    opts = build_parser().parse_args(argv)
    try:
        return _run(opts)
    except NkiError as e:
        print(str(e), file=sys.stderr)
        return EXIT_BAD_KERNEL
    except Exception as e:  # the kernel's own code failed, or the tracer did
        filename, line = location_of_traceback(e.__traceback__)
        tb = e.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        internal = os.path.dirname(os.path.abspath(tb.tb_frame.f_code.co_filename)) == os.path.dirname(
            os.path.abspath(__file__))
        where = f"{filename}:{line}: " if filename else ""
        if internal:
            traceback.print_exc()
            print(f"{where}internal error of the tracer: {type(e).__name__}: {e}", file=sys.stderr)
            return EXIT_INTERNAL
        print(f"{where}{type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_BAD_KERNEL


def _run(opts):
    if opts.bufs < 1:
        raise NkiError("--bufs must be at least 1", location=(None, None))
    path, _, name = opts.kernel.rpartition("::")
    fn = load_function(opts.kernel)
    args = dict(parse_arg(a) for a in opts.arg)
    grid = parse_grid(opts.grid)
    program, outputs = trace(fn, args, grid=grid, bufs=opts.bufs, name=name, source=path,
                             sbuf_bytes=opts.sbuf_bytes, psum_bytes=opts.psum_bytes)
    text = dumps(to_json(program))
    if opts.output == "-":
        sys.stdout.write(text)
    else:
        with open(opts.output, "w") as f:
            f.write(text)
    if opts.check:
        from .check import check

        report = sys.stderr if opts.output == "-" else sys.stdout
        values = concrete(args, symbols_of(fn, args))
        ok = check(fn, values, program, load_function(opts.check, "reference"), grid, opts.seed,
                   opts.rtol, opts.atol, report)
        return EXIT_OK if ok else EXIT_CHECK_MISMATCH
    return EXIT_OK
