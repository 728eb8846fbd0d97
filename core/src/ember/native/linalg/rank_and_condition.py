"""Numbers that describe a matrix: ``linalg.matrix_rank`` and ``linalg.cond``.

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp (``linalg_matrix_rank``,
``linalg_cond``) (v2.13).

Both are compositions of ``svdvals`` (``eigvalsh`` for a Hermitian rank), norms and
``inv_ex``, so ``cond``'s gradient comes from theirs (the rank, an integer, has none).
"""

from ember.native.linalg.checks import check_floating, check_matrix, check_square


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values above ``max(atol, rtol * largest)``. By default
    ``rtol = eps * max(m, n)`` (and 0 when only ``atol`` is given); the old ``tol``
    is ``atol``. An int64 tensor of A's batch shape.

    >>> import ember
    >>> ember.linalg.matrix_rank(ember.tensor([[1., 2.], [2., 4.]]))
    tensor(1)
    """
    from ember.native.linalg.eigh import eigvalsh
    from ember.native.linalg.svd import svdvals

    check_matrix(A, "linalg.matrix_rank")
    check_floating(A, "linalg.matrix_rank")
    if tol is not None:
        if atol is not None or rtol is not None:
            raise RuntimeError("linalg.matrix_rank: tol cannot be given with atol or rtol")
        atol = tol
    import numpy as np

    from ember.native.indexing.indexing import where

    values = eigvalsh(A).abs() if hermitian else svdvals(A)
    if values.shape[-1] == 0:
        return values.sum(-1).long()
    largest = values.amax(-1, keepdim=True)
    if rtol is None:  # eps * max(m, n); where an atol > 0 is given, 0
        default = np.finfo(A._data.dtype).eps * max(A.shape[-2:])
        rtol = default if atol is None else where(atol > 0, 0.0, default) if hasattr(atol, "_data") \
            else (0.0 if atol > 0 else default)
    threshold = largest * _column(rtol)
    if atol is not None:
        threshold = threshold.clamp(min=atol) if not hasattr(atol, "_data") else threshold.maximum(_column(atol))
    return (values > threshold).sum(-1)


def _column(tol):
    # A tolerance tensor holds one value per matrix (A's batch shape): against the
    # singular values it needs a trailing dim.
    return tol.unsqueeze(-1) if hasattr(tol, "_data") and tol.ndim else tol


def cond(A, p=None):
    """The condition number ``norm(A, p) * norm(inv(A), p)``; for ``p`` None or 2 (-2)
    the ratio of the largest to the smallest singular value (its inverse), for any
    matrix; the other orders need square matrices and give inf for a singular one.

    >>> import ember
    >>> ember.linalg.cond(ember.tensor([[1., 0.], [0., 4.]]))
    tensor(4.)
    """
    from ember.linalg import matrix_norm
    from ember.native.indexing.indexing import where
    from ember.native.linalg.info_variants import inv_ex
    from ember.native.linalg.svd import svdvals

    check_matrix(A, "linalg.cond")
    check_floating(A, "linalg.cond")
    if p in (None, 2, -2):
        values = svdvals(A)
        largest, smallest = values.amax(-1), values.amin(-1)
        return largest / smallest if p != -2 else smallest / largest
    if p not in ("fro", "nuc", 1, -1, float("inf"), -float("inf")):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    check_square(A, f"linalg.cond(ord={p})")
    inverse, info = inv_ex(A)
    failed = (info != 0).reshape(tuple(info.shape) + (1, 1))
    result = matrix_norm(A, p) * matrix_norm(inverse.masked_fill(failed, 0.0), p)  # (no NaN into an SVD)
    return where(info != 0, float("inf"), result)
