"""The LDL^T factorization of a symmetric matrix with Bunch-Kaufman pivoting:
``linalg.ldl_factor`` (``_ex``) and ``linalg.ldl_solve``.

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp
(``linalg_ldl_factor_ex``, ``linalg_ldl_solve``) (v2.13).

The kernels call LAPACK's ``sytrf`` and ``sytrs`` through SciPy (as PyTorch calls
them), on each matrix of the stack: ``LD`` packs the unit lower triangular L and the
block diagonal D (1 x 1 and 2 x 2 blocks), ``pivots`` are LAPACK's (1-based; a
negative pair marks a 2 x 2 block). Only the lower triangle of A is read. A complex A
is factored as complex symmetric (A = L D L^T, ``sytrf``) unless ``hermitian=True``
(A = L D L^H, ``hetrf``), as in PyTorch. PyTorch gives
these no gradient, nor does ember.
"""

import collections

import numpy as np

from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_square

return_types_ldl_factor = collections.namedtuple("linalg_ldl_factor", ["LD", "pivots"])
return_types_ldl_factor_ex = collections.namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _lapack(name, dtype, hermitian):
    """LAPACK's routine for the dtype: ``sytrf``/``sytrs`` (symmetric, A = L D L^T), or
    ``hetrf``/``hetrs`` for a complex Hermitian A (A = L D L^H)."""
    import scipy.linalg.lapack

    prefix = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}[np.dtype(dtype).type]
    if hermitian and prefix in "cz":
        name = name.replace("sy", "he")
    return getattr(scipy.linalg.lapack, prefix + name)


def _ldl_factor_kernel(xp, a, hermitian=False):
    n = a.shape[-1]
    stack = a.reshape((int(np.prod(a.shape[:-2])), n, n))
    factors, pivots, infos = np.zeros_like(stack), np.zeros(stack.shape[:2], np.int32), np.zeros(len(stack), np.int32)
    sytrf = _lapack("sytrf", a.dtype, hermitian)
    for i, matrix in enumerate(stack):
        if n:
            packed, pivots[i], infos[i] = sytrf(matrix, lower=1)
            factors[i] = np.tril(packed)
    batch = a.shape[:-2]
    return factors.reshape(a.shape), pivots.reshape(batch + (n,)), infos.reshape(batch)


def _ldl_solve_kernel(xp, factors, pivots, b, hermitian=False):
    n = factors.shape[-1]
    batch = np.broadcast_shapes(factors.shape[:-2], b.shape[:-2])
    count = int(np.prod(batch))
    factors = np.broadcast_to(factors, batch + factors.shape[-2:]).reshape((count, n, n))
    pivots = np.broadcast_to(pivots, batch + (n,)).reshape((count, n))
    rhs = np.broadcast_to(b, batch + b.shape[-2:]).reshape((count,) + b.shape[-2:])
    out = np.zeros(rhs.shape, b.dtype)
    sytrs = _lapack("sytrs", b.dtype, hermitian)
    for i in range(len(rhs)):
        if n:
            out[i], _ = sytrs(factors[i], pivots[i], rhs[i], lower=1)
    return out.reshape(batch + b.shape[-2:])


LDL_FACTOR = Op("aten::linalg_ldl_factor_ex", _ldl_factor_kernel, None, promote=NONE, num_outputs=3)
LDL_SOLVE = Op("aten::linalg_ldl_solve", _ldl_solve_kernel, None, promote=NONE)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """``(LD, pivots, info)``: LAPACK sytrf's compact LDL^T factorization of the
    symmetric A (its lower triangle), with info (nonzero where D is singular)."""
    from ember.native.linalg.checks import LinAlgError

    check_square(A, "torch.linalg.ldl_factor_ex")
    check_floating(A, "torch.linalg.ldl_factor_ex")
    factors, pivots, info = LDL_FACTOR(A, hermitian=bool(hermitian))
    if check_errors and bool(info.any()):
        raise LinAlgError("torch.linalg.ldl_factor_ex: The factorization could not be completed because the input "
                          "is singular.")
    return return_types_ldl_factor_ex(factors, pivots, info)


def ldl_factor(A, *, hermitian=False):
    """``(LD, pivots)`` of ``ldl_factor_ex`` (an error where D is singular).

    >>> import ember
    >>> ember.linalg.ldl_factor(ember.tensor([[4., 2.], [2., 3.]])).LD
    tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]])
    """
    LD, pivots, _ = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return return_types_ldl_factor(LD, pivots)


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """X with ``A X = B`` for A given by ``ldl_factor``, batched."""
    check_square(LD, "torch.linalg.ldl_solve", "LD")
    if B.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_solve: The input tensor B must have at least 2 dimensions.")
    if LD.dtype != B.dtype:
        raise RuntimeError("torch.linalg.ldl_solve: Expected LD and B to have the same dtype")
    return LDL_SOLVE(LD, pivots, B, hermitian=bool(hermitian))
