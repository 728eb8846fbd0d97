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


def interleaved(workloads, rounds, inner, clock=time.perf_counter):
    """``workloads``: {name: callable}. Each round runs every callable ``inner`` times
    in turn; returns {name: median seconds per call}. ``clock=time.process_time`` counts
    CPU time instead of wall time (on a loaded machine, waiting for a core is not counted)."""
    samples = {name: [] for name in workloads}
    for _ in range(rounds):
        for name, fn in workloads.items():
            start = clock()
            for _ in range(inner):
                fn()
            samples[name].append((clock() - start) / inner)
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


def print_profile(step, rounds, clock=None):
    """Where ``step``'s time goes: cProfile over ``rounds`` calls, by each function's own time
    (``clock=time.process_time``: CPU time, steadier than wall time on a loaded machine)."""
    import cProfile
    import pstats

    profiler = cProfile.Profile(clock) if clock else cProfile.Profile()
    profiler.runcall(lambda: [step() for _ in range(rounds)])
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)



def channels_last_flag():
    """Whether ``--channels-last`` was given: run both sides in that memory format."""
    return "--channels-last" in sys.argv


def in_format(lib, tensor_or_module, channels_last):
    """``tensor_or_module`` in ``lib.channels_last`` when asked (4-d tensors, or a module's 4-d parameters)."""
    if not channels_last:
        return tensor_or_module
    if isinstance(tensor_or_module, lib.nn.Module):
        return tensor_or_module.to(memory_format=lib.channels_last)
    return tensor_or_module.contiguous(memory_format=lib.channels_last)


def sgemm_rate(np, m=8192, k=576, n=64, rounds=7):
    """NumPy's float32 GEMM rate (FLOP/s) on a conv-shaped product (the 64->64 3x3 layer's
    rows against its weight), the median of ``rounds``: the "GEMM limit" of a
    convolution step is its FLOPs over this rate."""
    a = np.random.default_rng(0).standard_normal((m, k)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((k, n)).astype(np.float32)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return 2 * m * k * n / statistics.median(times)


def conv_flops(batch, in_channels, out_channels, kernel, out_h, out_w, groups=1):
    """Multiply-adds x2 of one convolution's forward (its backward is twice that)."""
    return 2 * batch * out_h * out_w * out_channels * (in_channels // groups) * kernel[0] * kernel[1]


def gemm_limit_figures(np, flops, medians):
    """``{"GEMM limit ms", "ember/limit", "torch/limit"}``: the step's FLOPs at NumPy's sgemm rate."""
    limit = flops / sgemm_rate(np)
    return {"GEMM limit (ms)": limit * 1e3, "ember / GEMM limit": medians["ember"] / limit,
            "torch / GEMM limit": medians["torch"] / limit}


def im2col_only(ember, step):
    """``step`` on eager ember's plain path (``ember.backends.mkldnn.enabled = False``:
    the reference im2col for every NCHW product, channels_last's own rows), for an A/B
    against the fixed rule's faster kernels in one run."""
    def run():
        with ember.backends.mkldnn.flags(enabled=False):
            return step()
    return run


def chosen_algorithms(ember, summary=False):
    """Eager ember's per-shape choices so far: {product: (algorithm, {candidate: ms})},
    or with ``summary`` {"product algorithm": how many shapes}."""
    from ember.native.convolution.algorithm import eager_algorithm_cache

    if summary:
        counts = {}
        for key, entry in eager_algorithm_cache().items():
            name = f"{key[0]} {entry['algorithm']}"
            counts[name] = counts.get(name, 0) + 1
        return counts
    return {key[0]: (entry["algorithm"], {name: round(s * 1e3, 2) for name, s in entry["seconds"].items()})
            for key, entry in eager_algorithm_cache().items()}


def im2col_figures(medians):
    """The "ember im2col" run's ms and its ratio to torch (see :func:`im2col_only`)."""
    return {"ember im2col": medians["ember im2col"] * 1e3, "im2col ratio": medians["ember im2col"] / medians["torch"]}
