"""Helpers for the NKI tracer's tests: trace a kernel given as source text, run the CLI."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "kernels")
PYTHON_DIR = os.path.abspath(os.path.join(HERE, "..", ".."))
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

from nctlm.nki import cli, kernel, program  # noqa: E402

HEADER = "import nctlm.nki as nki\nimport nctlm.nki.language as nl\nimport nctlm.nki.isa as nisa\n"
_tmp = tempfile.TemporaryDirectory(prefix="nki-tests-")


def write_kernel(source, name="k.py"):
    """Write a kernel module (the nctlm.nki imports prepended) and return its path."""
    path = os.path.join(tempfile.mkdtemp(dir=_tmp.name), name)
    with open(path, "w") as f:
        f.write(HEADER + textwrap.dedent(source))
    return path


def kernel_path(name):
    return os.path.join(KERNELS, name)


def trace(path, fn, *args, grid="1", bufs=2):
    """Trace path::fn with --arg strings; returns (JSON document, Program, outputs)."""
    f = cli.load_function(f"{path}::{fn}")
    parsed = dict(cli.parse_arg(a) for a in args)
    prog, outputs = kernel.trace(f, parsed, grid=cli.parse_grid(grid), bufs=bufs, name=fn, source=path)
    doc = program.to_json(prog)
    return json.loads(json.dumps(doc)), prog, outputs


def run_cli(*args):
    """python3 -m nctlm.nki ARGS in a subprocess: (exit code, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    p = subprocess.run([sys.executable, "-m", "nctlm.nki", *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def instructions(body):
    """Every instruction of a JSON body, loops flattened (in program order)."""
    out = []
    for node in body:
        if "loop" in node:
            out.extend(instructions(node["body"]))
        else:
            out.append(node)
    return out


def expanded_ops(doc, args=None):
    """Instructions by op once the loops expand, over every instance of the grid, the program's
    arguments at their defaults or at `args`."""
    import collections

    from nctlm.nki import expr as ex

    ops = collections.Counter()

    def walk(body, env):
        for node in body:
            if "loop" in node:
                start = ex.evaluate(ex.parse(node.get("start", 0)), env)
                step = ex.evaluate(ex.parse(node.get("step", 1)), env)
                for t in range(ex.evaluate(ex.parse(node["trip"]), env)):
                    walk(node["body"], dict(env, **{node["loop"]: start + step * t}))
            else:
                ops[node["op"]] += 1

    env = {k: ex.parse(v) for k, v in doc.get("args", {}).items()}
    env.update(args or {})
    for pid in range(ex.evaluate(ex.parse(doc["grid"]), env)):
        walk(doc["body"], dict(env, pid=pid))
    return ops


def line_of(path, text, full=False):
    """'file.py:N' of the first line of `path` containing `text` (the whole path if `full`: how
    error messages name it)."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return f"{path if full else os.path.basename(path)}:{n}"
    raise AssertionError(f"{text!r} not in {path}")
