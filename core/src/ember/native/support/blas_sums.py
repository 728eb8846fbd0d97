"""Row and column sums, and row-wise sums of products, as BLAS products: what the
fused norm kernels (ember-norm) and the fused cross-entropy (ember-loss) are made of.

PyTorch counterpart: the ``RowwiseMoments`` and vectorized sums of
aten/src/ATen/native/cpu/moments_utils.h and layer_norm_kernel.cpp (v2.13), which
fuse them into one loop; NumPy cannot, so ember hands them to BLAS.

# NOTE [ Norm reductions as matrix-vector products ]
# On an (R, D) float32 array (R * D = 524,288 here), NumPy's ``sum(axis=1)`` and
# ``einsum("bd,bd->b")`` each take about as long as two elementwise passes, while the
# matrix-vector product ``a @ ones`` reads the array once at BLAS speed (about 3x
# faster than an elementwise pass), and so does the stacked product
# ``a[:, None, :] @ b[:, :, None]`` for the row-wise sums of products (one dot product
# per row, with no product array formed). A kernel that needs ``sum(g * xhat)`` per
# row therefore never forms ``g * xhat`` for that sum alone. BLAS only has float32 and
# float64; other dtypes take NumPy's reductions. BLAS accumulates each row in a few
# running sums rather than pairwise, which is as accurate as NumPy's pairwise sum for
# the row lengths norms see; kernels with longer rows keep NumPy's sums (see callers).
"""


def blas_dtype(xp, a):
    """Whether BLAS handles ``a``'s dtype (float32 and float64)."""
    return a.dtype == xp.float32 or a.dtype == xp.float64


def row_sums(xp, a, weights=None):
    """``(a * weights).sum(axis=1)`` for a 2-d ``a`` (weights per column, or None)."""
    if not blas_dtype(xp, a):
        return (a if weights is None else a * weights).sum(axis=1)
    if weights is None:
        weights = _ones(xp, a.shape[1], a.dtype)
    return a @ weights


def column_sums(xp, a, weights=None):
    """``(a * weights[:, None]).sum(axis=0)`` for a 2-d ``a`` (weights per row, or
    None)."""
    if not blas_dtype(xp, a):
        return (a if weights is None else a * weights[:, None]).sum(axis=0)
    if weights is None:
        weights = _ones(xp, a.shape[0], a.dtype)
    return weights @ a


def _ones(xp, size, dtype):
    # empty + fill: ``ones`` copies its fill value through copyto, which costs about 2 us
    # at any small size, as much as the (128, 10) matrix-vector product it feeds
    ones = xp.empty(size, dtype=dtype)
    ones.fill(1)
    return ones


def row_dots(xp, a, b):
    """``(a * b).sum(axis=1)`` for 2-d ``a`` and ``b`` of one shape, without forming
    ``a * b``: one dot product per row."""
    if not blas_dtype(xp, a) or a.shape[0] == 0:
        return xp.einsum("bd,bd->b", a, b)
    return xp.matmul(a[:, None, :], b[:, :, None]).reshape(a.shape[0])
