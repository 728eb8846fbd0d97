"""``ember.backends.mkl``: whether Intel's MKL is available.

PyTorch counterpart: torch/backends/mkl/__init__.py (v2.13). NumPy's BLAS is OpenBLAS, so ember reports False.
"""

enabled = False


def is_available():
    return False
