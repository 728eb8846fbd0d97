"""``ember.backends.openmp``: whether OpenMP is available.

PyTorch counterpart: torch/backends/openmp/__init__.py (v2.13). ember's kernels do not
use OpenMP threads of their own (see ember.utils.threads), so False.
"""

enabled = False


def is_available():
    return False
