"""Shared helpers: thread pinning and imports, interleaved ember/torch runs, medians and
ratios, the loss-agreement check and the JSON result line, and the hand-written SGD
update of the raw-tensor training steps.

The machine is noisy, so each benchmark alternates the two libraries round by round
inside one process (same thread count, same data) and reports the median of each and
their ratio; one absolute time means little, the ratio is the figure.
"""

import json
import os
import statistics
import sys
import time


def pin_threads(threads):
    """Set the BLAS/OpenMP thread count; must run before NumPy or torch is imported."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)


def libraries(threads):
    """Pin the thread count, then import NumPy, torch (set to the same count) and ember;
    returns ``(np, torch, ember)``."""
    pin_threads(threads)
    import numpy as np
    import torch

    import ember

    torch.set_num_threads(threads)
    return np, torch, ember


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


def assert_losses_agree(steps, tolerance, rounds=2, relative=False):
    """Run the "ember" and "torch" steps ``rounds`` times: the losses agree within
    ``tolerance`` (times the torch loss, if ``relative``) each time, so both sides do the
    same work."""
    for _ in range(rounds):
        losses = {name: float(step().detach()) for name, step in steps.items()}
        bound = tolerance * abs(losses["torch"]) if relative else tolerance
        assert abs(losses["ember"] - losses["torch"]) < bound, losses


def report_ms(title, threads, medians, **extra):
    """Print the JSON result line of ember's and torch's median seconds, in ms, and their ratio."""
    print(json.dumps({"benchmark": title, "threads": threads, **extra,
                      "ember": medians["ember"] * 1e3, "torch": medians["torch"] * 1e3,
                      "ratio": medians["ember"] / medians["torch"]}))


def momentum_sgd(lib, params, velocities, lr=0.01, momentum=0.9):
    """The hand-written SGD-with-momentum update of the raw-tensor steps; clears the grads."""
    with lib.no_grad():
        for p, v in zip(params, velocities):
            v.mul_(momentum).add_(p.grad)
            p.sub_(v, alpha=lr)
            p.grad = None


def threads_and_profile():
    """``(threads, profile)`` from ``script.py [THREADS] [--profile]``."""
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    return int(args[0]) if args else 1, "--profile" in sys.argv


def print_profile(step, rounds):
    """Where ``step``'s time goes: cProfile over ``rounds`` calls, by each function's own time."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(lambda: [step() for _ in range(rounds)])
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)

