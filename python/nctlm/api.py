"""The Python API: each function is one call of the nctlm CLI (see _cli.py), its output parsed."""
import json
import os
import subprocess
import tempfile
import warnings

from ._cli import NctlmError, call, call_json, executable, raise_for

__all__ = ["run", "sweep", "read_sweep", "plot", "sensitivity", "uncertainty", "describe", "testbenches",
           "platforms", "workloads", "sweeps", "version"]


def _set_args(sets):
    """{"dma.channels": 4} or ["dma.channels=4"] -> ["--set", "dma.channels=4", ...]."""
    if not sets:
        return []
    items = sets.items() if isinstance(sets, dict) else (s.split("=", 1) for s in sets)
    out = []
    for key, value in items:
        out += ["--set", "%s=%s" % (key, _text(value))]
    return out


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def run(platform="trn1", testbench="probe", workload=None, sets=None, timing=None, trace=None, replay=None,
        max_memory=None):
    """One simulation: `nctlm run`. Returns the stats JSON as a dict: "results" (the testbench's
    headline figures, e.g. latency_ns), "config" (every effective key, with units), "stats" (per
    module), "sim" (sim_time_ns, host_time_s, errors), "nctlm_version".

    platform, workload: a shipped name ("trn1", "gemm_32x3072x32") or a YAML path; sets: overrides
    {"section.key": value} (quantities with units: "410 GB/s"); timing: "at", "lt" or "flow"; trace: a path
    for a Perfetto trace; replay: a stats JSON (dict or path) to run again, instead of platform and
    workload. Raises ConfigurationError (exit 2) or SimulationError (exit 3)."""
    args = ["run", "--stats-json", "-", "-q"]
    tmp = None
    if replay is not None:
        if isinstance(replay, dict):
            tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            json.dump(replay, tmp)
            tmp.close()
            replay = tmp.name
        args += ["--replay", replay]
    else:
        args += ["-p", platform, "-t", testbench]
        if workload:
            args += ["-w", workload]
    args += _set_args(sets)
    if timing:
        args += ["--timing", timing]
    if trace:
        args += ["--trace", trace]
    if max_memory:
        args += ["--max-memory", max_memory]
    try:
        return call_json(args)
    finally:
        if tmp:
            os.unlink(tmp.name)


def _absolute_if_file(path):
    return os.path.abspath(path) if isinstance(path, str) and os.path.exists(path) else path


def sweep(spec=None, *, platform=None, testbench=None, workload=None, sets=None, grid=None, zip=None, cases=None,
          overrides=None, plot=None, name=None, timeout=None, output=None, jobs=None, resume=False, backend=None,
          draw=True, verbose=False):
    """A design-space sweep: `nctlm sweep`. Returns a pandas DataFrame, one row per point in point
    order (columns: id, status, exit_code, the axes, the results, sim_time_ns, host_time_s, ...).

    spec: a sweep spec file (path or shipped name, docs/sweeps.md) or its contents as a dict; or
    give its parts as arguments: platform, testbench, workload, sets ({"key": value} for every
    point), grid ({"key": [values]}: the cartesian product), zip, cases, overrides, plot
    ({"x": ..., "y": ...}), name, timeout. output: the directory (default: a new temporary one);
    jobs: points at once; resume: reuse the points already in output; backend: "local" or "slurm".
    The DataFrame's attrs hold "output" (the directory) and "exit_code" (3: some point failed; its
    row says why). A bad spec raises ConfigurationError naming the file and line."""
    import pandas  # noqa: F401  (fail early with the missing package's name)

    if output is None:
        output = tempfile.mkdtemp(prefix="nctlm-sweep-")
    output = os.path.abspath(output)
    os.makedirs(output, exist_ok=True)
    parts = {"name": name, "platform": _absolute_if_file(platform), "testbench": testbench,
             "workload": _absolute_if_file(workload), "set": sets, "grid": grid, "zip": zip, "cases": cases,
             "overrides": overrides, "timeout": timeout, "plot": plot}
    given = {k: v for k, v in parts.items() if v is not None}
    if spec is None or isinstance(spec, dict):
        doc = dict(spec or {})
        doc.update(given)
        doc.setdefault("name", "sweep")
        for key in ("platform", "workload"):
            if key in doc:
                doc[key] = _absolute_if_file(doc[key])
        spec_file = os.path.join(output, doc["name"] + ".spec.yaml")
        with open(spec_file, "w") as f:  # JSON is YAML
            json.dump(doc, f, indent=1, default=_text)
    else:
        if given:
            raise NctlmError("sweep(): give either a spec file or the spec's parts, not both (%s)"
                             % ", ".join(sorted(given)))
        spec_file = _absolute_if_file(spec)
    args = ["sweep", spec_file, "-o", output]
    if jobs:
        args += ["-j", jobs]
    if resume:
        args.append("--resume")
    if backend:
        args += ["--backend", backend]
    if not draw:
        args.append("--no-plot")
    command = [executable()] + [str(a) for a in args]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=None if verbose else subprocess.PIPE, text=True,
                          stdin=subprocess.DEVNULL)
    if done.returncode not in (0, 3):
        raise_for(done.returncode, done.stderr or "", command)
    frame = read_sweep(output)
    frame.attrs["exit_code"] = done.returncode
    if done.returncode == 3:
        bad = frame[frame["status"] != "ok"] if "status" in frame else frame
        warnings.warn("nctlm sweep: %d of %d points did not run cleanly (see their status and error columns)"
                      % (len(bad), len(frame)), stacklevel=2)
    return frame


def read_sweep(directory):
    """The results of a sweep directory (results.jsonl) as a pandas DataFrame, in point order."""
    import pandas

    rows = []
    with open(os.path.join(directory, "results.jsonl")) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    columns = []
    for r in rows:
        columns += [c for c in r if c not in columns]
    frame = pandas.DataFrame.from_records(rows, columns=columns)
    frame.attrs["output"] = os.path.abspath(directory)
    return frame


def plot(data, x, y, hue=None, output=None, logx=False, logy=False, title=None):
    """Draws a sweep's results with nctlm's plot script (axis labels with units, byte axes in
    powers of two): data is a sweep() DataFrame or a sweep directory; y one figure or a list.
    Returns the PNG's path (default: y-vs-x.png in the sweep directory)."""
    directory = data.attrs["output"] if hasattr(data, "attrs") else data
    ys = [y] if isinstance(y, str) else list(y)
    if output is None:
        output = os.path.join(directory, "%s-vs-%s.png" % (ys[0], x.replace("/", "_")))
    args = ["plot", directory, "--x", x]
    for one in ys:
        args += ["--y", one]
    if hue:
        args += ["--hue", hue]
    if logx:
        args.append("--logx")
    if logy:
        args.append("--logy")
    if title:
        args += ["--title", title]
    args += ["-o", os.path.abspath(output)]
    call(args)
    return os.path.abspath(output)


def _study(kind, platform, testbench, workload, sets, params, figures, output, jobs, resume, extra, draw):
    import pandas

    if output is None:
        output = tempfile.mkdtemp(prefix="nctlm-%s-" % kind)
    args = [kind, "-p", platform, "-t", testbench, "-o", output] + _set_args(sets) + extra
    if workload:
        args += ["-w", workload]
    if params:
        args += ["--params", ",".join(params)]
    if figures:
        args += ["--figures", ",".join(figures)]
    if jobs:
        args += ["-j", jobs]
    if resume:
        args.append("--resume")
    if not draw:
        args.append("--no-plot")
    call(args)
    frame = pandas.read_csv(os.path.join(output, kind + ".csv"))
    with open(os.path.join(output, kind + ".json")) as f:
        frame.attrs["report"] = json.load(f)
    frame.attrs["output"] = os.path.abspath(output)
    return frame


def sensitivity(platform="trn1", testbench="probe", workload=None, sets=None, params=None, figures=None, step=None,
                use_range=False, output=None, jobs=None, resume=False, draw=True):
    """`nctlm sensitivity`: one row per (figure, parameter) with its down/up values, changes,
    elasticity and swing (sensitivity.csv) as a DataFrame; attrs["report"] holds sensitivity.json.
    params/figures: lists of names (default: every rate, latency and cycle count; every figure)."""
    extra = (["--step", step] if step is not None else []) + (["--range"] if use_range else [])
    return _study("sensitivity", platform, testbench, workload, sets, params, figures, output, jobs, resume, extra,
                  draw)


def uncertainty(platform="trn1", testbench="probe", workload=None, sets=None, params=None, figures=None, samples=None,
                seed=None, output=None, jobs=None, resume=False, draw=True):
    """`nctlm uncertainty`: the Latin-hypercube samples (uncertainty.csv: each parameter's value and
    each figure) as a DataFrame; attrs["report"] holds uncertainty.json (median, 5-95 % interval)."""
    extra = (["--samples", samples] if samples else []) + (["--seed", seed] if seed is not None else [])
    return _study("uncertainty", platform, testbench, workload, sets, params, figures, output, jobs, resume, extra,
                  draw)


def describe(section=None):
    """Parameters: with no argument the sections and testbenches; with a section ("hbm") its
    keys, each with unit, default, range, meaning and provenance; with a testbench its sections."""
    return call_json(["describe"] + ([section] if section else []) + ["--json"])


def testbenches():
    """The names `testbench=` accepts."""
    return [t["name"] for t in describe()["testbenches"]]


def _shipped(kind):
    configs = call(["paths", "--configs"]).stdout.strip()
    folder = os.path.join(configs, kind)
    return sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".yaml")) if os.path.isdir(folder) else []


def platforms():
    """Shipped platform names (platform= accepts them)."""
    return _shipped("platforms")


def workloads():
    """Shipped workload names (workload= accepts them)."""
    return _shipped("workloads")


def sweeps():
    """Shipped sweep spec names (sweep() accepts them)."""
    return _shipped("sweeps")


def version():
    """The version of the nctlm CLI underneath ("0.2.0")."""
    return call(["--version"]).stdout.split()[-1]
