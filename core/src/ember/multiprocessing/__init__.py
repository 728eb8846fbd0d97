"""``ember.multiprocessing``: Python's ``multiprocessing`` with tensors that can live in
shared memory, for Hogwild-style training (``model.share_memory()``, then processes
that update the same weights).

PyTorch counterpart: torch/multiprocessing/__init__.py (v2.13): every name of
``multiprocessing`` is re-exported; what makes tensors shareable is in
``reductions.py``. ember leaves out ``spawn(fn, nprocs)``'s error propagation helpers
other than ``spawn`` itself, and the file-system sharing strategy.
"""

import multiprocessing as _multiprocessing
from multiprocessing import *  # noqa: F401,F403  (torch.multiprocessing re-exports them too)

from ember.multiprocessing.reductions import share_ as _share  # noqa: F401


def get_all_sharing_strategies():
    return {"file_descriptor"}


def get_sharing_strategy():
    """ember always shares through named POSIX shared memory."""
    return "file_descriptor"


def set_sharing_strategy(new_strategy):
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"unknown sharing strategy {new_strategy!r}")


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)``; with ``join``, wait for them and
    raise if one failed (PyTorch's ``torch.multiprocessing.spawn``)."""
    context = _multiprocessing.get_context(start_method)
    processes = [context.Process(target=fn, args=(i, *args), daemon=daemon) for i in range(nprocs)]
    for p in processes:
        p.start()
    if not join:
        return processes
    for p in processes:
        p.join()
    failed = [(i, p.exitcode) for i, p in enumerate(processes) if p.exitcode != 0]
    if failed:
        raise RuntimeError(f"process {failed[0][0]} terminated with exit code {failed[0][1]}")
    return None
