"""The intra-op thread count: ``ember.set_num_threads`` and ``ember.get_num_threads``.

PyTorch counterpart: aten/src/ATen/ParallelOpenMP.cpp (v2.13), behind
``torch.set_num_threads``/``torch.get_num_threads``.

# NOTE [ One thread count, many pools ]
# PyTorch owns its intra-op pool (OpenMP) and sizes it itself. ember's kernels are NumPy
# and SciPy calls, whose threads belong to the BLAS libraries loaded in the process
# (OpenBLAS, once for NumPy and once for SciPy, and any OpenMP runtime). So the count is
# applied to every such pool with threadpoolctl, and read back from them: the largest
# pool is the number of threads one of ember's kernels can run on. The CLI's
# ``--threads`` applies its choice the same way (ember/utils/threads.py).
"""

import numbers

__all__ = ["get_num_threads", "set_num_threads"]


def set_num_threads(num_threads):
    """Run ember's kernels on ``num_threads`` threads: every BLAS/OpenMP pool of the
    process is limited to it (NOTE [ One thread count, many pools ])."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, numbers.Integral):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(num_threads).__name__}")
    if num_threads <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=int(num_threads))


def get_num_threads():
    """The number of threads ember's kernels run on: the largest BLAS/OpenMP pool."""
    from threadpoolctl import threadpool_info

    return max((pool["num_threads"] for pool in threadpool_info()), default=1)
