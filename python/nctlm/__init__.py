"""nctlm from Python: run the simulator, sweep it, study it, describe its parameters.

    import nctlm
    r = nctlm.run(platform="trn1", testbench="probe")          # the stats JSON as a dict
    r["results"]["latency_ns"]                                  # 140.93
    df = nctlm.sweep(platform="trn1", testbench="probe",
                     grid={"testbench.bytes": ["1 KiB", "4 KiB", "16 KiB"]})   # a pandas DataFrame
    nctlm.plot(df, x="testbench.bytes", y="latency_ns", output="latency.png")
    nctlm.describe("hbm")                                       # every hbm.* key: unit, default, range

Each call runs the `nctlm` command-line tool installed with this package as a child process
(docs/python.md says why: SystemC elaborates one platform per process, so an in-process binding
could run one simulation per Python session; the CLI also gives the sweep's parallel, resumable,
Slurm-capable engine for free). Errors raise ConfigurationError (exit 2, the message names the file
and line or the --set) or SimulationError (exit 3). Debian's python3; sweep() needs python3-pandas
and plot() python3-matplotlib.
"""
from ._cli import ConfigurationError, NctlmError, SimulationError, executable
from .api import (describe, platforms, plot, read_sweep, run, sensitivity, sweep, sweeps, testbenches,
                  uncertainty, version, workloads)

__all__ = ["run", "sweep", "read_sweep", "plot", "sensitivity", "uncertainty", "describe", "testbenches",
           "platforms", "workloads", "sweeps", "version", "executable", "NctlmError", "ConfigurationError",
           "SimulationError"]
