"""``ember.linalg``: linear algebra on (batches of) matrices, PyTorch's ``torch.linalg``.

PyTorch counterpart: torch/linalg/__init__.py (v2.13).

Each function is a thin front (checks and argument forms) over an op in
ember/native/linalg/*.py, whose kernel calls NumPy's LAPACK wrappers and whose
backward formula is written with ember ops. The norms are compositions of ember ops
(vector norms are ``Tensor.norm``; the 2-norm and nuclear norm of a matrix come from
``svdvals``). Leading dims are batch dims throughout. Float32, float64, complex64 and
complex128, with complex gradients in PyTorch's convention (NOTE [ Complex gradients ]
in ember/autograd/graph.py). ``LinAlgError`` (a RuntimeError) reports singular or indefinite
matrices with PyTorch's messages.
"""

import math

import numpy as np

from ember.native.linalg.checks import LinAlgError, check_floating, check_matrix
from ember.native.linalg.cholesky import cholesky
from ember.native.linalg.compositions import diagonal, matrix_power, multi_dot, vecdot  # noqa: F401
from ember.native.linalg.cross import linalg_cross as cross
from ember.native.linalg.det import det, slogdet
from ember.native.linalg.eig import eig, eigvals
from ember.native.linalg.eigh import eigh, eigvalsh
from ember.native.linalg.householder import householder_product  # noqa: F401
from ember.native.linalg.info_variants import cholesky_ex, inv_ex, solve_ex  # noqa: F401
from ember.native.linalg.ldl import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: F401
from ember.native.linalg.lu import lu, lu_factor, lu_factor_ex, lu_solve  # noqa: F401
from ember.native.linalg.matrix_exp import matrix_exp
from ember.native.linalg.pinv import lstsq, pinv
from ember.native.linalg.qr import qr
from ember.native.linalg.rank_and_condition import cond, matrix_rank  # noqa: F401
from ember.native.linalg.solve import inv, solve
from ember.native.linalg.svd import svd, svdvals
from ember.native.linalg.tensor_solve import tensorinv, tensorsolve  # noqa: F401
from ember.native.linalg.triangular_solve import solve_triangular  # noqa: F401
from ember.native.linalg.vander import linalg_vander as vander  # noqa: F401


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (every element by default); ``ord`` may be
    ``inf``, ``-inf`` or 0 (the count of nonzeros).

    >>> import ember
    >>> ember.linalg.vector_norm(ember.tensor([[3., 4.], [0., 0.]]), dim=1)
    tensor([5., 0.])
    """
    from ember.native.reduction.reduction import norm

    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, but got {ord}")
    if dtype is None and not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(x)}")
    return norm(x, float(ord), dim, keepdim, dtype=dtype)


def _type_name(x):
    from ember.native.support._inplace import _type_name as name

    return name(x.dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """A matrix norm over the two dims ``dim``: ``"fro"`` (Frobenius), ``"nuc"`` (sum of
    singular values), 2 / -2 (largest / smallest singular value), 1 / -1 (largest /
    smallest column sum of |A|), inf / -inf (largest / smallest row sum).

    >>> import ember
    >>> ember.linalg.matrix_norm(ember.tensor([[1., -2.], [3., 4.]]), ord=1)
    tensor(6.)
    """
    check_matrix(A, "linalg.matrix_norm")
    if dtype is not None:
        A = A.to(dtype)
    check_floating(A, "linalg.matrix_norm")
    rows, cols = (d % A.ndim for d in dim)
    if rows == cols:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return vector_norm(A, 2, (rows, cols), keepdim)
    if ord in ("nuc", 2, -2):
        return _spectral_norm(A, ord, rows, cols, keepdim)
    if ord in (1, -1, math.inf, -math.inf):
        summed, reduce = (rows, cols) if abs(ord) == 1 else (cols, rows)
        sums = A.abs().sum(summed, keepdim=True)
        out = _largest(sums, reduce) if ord > 0 else sums.amin(reduce, keepdim=True)
        return out if keepdim else out.squeeze((rows, cols))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _largest(values, dim, keepdim=True):
    # A norm is never negative, so the largest of no values is 0 (PyTorch's result);
    # the smallest of none stays an error.
    if values.shape[dim] == 0:
        return values.sum(dim, keepdim=keepdim)
    return values.amax(dim, keepdim=keepdim)


def _spectral_norm(A, ord, rows, cols, keepdim):
    moved = A.movedim((rows, cols), (-2, -1))
    values = svdvals(moved)
    out = values.sum(-1) if ord == "nuc" else _largest(values, -1, keepdim=False) if ord == 2 else values.amin(-1)
    if keepdim:
        for d in sorted((rows, cols)):
            out = out.unsqueeze(d)
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm (``ord`` a number, or None: the 2-norm of the flattened tensor) or
    a matrix norm (``ord`` a string, or ``dim`` two dims of a matrix norm's orders).

    >>> import ember
    >>> ember.linalg.norm(ember.tensor([[3., 4.], [0., 0.]]))
    tensor(5.)
    """
    if isinstance(dim, (int, np.integer)):
        dim = (dim,)
    if isinstance(ord, str) or (ord is not None and dim is not None and len(dim) == 2) or (
            ord is not None and dim is None and A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim,
                           dtype=dtype)
    if ord is not None and dim is None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.ndim}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


__all__ = ["LinAlgError", "cholesky", "cross", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq",
           "matrix_exp", "matrix_norm", "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "vector_norm"]
