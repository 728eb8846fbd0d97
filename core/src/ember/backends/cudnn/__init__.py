"""``ember.backends.cudnn``: cuDNN's switches (``enabled``, ``benchmark``,
``deterministic``, ``allow_tf32``) and ``is_available()``.

PyTorch counterpart: torch/backends/cudnn/__init__.py (v2.13). ember does not use
cuDNN: ``is_available()`` is False and ``version()`` None (PyTorch's answers on a
machine without it); the flags keep PyTorch's defaults and what a script sets, and
change nothing, since ember's convolutions are its own kernels.
"""

import contextlib

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    """False: ember has no cuDNN."""
    return False


def version():
    """None: ember has no cuDNN."""
    return None


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the flags inside a ``with`` block, restore them after (PyTorch's ``cudnn.flags``)."""
    module = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    previous = {name: module[name] for name in names}
    module.update(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    try:
        yield
    finally:
        module.update(previous)
