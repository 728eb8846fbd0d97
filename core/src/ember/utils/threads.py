"""The thread policy of the ``ember`` command: how many BLAS/OpenMP threads it runs with,
chosen once at start-up and applied with threadpoolctl.

PyTorch counterpart: torch/distributed/run.py (v2.13), which sets ``OMP_NUM_THREADS=1``
for its workers unless the user set it, "to avoid your system being overloaded"; ember's
command does the same kind of thing for one process, adapted to the machine's load.

# NOTE [ The CLI's thread policy ]
# ember's kernels are NumPy calls, and NumPy's BLAS (OpenBLAS) starts one thread per
# core. On an idle machine that helps; on a busy one (a shared 2-core box) its threads
# spin waiting for each other and a ResNet-8 run took 15x longer than at one thread.
# So ``ember`` picks, in this order:
#   1. ``--threads N``: N.
#   2. A thread count the user set in the environment (``EMBER_NUM_THREADS``,
#      ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``): that one.
#   3. Otherwise ("auto"): the cores this process may run on, less the machine's
#      one-minute load average, rounded, at least 1. A loaded machine gets one thread,
#      an idle one all its cores.
# The choice is applied to every BLAS/OpenMP pool in the process (threadpoolctl) and
# written to the thread variables of the environment, so child processes (DataLoader
# workers, launchers) inherit it. A launcher that starts several workers on one
# machine should divide it between them, as torchrun does.
# The thread count is part of what a run computes, not only how fast: convolutions
# pick their kernel by it (a few images per product on one BLAS thread, NOTE [ Loops
# of products only on one BLAS thread ]), and those round apart in the last bits. So
# "auto", which reads the load, can differ between two runs of one command; ``--threads
# N`` (or a thread variable) gives the same bits every time, as tests/e2e checks.
"""

import os

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class ThreadChoice:
    """A thread count and why: ``str(choice)`` is the line the CLI prints."""

    __slots__ = ("threads", "reason")

    def __init__(self, threads, reason):
        self.threads = threads
        self.reason = reason

    def __str__(self):
        return f"threads: {self.threads} ({self.reason})"

    def __repr__(self):
        return f"ThreadChoice({self.threads}, {self.reason!r})"


def available_cpus():
    """The CPUs this process may run on (its affinity mask, where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def machine_load():
    """The one-minute load average, or None where the OS does not report one."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def choose_threads(requested=None, environ=None, cpus=None, load=None):
    """The ``ThreadChoice`` of NOTE [ The CLI's thread policy ] (``requested``: ``--threads``;
    the other arguments default to this machine's, and exist for tests)."""
    environ = os.environ if environ is None else environ
    cpus = available_cpus() if cpus is None else cpus
    if requested is not None:
        if requested < 1:
            raise ValueError(f"--threads must be at least 1, got {requested}")
        return ThreadChoice(requested, "--threads")
    for variable in ("EMBER_NUM_THREADS",) + THREAD_VARIABLES:
        value = environ.get(variable, "").strip()
        if value:
            if not value.isdigit() or int(value) < 1:
                raise ValueError(f"{variable}={value!r} is not a thread count (a whole number, at least 1)")
            return ThreadChoice(int(value), f"from {variable}; --threads N to change")
    load = machine_load() if load is None else load
    if load is None:
        return ThreadChoice(cpus, f"auto: {cpus} CPUs; --threads N to change")
    threads = max(1, min(cpus, round(cpus - load)))
    return ThreadChoice(threads, f"auto: {cpus} CPUs, load {load:.1f}; --threads N to change")


def apply_threads(threads):
    """Limit every BLAS/OpenMP pool of this process to ``threads`` and pass the count on
    to child processes; returns the threadpoolctl limiter (``restore_original_limits()``
    undoes the limit, the environment stays)."""
    from threadpoolctl import threadpool_limits

    for variable in THREAD_VARIABLES:
        os.environ[variable] = str(threads)
    return threadpool_limits(limits=threads)
