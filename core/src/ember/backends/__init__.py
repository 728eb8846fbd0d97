"""``ember.backends``: the switches PyTorch scripts set on its compute libraries
(``cudnn.benchmark``, ``cuda.matmul.allow_tf32``, ``mps.is_available()``, ...).

PyTorch counterpart: torch/backends/__init__.py (v2.13). ember keeps each flag with
PyTorch's default so scripts that set or read them run unchanged; the flags change
nothing in ember's kernels (NumPy on the CPU, CuPy on CUDA: there is no cuDNN autotuner
to switch, no TF32 mode is used), which each subpackage's docstring says.
"""

from ember.backends import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
