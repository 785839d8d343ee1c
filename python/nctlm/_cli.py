"""The `nctlm` executable underneath the Python API: where it is, and one call of it."""
import json
import os
import shutil
import subprocess

__all__ = ["NctlmError", "ConfigurationError", "SimulationError", "executable", "call"]


class NctlmError(RuntimeError):
    """A call of the nctlm CLI that failed: `exit_code`, `stderr` and the `command` it ran."""

    def __init__(self, message, exit_code=None, stderr="", command=()):
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr
        self.command = list(command)


class ConfigurationError(NctlmError):
    """Exit 2: a bad configuration, spec or argument (the message names file:line:col or --set)."""


class SimulationError(NctlmError):
    """Exit 3: the simulation failed (an address error, a deadlock, a time overflow)."""


def _installed_beside(package_dir):
    # An install puts this package in <prefix>/lib/python3/dist-packages/nctlm and the CLI in
    # <prefix>/bin/nctlm; a checkout has python/nctlm and build/bin/nctlm (the release preset).
    here = os.path.realpath(package_dir)
    for _ in range(5):
        here = os.path.dirname(here)
        for candidate in (os.path.join(here, "bin", "nctlm"), os.path.join(here, "build", "bin", "nctlm")):
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def executable():
    """The nctlm CLI this package drives: $NCTLM_EXE, else the one installed with this package
    (or the checkout's build/bin/nctlm), else `nctlm` on PATH."""
    env = os.environ.get("NCTLM_EXE")
    if env:
        return env
    found = _installed_beside(os.path.dirname(__file__)) or shutil.which("nctlm")
    if not found:
        raise NctlmError("no nctlm executable found: install nctlm with this package, put it on PATH "
                         "or set NCTLM_EXE")
    return found


def call(args, check=True):
    """Runs `nctlm ARGS...`; returns the CompletedProcess (text). With check, exit 2 raises
    ConfigurationError, 3 SimulationError, anything else non-zero NctlmError."""
    command = [executable()] + [str(a) for a in args]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          stdin=subprocess.DEVNULL)
    if check and done.returncode != 0:
        raise_for(done.returncode, done.stderr, command)
    return done


def raise_for(code, stderr, command):
    message = stderr.strip() or "nctlm exited with status %d" % code
    kind = {2: ConfigurationError, 3: SimulationError}.get(code, NctlmError)
    raise kind(message, code, stderr, command)


def call_json(args):
    """Runs `nctlm ARGS...` and parses its stdout as one JSON document."""
    return json.loads(call(args).stdout)
