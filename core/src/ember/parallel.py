"""The thread counts: ``ember.set_num_threads``/``get_num_threads`` (intra-op) and
``set_num_interop_threads``/``get_num_interop_threads``.

PyTorch counterpart: aten/src/ATen/ParallelOpenMP.cpp and ParallelThreadPoolNative.cpp
(v2.13), behind ``torch.set_num_threads`` and ``torch.set_num_interop_threads``.

# NOTE [ One thread count, many pools ]
# PyTorch owns its intra-op pool (OpenMP) and sizes it itself. ember's kernels are NumPy
# and SciPy calls, whose threads belong to the BLAS libraries loaded in the process
# (OpenBLAS, once for NumPy and once for SciPy, and any OpenMP runtime). So the count is
# applied to every such pool with threadpoolctl, and read back from them: the largest
# pool is the number of threads one of ember's kernels can run on. The CLI's
# ``--threads`` applies its choice the same way (ember/utils/threads.py).
"""

# NOTE [ The inter-op pool ]
# torch's second pool runs whole ops side by side: ``torch.jit.fork`` tasks and the
# autograd of TorchScript graphs. It is sized once, before its first task (one thread
# per physical core unless set), and a second ``set_num_interop_threads`` is an error.
# ember runs nothing between ops in parallel (it has no ``jit.fork``), so it keeps the
# count with torch's rules and torch's default, and no pool uses it.

import glob
import numbers
import os

__all__ = ["get_num_interop_threads", "get_num_threads", "set_num_interop_threads", "set_num_threads"]

_interop_threads = None  # set once, as torch's pool is sized once


def _check_count(name, num_threads):
    if isinstance(num_threads, bool) or not isinstance(num_threads, numbers.Integral):
        raise RuntimeError(f"{name} expects an int, but got {type(num_threads).__name__}")
    if num_threads <= 0:
        raise RuntimeError(f"{name} expects a positive integer")


def set_num_threads(num_threads):
    """Run ember's kernels on ``num_threads`` threads: every BLAS/OpenMP pool of the
    process is limited to it (NOTE [ One thread count, many pools ])."""
    _check_count("set_num_threads", num_threads)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=int(num_threads))


def get_num_threads():
    """The number of threads ember's kernels run on: the largest BLAS/OpenMP pool."""
    from threadpoolctl import threadpool_info

    return max((pool["num_threads"] for pool in threadpool_info()), default=1)


def set_num_interop_threads(num_threads):
    """Size the inter-op pool, once per process (NOTE [ The inter-op pool ])."""
    global _interop_threads
    _check_count("set_num_interop_threads", num_threads)
    if _interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started "
                           "or set_num_interop_threads called")
    _interop_threads = int(num_threads)


def get_num_interop_threads():
    """The inter-op pool's size: as set, else one thread per physical core (torch's default)."""
    return _interop_threads if _interop_threads is not None else _physical_cores()


def _physical_cores():
    """The physical cores the machine has (hyperthread siblings count once), as cpuinfo counts them."""
    cores = set()
    for path in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list"):
        with open(path) as f:
            cores.add(f.read().strip())
    return len(cores) or os.cpu_count() or 1
