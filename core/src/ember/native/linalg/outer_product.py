"""A matrix product whose inner dimension is 1, ``(..., m, 1) @ (..., 1, n)``, computed
as one broadcast multiply: the fast kernel beside the reference ``xp.matmul``.

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp (``outer`` is
``self.reshape({-1, 1}) * vec2``, a broadcast multiply, and ``mm`` of such shapes
reaches the BLAS's gemm) (v2.13).

# NOTE [ Products with one summand ]
# Each entry of an (m, 1) @ (1, n) product is a single multiply, c[i, j] = a[i, 0] *
# b[0, j], with nothing to sum: every algorithm rounds it the same way, so a broadcast
# multiply gives the BLAS's numbers. It is where a batch of one spends its backward:
# the weight gradient of a linear layer fed one row is such a product. NumPy sends it
# to gemm, whose packing of the operands costs four times the multiply (512 x 784
# float32, one thread, AMD EPYC znver4, OpenBLAS SkylakeX: 0.45 ms against 0.11 ms;
# torch's mm takes 0.06 ms).
# The sign of a zero product tells the kernels apart: torch's float32/float64 mm (and
# matmul of a batch by one matrix, which it folds into one mm) writes -1 * 0 as -0.0,
# as a multiply does, while its bmm and its float16/bfloat16 products start each sum at
# +0.0 and write +0.0, as NumPy's matmul does. So only a second operand that is one
# matrix comes here. ember's float16/bfloat16 products reach the kernel in float32
# (NOTE [ opmath ]) and keep -0.0: that sign is their one difference from torch.
"""


def is_outer(a, b):
    """Whether ``a @ b`` is a product of columns by one row matrix (inner dimension 1)."""
    return b.ndim == 2 and a.ndim >= 2 and a.shape[-1] == 1


def outer_product(xp, a, b):
    """``a @ b`` for ``is_outer(a, b)``: batch dims broadcast as matmul's do."""
    return xp.multiply(a, b)
