"""Shared timing helpers: interleaved ember/torch runs, medians and ratios.

The machine is noisy, so each benchmark alternates the two libraries round by round
inside one process (same thread count, same data) and reports the median of each and
their ratio; one absolute time means little, the ratio is the figure.
"""

import os
import statistics
import time


def pin_threads(threads):
    """Set the BLAS/OpenMP thread count; must run before NumPy or torch is imported."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)


def interleaved(workloads, rounds, inner):
    """``workloads``: {name: callable}. Each round runs every callable ``inner`` times
    in turn; returns {name: median seconds per call}."""
    samples = {name: [] for name in workloads}
    for _ in range(rounds):
        for name, fn in workloads.items():
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - start) / inner)
    return {name: statistics.median(values) for name, values in samples.items()}
