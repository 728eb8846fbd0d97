"""``ember.sparse``: the functions of sparse tensors (products, sums, softmax) that torch
keeps in ``torch.sparse``.

PyTorch counterpart: torch/sparse/__init__.py (v2.13). The tensors and their kernels
live in ember/native/sparse/; this module is the public door. Left out: ``solve``, the
semi-structured (2:4) tensors and ``as_sparse_gradcheck``.
"""

from ember.native.sparse import csr as _csr
from ember.native.sparse import sparse_math as _math
from ember.native.sparse.softmax import log_softmax, softmax

__all__ = ["addmm", "mm", "sum", "softmax", "log_softmax", "sampled_addmm"]


def mm(mat1, mat2, reduce=None):
    """``mat1 @ mat2`` for a sparse ``mat1`` (COO or CSR) and a dense or sparse ``mat2``;
    with ``reduce`` ("sum", "mean", "amax", "amin"), a CSR ``mat1``'s rows are reduced
    with it instead of summed.

    >>> import ember
    >>> a = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
    >>> ember.sparse.mm(a, ember.eye(2))
    tensor([[0., 2.],
            [3., 0.]])
    """
    if reduce is not None:
        return _csr.mm_reduce(mat1, mat2, reduce)
    if mat1.is_sparse_csr:
        return _math.mm(mat1.to_sparse(), mat2)
    return _math.mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1``."""
    return _math.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


sum = _math.sum
sampled_addmm = _csr.sampled_addmm
