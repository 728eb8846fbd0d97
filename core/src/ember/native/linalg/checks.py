"""What every ``ember.linalg`` kernel checks first, and the error it raises when a
matrix cannot be factored (``LinAlgError``, PyTorch's ``torch.linalg.LinAlgError``).

PyTorch counterpart: aten/src/ATen/native/LinearAlgebraUtils.h (``squareCheckInputs``,
``checkFloatingOrComplex``) and aten/src/ATen/native/BatchLinearAlgebra.cpp
(``_linalg_check_errors``, the messages naming the failing pivot or minor) (v2.13).

The kernels call NumPy's LAPACK wrappers, which work on stacks of matrices (the
leading dims are batch dims). NumPy's error does not say *which* pivot was zero, so
``first_zero_pivot`` reruns the LU elimination to name it, as PyTorch's message does.
"""

from ember import dtypes


class LinAlgError(RuntimeError):
    """A matrix was singular or not positive-definite (``torch.linalg.LinAlgError``,
    a RuntimeError)."""


def check_square(input, name, argument="A"):
    if input.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {argument} must have at least 2 dimensions.")
    rows, cols = input.shape[-2], input.shape[-1]
    if rows != cols:
        raise RuntimeError(f"{name}: {argument} must be batches of square matrices, but they are {rows} by {cols} "
                           "matrices")


def check_matrix(input, name, argument="A"):
    if input.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {argument} must have at least 2 dimensions.")


def check_floating(input, name):
    if input.dtype not in (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128):
        from ember.native.support._inplace import _type_name

        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(input.dtype)}")


def batch_prefix(a, index):
    """PyTorch names the failing matrix of a batch: "(Batch element 3): "."""
    return f"(Batch element {index}): " if a.ndim > 2 else ""


def first_zero_pivot(xp, a):
    """(batch index, 1-based pivot) of the first matrix of a stack whose LU with partial
    pivoting meets a zero pivot, or None."""
    for index, matrix in enumerate(a.reshape((-1,) + a.shape[-2:])):
        lu = matrix.astype("float64", copy=True)
        for k in range(lu.shape[-1]):
            pivot_row = k + int(xp.argmax(xp.abs(lu[k:, k])))
            lu[[k, pivot_row]] = lu[[pivot_row, k]]
            if lu[k, k] == 0:
                return index, k + 1
            lu[k + 1:, k + 1:] -= xp.outer(lu[k + 1:, k] / lu[k, k], lu[k, k + 1:])
    return None


def first_non_positive_minor(xp, a):
    """(batch index, 1-based order) of the first leading minor that is not positive
    definite, in the first matrix of a stack that has one."""
    for index, matrix in enumerate(a.reshape((-1,) + a.shape[-2:])):
        for order in range(1, matrix.shape[-1] + 1):
            try:
                xp.linalg.cholesky(matrix[:order, :order])
            except xp.linalg.LinAlgError:
                return index, order
    return 0, a.shape[-1]
