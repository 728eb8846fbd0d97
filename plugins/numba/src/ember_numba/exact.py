"""What ember-numba's optimizer kernels share: compiling with no fast-math flags, so that
their results are ember-optim's NumPy kernels' bit for bit, and which arrays they take.
The SiLU loop (silu.py) compiles the same way, so that its exp's range reduction keeps
its roundings.

PyTorch counterpart: none in Python; the role of the compiler flags of
aten/src/ATen/native/cpu/FusedSGDKernel.cpp and FusedAdamKernel.cpp (v2.13).

ember_numba/jit.py allows reassociation (NOTE [ Which fast-math flags ]), which the
norm kernels' sums need and which would change an optimizer's roundings; these loops
sum nothing, so they lose nothing without it (NOTE [ A compiled SGD step, bit for bit ]
in fused_sgd.py). numba's disk cache is keyed by each kernel's source file, not by
these flags: after changing them, delete ``ember_numba/__pycache__/fused_*.nb*``.
"""

from ember_numba.jit import lazily

# ``error_model="numpy"``: a division by zero gives inf or NaN, as NumPy's does, where
# numba's default (Python's) raises ZeroDivisionError, and the check it needs on every
# division keeps the loop from becoming SIMD code.
jit_exact = lazily(cache=True, error_model="numpy")


def flat(array, fallback):
    """``array`` as one flat view (C-contiguous), or ``fallback`` for a buffer that is off."""
    return fallback if array is None else array.reshape(-1)
