"""The exceptions of ``ember.distributed``.

PyTorch counterpart: torch/distributed/__init__.py (``DistError``,
``DistBackendError``, ``DistNetworkError``, bound from
torch/csrc/distributed/c10d/exception.h) (v2.13).
"""


class DistError(RuntimeError):
    """An error of the distributed package (bad group, bad rank, not initialized)."""


class DistBackendError(DistError):
    """The communication backend failed: a timeout, a mismatch between ranks, a dead peer."""


class DistNetworkError(DistError):
    """The network between the ranks failed."""
