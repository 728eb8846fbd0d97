"""Helpers of the multi-rank tests: start a job with this environment's mpiexec (or
``ember run``), bounded by a timeout, and check that no process of it is left."""

import os
import pathlib
import subprocess
import sys

import psutil

BIN = pathlib.Path(sys.executable).parent
# NOTE [ MPI over TCP ] in ember/distributed/run.py
TCP = {"MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp", "MPIR_CVAR_NOLOCAL": "1"}


def environment(tcp=False, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", **extra)
    if tcp:
        env.update(TCP)
    return env


def mpiexec(nprocs, script, *args, tcp=False, timeout=180):
    """Run ``script`` on ``nprocs`` ranks; the CompletedProcess (output captured)."""
    cmd = [str(BIN / "mpiexec"), "-n", str(nprocs), sys.executable, str(script), *map(str, args)]
    return subprocess.run(cmd, env=environment(tcp), capture_output=True, text=True, timeout=timeout)


def ember_run(nprocs, script, *args, tcp=False, timeout=120):
    """``ember run --nproc-per-node nprocs [--tcp] script args``; the CompletedProcess."""
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nprocs)]
    cmd += ["--tcp"] if tcp else []
    cmd += [str(script), *map(str, args)]
    return subprocess.run(cmd, env=environment(), capture_output=True, text=True, timeout=timeout)


def leftovers(marker):
    """Processes whose command line contains ``marker`` (a job's unique argument)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if any(marker in part for part in process.info["cmdline"] or ()):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found
