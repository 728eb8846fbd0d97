"""``ember.backends.mkldnn``: whether oneDNN (MKL-DNN) is available.

PyTorch counterpart: torch/backends/mkldnn/__init__.py (v2.13). ember has no oneDNN kernels, so False.
"""

enabled = False


def is_available():
    return False
