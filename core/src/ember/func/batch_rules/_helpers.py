"""What the batch rules share: moving the batch dim in and out, aligning ranks.

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesHelper.h (``moveBatchDimToFront``,
``maybePadToLogicalRank``, ``getPhysicalDim``, ``ensure_has_bdim``) (v2.13).
"""

from ember.func.batched_tensor import BatchedTensor, unwrap, wrap

__all__ = ["BatchedTensor", "unwrap", "wrap", "logical_rank", "physical_dim", "pad_to_rank", "materialize",
           "any_batched"]


def logical_rank(x):
    """The number of dims the mapped function sees (0 for a Python number)."""
    return x.dim() if hasattr(x, "dim") else 0


def physical_dim(dim, rank):
    """A logical dim (negative allowed) as the physical dim, one after the batch."""
    if rank == 0:
        return 1 if dim in (0, -1) else dim + 1
    return dim % rank + 1


def pad_to_rank(value, rank):
    """``value`` (B, *logical) with size-1 dims after the batch, to ``rank`` logical dims,
    so that it broadcasts against other operands from the right (maybePadToLogicalRank)."""
    missing = rank - (value.dim() - 1)
    for _ in range(missing):  # unsqueeze: always a view, so an in-place op still writes the value
        value = value.unsqueeze(1)
    return value


def materialize(x, info):
    """``x``'s physical value with the batch dim first, expanding an unbatched ``x``."""
    value, batched = unwrap(x, info.level)
    if batched:
        return value
    return x.unsqueeze(0).expand((info.size,) + tuple(x.shape))


def any_batched(values, level):
    return any(isinstance(x, BatchedTensor) and x.level == level for x in values)
