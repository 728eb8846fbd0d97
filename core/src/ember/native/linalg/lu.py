"""The LU decomposition with partial pivoting, ``A = P L U``: ``linalg.lu``,
``linalg.lu_factor`` (``_ex``), ``linalg.lu_solve``, ``lu_unpack`` and the older
``lu``/``lu_solve`` spellings.

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_lu``,
``linalg_lu_factor_ex``, ``linalg_lu_solve``, ``lu_unpack``), torch/functional.py
(``lu``) and ``linalg_lu_backward`` in torch/csrc/autograd/FunctionsManual.cpp (v2.13).

The kernel runs LAPACK's ``getrf`` (``scipy.linalg.lu_factor``) on each matrix of the
stack: L (m x k, unit lower) and U (k x n, upper) packed into one m x n matrix, and
``pivots``, 1-based row swaps (row i was swapped with row pivots[i]). ``lu_factor`` is
that packing of the op's L and U, and ``lu_solve`` two triangular solves, so every
gradient comes from one backward, ``_lu_backward``.

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


def permutation_from_pivots(pivots, m):
    """The permutation matrix P (m x m) of LAPACK's 1-based row swaps ``pivots``."""
    order = np.arange(m)
    for i, p in enumerate(pivots):
        order[[i, p - 1]] = order[[p - 1, i]]
    return np.eye(m)[order].T  # P^T A = A[order]


def _factor_one(matrix):
    """getrf on one matrix: (packed LU, 1-based int32 pivots, info)."""
    import scipy.linalg

    k = min(matrix.shape)
    if k == 0:
        return matrix.copy(), np.zeros(0, dtype=np.int32), 0
    packed, pivots = scipy.linalg.lu_factor(matrix, check_finite=False)
    info = next((i + 1 for i in range(k) if packed[i, i] == 0), 0)
    return packed, (pivots[:k] + 1).astype(np.int32), info


def _lu_kernel(xp, a):
    m, n = a.shape[-2:]
    k = min(m, n)
    stack = a.reshape((int(np.prod(a.shape[:-2])), m, n))
    P, L, U = (np.zeros((len(stack),) + shape, a.dtype) for shape in ((m, m), (m, k), (k, n)))
    pivots = np.zeros((len(stack), k), np.int32)
    infos = np.zeros(len(stack), np.int32)
    for i, matrix in enumerate(stack):
        packed, pivots[i], infos[i] = _factor_one(matrix)
        L[i] = np.tril(packed[:, :k], -1) + np.eye(m, k, dtype=a.dtype)
        U[i] = np.triu(packed[:k, :])
        P[i] = permutation_from_pivots(pivots[i], m)
    batch = a.shape[:-2]
    return (P.reshape(batch + (m, m)), L.reshape(batch + (m, k)), U.reshape(batch + (k, n)),
            pivots.reshape(batch + (k,)), infos.reshape(batch))


def _lu_backward(ctx, grad_P, grad_L, grad_U, grad_pivots, grad_info):
    # NOTE [ The gradient of A = P L U ]
    from ember.native.factory import zeros_like
    from ember.native.linalg.triangular_solve import solve_triangular
    from ember.native.shape.shape import cat

    P, L, U = ctx.saved_outputs[:3]
    grad_L = zeros_like(L) if grad_L is None else grad_L
    grad_U = zeros_like(U) if grad_U is None else grad_U
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    L1, U1 = L[..., :k, :], U[..., :, :k]
    gL1, gU1 = grad_L[..., :k, :], grad_U[..., :, :k]
    lower = L1.mT @ gL1
    upper = gU1 @ U1.mT
    if m < n:
        U2, gU2 = U[..., :, k:], grad_U[..., :, k:]
        lower = lower - gU2 @ U2.mT
    if m > n:
        L2, gL2 = L[..., k:, :], grad_L[..., k:, :]
        upper = upper - L2.mT @ gL2
    phi = lower.tril(-1) + upper.triu()
    # L1^-T phi U1^-T, by two triangular solves
    middle = solve_triangular(L1.mT, phi, upper=True, unitriangular=True)
    grad_A1 = solve_triangular(U1.mT, middle, upper=False, left=False)
    if m < n:
        right = solve_triangular(L1.mT, gU2, upper=True, unitriangular=True)
        grad_A = cat([grad_A1, right], -1)
    elif m > n:
        bottom = solve_triangular(U1.mT, gL2, upper=False, left=False)
        grad_A = cat([grad_A1, bottom], -2)
    else:
        grad_A = grad_A1
    return (P @ grad_A,)


LU = Op("aten::linalg_lu", _lu_kernel, _lu_backward, promote=NONE, save="outputs", num_outputs=5,
        backward_name="LinalgLuBackward0")


def _factor(A, name, pivot):
    check_matrix(A, name)
    check_floating(A, name)
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")
    return LU(A)


# --- the front functions ------------------------------------------------------------------


def lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U``: P a permutation, L unit lower triangular
    (m x k), U upper triangular (k x n), k = min(m, n).

    >>> import ember
    >>> ember.linalg.lu(ember.tensor([[1., 2.], [3., 4.]])).U
    tensor([[3.0000, 4.0000],
            [0.0000, 0.6667]])
    """
    P, L, U, _, _ = _factor(A, "linalg.lu", pivot)
    return return_types_lu(P, L, U)


def _pack(L, U):
    """One m x n matrix holding L's strictly lower part and U (getrf's layout)."""
    from ember.native.factory import zeros
    from ember.native.shape.shape import cat

    m, k, n = L.shape[-2], L.shape[-1], U.shape[-1]
    lower = L.tril(-1)
    if n > k:
        lower = cat([lower, zeros(*L.shape[:-2], m, n - k, dtype=L.dtype, device=L.device)], -1)
    upper = U
    if m > k:
        upper = cat([U, zeros(*U.shape[:-2], m - k, n, dtype=U.dtype, device=U.device)], -2)
    return lower + upper


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``(LU, pivots, info)``: L and U packed as LAPACK's getrf leaves them, its 1-based
    int32 row swaps, and its info (the first zero pivot, 0 if none)."""
    from ember.native.linalg.checks import LinAlgError

    _, L, U, pivots, info = _factor(A, "linalg.lu_factor_ex", pivot)
    if check_errors and bool(info.any()):
        raise LinAlgError("linalg.lu_factor_ex: U is singular")
    return return_types_lu_factor_ex(_pack(L, U), pivots, info)


def lu_factor(A, *, pivot=True):
    """``(LU, pivots)``, as ``lu_factor_ex`` without ``info``.

    >>> import ember
    >>> ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]])).pivots
    tensor([2, 2], dtype=ember.int32)
    """
    _, L, U, pivots, _ = _factor(A, "linalg.lu_factor", pivot)
    return return_types_lu_factor(_pack(L, U), pivots)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from ``lu_factor``'s packed matrix and pivots (empty tensors for
    the parts not asked for)."""
    from ember.native.factory import empty, eye, tensor

    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data[..., :k, :].triu()
    else:
        L = U = empty(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_pivots:
        pivots = np.asarray(LU_pivots.cpu().numpy()).reshape(int(np.prod(LU_pivots.shape[:-1])), k)
        P = np.stack([permutation_from_pivots(p, m) for p in pivots]) if len(pivots) else np.zeros((0, m, m))
        P = tensor(P.reshape(tuple(LU_pivots.shape[:-1]) + (m, m)), dtype=LU_data.dtype, device=LU_data.device)
    else:
        P = empty(0, dtype=LU_data.dtype, device=LU_data.device)
    return return_types_lu_unpack(P, L, U)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with ``A X = B`` for A given by ``lu_factor`` (``adjoint``: ``A^T X = B``;
    ``left=False``: ``X A = B``), by two triangular solves.

    >>> import ember
    >>> A = ember.tensor([[1., 2.], [3., 4.]])
    >>> ember.linalg.lu_solve(*ember.linalg.lu_factor(A), ember.tensor([[5.], [11.]]))
    tensor([[1.],
            [2.]])
    """
    from ember.native.linalg.triangular_solve import solve_triangular

    if not left:  # X A = B  <=>  A^T X^T = B^T
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    P, _, _ = lu_unpack(LU, pivots, unpack_data=False)
    if not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        Y = solve_triangular(LU, P.mT @ B, upper=False, unitriangular=True)
        return solve_triangular(LU, Y, upper=True)
    # A^T = U^T L^T P^T: X = P L^-T U^-T B
    Y = solve_triangular(LU.mT, B, upper=False)
    return P @ solve_triangular(LU.mT, Y, upper=True, unitriangular=True)


# --- the older spellings (torch.lu, torch.lu_solve) ----------------------------------------


def lu_with_pivots(A, pivot=True, get_infos=False):
    """``torch.lu``: ``(LU, pivots)``, with ``infos`` when ``get_infos``."""
    LU_data, pivots, info = lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    return (LU_data, pivots, info) if get_infos else (LU_data, pivots)


def lu_solve_legacy(b, LU_data, LU_pivots):
    """``torch.lu_solve(b, LU_data, LU_pivots)``: ``linalg.lu_solve`` with B first."""
    return lu_solve(LU_data, LU_pivots, b)
