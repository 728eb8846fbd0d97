"""The LU decomposition with partial pivoting, ``A = P L U``: ``linalg.lu``,
``linalg.lu_factor`` (``_ex``), ``linalg.lu_solve``, ``lu_unpack`` and the older
``lu``/``lu_solve`` spellings.

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_lu``,
``linalg_lu_factor_ex``, ``linalg_lu_solve``, ``lu_unpack``), torch/functional.py
(``lu``) and ``linalg_lu_backward`` in torch/csrc/autograd/FunctionsManual.cpp (v2.13).

The kernel runs LAPACK's ``getrf`` (``scipy.linalg.lu_factor``) on each matrix of the
stack: L (m x k, unit lower) and U (k x n, upper) packed into one m x n matrix, and
``pivots``, 1-based row swaps (row i was swapped with row pivots[i]), and ``info``.
``linalg.lu`` unpacks that factor with ember ops and ``lu_solve`` is two triangular
solves, so every gradient comes from one backward, ``_lu_factor_backward``, as in
PyTorch, where linalg.lu and lu_factor share ``linalg_lu_backward``.

# NOTE [ The gradient of A = P L U ]
Write ``P^T dA = dL U + L dU`` and take the square block first (k = min(m, n)): with
``M = L1^-1 P^T dA1 U1^-1``, ``L1^-1 dL1`` is M's strictly lower part and ``dU1 U1^-1``
its upper part. Pairing the cotangents with these: for a wide A (m < n, U = [U1 U2])
the rest of U moves as ``dU2 = L^-1 P^T dA2 - (L^-1 dL) U2``, and

    gA1 = P L^-T (tril(L^T gL - gU2 U2^T, -1) + triu(gU1 U1^T)) U1^-T,  gA2 = P L^-T gU2;

for a tall A (m > n, L = [L1; L2]) the rest of L moves as ``dL2 = P^T dA2 U^-1 - L2 dU U^-1``:

    gA1 = P L1^-T (tril(L1^T gL1, -1) + triu(gU U^T - L2^T gL2)) U^-T,  gA2 = P gL2 U^-T.

A square A is either case with the extra blocks empty.
"""

import collections

import numpy as np

from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_matrix

return_types_lu = collections.namedtuple("linalg_lu", ["P", "L", "U"])
return_types_lu_factor = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"])
return_types_lu_factor_ex = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
return_types_lu_unpack = collections.namedtuple("lu_unpack", ["P", "L", "U"])


# --- the reference kernel -------------------------------------------------------------


def row_order(pivots, m):
    """The order of A's rows in ``P^T A`` for LAPACK's 1-based row swaps ``pivots``
    (``..., k``): the swaps applied one after another, to every matrix at once."""
    swaps = pivots.reshape((int(np.prod(pivots.shape[:-1])), pivots.shape[-1])).astype(np.int64) - 1
    order = np.tile(np.arange(m), (len(swaps), 1))
    rows = np.arange(len(swaps))
    for i in range(swaps.shape[-1]):
        target = swaps[:, i]
        order[rows, i], order[rows, target] = order[rows, target], order[rows, i]
    return order.reshape(pivots.shape[:-1] + (m,))


def _lu_factor_kernel(xp, a):
    # LAPACK getrf on each matrix: L and U packed, 1-based pivots, info (first zero pivot).
    import scipy.linalg.lapack

    m, n = a.shape[-2:]
    k = min(m, n)
    stack = a.reshape((int(np.prod(a.shape[:-2])), m, n))
    packed, pivots, infos = stack.copy(), np.zeros((len(stack), k), np.int32), np.zeros(len(stack), np.int32)
    getrf = scipy.linalg.lapack.get_lapack_funcs("getrf", dtype=a.dtype)
    for i, matrix in enumerate(stack):
        if k:
            packed[i], piv, infos[i] = getrf(matrix)
            pivots[i] = piv[:k] + 1  # SciPy returns them 0-based
    batch = a.shape[:-2]
    return packed.reshape(a.shape), pivots.reshape(batch + (k,)), infos.reshape(batch)


def _lu_factor_backward(ctx, grad_LU, grad_pivots, grad_info):
    # NOTE [ The gradient of A = P L U ]
    from ember.native.linalg.triangular_solve import solve_triangular
    from ember.native.shape.shape import cat

    LU_data, pivots, _ = ctx.saved_outputs
    P, L, U = lu_unpack(LU_data, pivots)
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    grad_L, grad_U = grad_LU[..., :, :k].tril(-1), grad_LU[..., :k, :].triu()
    L1, U1 = L[..., :k, :], U[..., :, :k]
    lower = L1.mT @ grad_L[..., :k, :]
    upper = grad_U[..., :, :k] @ U1.mT
    if m < n:
        lower = lower - grad_U[..., :, k:] @ U[..., :, k:].mT
    if m > n:
        upper = upper - L[..., k:, :].mT @ grad_L[..., k:, :]
    phi = lower.tril(-1) + upper.triu()
    # L1^-T phi U1^-T, by two triangular solves
    middle = solve_triangular(L1.mT, phi, upper=True, unitriangular=True)
    grad_A = solve_triangular(U1.mT, middle, upper=False, left=False)
    if m < n:
        grad_A = cat([grad_A, solve_triangular(L1.mT, grad_U[..., :, k:], upper=True, unitriangular=True)], -1)
    elif m > n:
        grad_A = cat([grad_A, solve_triangular(U1.mT, grad_L[..., k:, :], upper=False, left=False)], -2)
    return (P @ grad_A,)


LU_FACTOR = Op("aten::linalg_lu_factor_ex", _lu_factor_kernel, _lu_factor_backward, promote=NONE, save="outputs",
               num_outputs=3, backward_name="LinalgLuFactorExBackward0")


def _factor(A, name, pivot):
    check_matrix(A, name)
    check_floating(A, name)
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")
    return LU_FACTOR(A)


# --- the front functions ------------------------------------------------------------------


def lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U``: P a permutation, L unit lower triangular
    (m x k), U upper triangular (k x n), k = min(m, n).

    >>> import ember
    >>> ember.linalg.lu(ember.tensor([[1., 2.], [3., 4.]])).U
    tensor([[3.0000, 4.0000],
            [0.0000, 0.6667]])
    """
    LU_data, pivots, _ = _factor(A, "linalg.lu", pivot)
    return return_types_lu(*lu_unpack(LU_data, pivots))


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``(LU, pivots, info)``: L and U packed as LAPACK's getrf leaves them, its 1-based
    int32 row swaps, and its info (the first zero pivot, 0 if none)."""
    from ember.native.linalg.checks import LinAlgError

    LU_data, pivots, info = _factor(A, "linalg.lu_factor_ex", pivot)
    if check_errors and bool(info.any()):
        raise LinAlgError("linalg.lu_factor_ex: U is singular")
    return return_types_lu_factor_ex(LU_data, pivots, info)


def lu_factor(A, *, pivot=True):
    """``(LU, pivots)``, as ``lu_factor_ex`` without ``info``.

    >>> import ember
    >>> ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]])).pivots
    tensor([2, 2], dtype=ember.int32)
    """
    LU_data, pivots, _ = _factor(A, "linalg.lu_factor", pivot)
    return return_types_lu_factor(LU_data, pivots)


def permutation(pivots, m, like):
    """The permutation matrices P (``..., m, m``) of ``pivots``, as tensors like ``like``."""
    from ember.native.factory import tensor

    order = row_order(np.asarray(pivots.cpu().numpy()), m)
    P = np.swapaxes(np.eye(m, dtype=like._data.dtype)[order], -1, -2)  # P^T A = A[order]
    return tensor(P, dtype=like.dtype, device=like.device)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from ``lu_factor``'s packed matrix and pivots (empty tensors for
    the parts not asked for)."""
    from ember.native.factory import empty, eye

    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    nothing = empty(0, dtype=LU_data.dtype, device=LU_data.device)
    L = U = P = nothing
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data[..., :k, :].triu()
    if unpack_pivots:
        P = permutation(LU_pivots, m, LU_data)
    return return_types_lu_unpack(P, L, U)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with ``A X = B`` for A given by ``lu_factor`` (``adjoint``: ``A^H X = B``;
    ``left=False``: ``X A = B``), by two triangular solves.

    >>> import ember
    >>> A = ember.tensor([[1., 2.], [3., 4.]])
    >>> ember.linalg.lu_solve(*ember.linalg.lu_factor(A), ember.tensor([[5.], [11.]]))
    tensor([[1.],
            [2.]])
    """
    from ember.native.linalg.triangular_solve import solve_triangular

    if not left:  # X A = B  <=>  A^H X^H = B^H
        return lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH
    P = permutation(pivots, LU.shape[-1], LU)
    if not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        Y = solve_triangular(LU, P.mT @ B, upper=False, unitriangular=True)
        return solve_triangular(LU, Y, upper=True)
    # A^H = U^H L^H P^T: X = P L^-H U^-H B
    Y = solve_triangular(LU.mH, B, upper=False)
    return P @ solve_triangular(LU.mH, Y, upper=True, unitriangular=True)


# --- the older spellings (torch.lu, torch.lu_solve) ----------------------------------------


def lu_with_pivots(A, pivot=True, get_infos=False):
    """``torch.lu``: ``(LU, pivots)``, with ``infos`` when ``get_infos``."""
    LU_data, pivots, info = lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    return (LU_data, pivots, info) if get_infos else (LU_data, pivots)


def lu_solve_legacy(b, LU_data, LU_pivots):
    """``torch.lu_solve(b, LU_data, LU_pivots)``: ``linalg.lu_solve`` with B first."""
    return lu_solve(LU_data, LU_pivots, b)
