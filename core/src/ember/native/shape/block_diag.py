"""``block_diag``: a block-diagonal matrix from the given tensors, zeros elsewhere.

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp (``block_diag``) (v2.13).

Each input is a block: a matrix as it is, a 1-d tensor of n elements as a 1 x n row,
a 0-d tensor as 1 x 1. The result's dtype is the inputs' common one. Built as rows of
``cat``s (zeros, the block, zeros), themselves ``cat``ed: the gradient of each block is
its rectangle of the incoming gradient.
"""

from ember import dtypes
from ember.native.shape.shape import cat


def _as_matrix(t, position):
    if t.ndim > 2:
        raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {position} has "
                           f"{t.ndim} dimensions")
    return t.reshape(1, -1) if t.ndim < 2 else t


def block_diag(*tensors):
    """The block-diagonal matrix with ``tensors`` along its diagonal.

    >>> import ember
    >>> ember.block_diag(ember.tensor([[1, 2]]), ember.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    from ember.native.factory import empty, zeros

    blocks = [_as_matrix(t, i) for i, t in enumerate(tensors)]
    if not blocks:
        return empty(1, 0)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = dtypes.promote_types(dtype, b.dtype)
    device = blocks[0].device
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        pieces = [zeros(b.shape[0], left, dtype=dtype, device=device), b.to(dtype),
                  zeros(b.shape[0], width - left - b.shape[1], dtype=dtype, device=device)]
        rows.append(cat(pieces, dim=1))
        left += b.shape[1]
    return cat(rows, dim=0)
