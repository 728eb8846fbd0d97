"""Indexing with a batched index tensor: ``x[i]`` where ``i`` is mapped.

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesScatterOps.cpp (``index``:
the batch dim joins the indices as one more index, an arange over the batch) (v2.13).

``tensor[key]`` is not one op in ember (the key is turned into arrays before the op),
so this rule is reached from ``getitem`` itself while a vmap runs.
"""

from ember.func.batch_rules._helpers import materialize, pad_to_rank, unwrap, wrap
from ember.tensor import Tensor


def batched_index_getitem(tensor, items, info):
    """Index tensors first in the key (the usual ``x[i]``, ``x[i, j]``): one indexing of
    the physical tensor, with ``arange(B)`` in front of the indices so that each sample
    reads its own rows. Any other key: the key and the tensor sliced per sample."""
    advanced = 0
    while advanced < len(items) and isinstance(items[advanced], Tensor):
        advanced += 1
    if advanced == 0 or any(isinstance(item, Tensor) for item in items[advanced:]) \
            or any(item.dtype.is_floating_point or item.dtype.itemsize == 1 for item in items[:advanced]):
        return _per_sample(tensor, items, info)
    from ember.native.factory import arange

    rank = max(item.dim() for item in items[:advanced])
    batch = arange(info.size, device=tensor.device).reshape((info.size,) + (1,) * rank)
    key = (batch, *[_lined_up(item, rank, info) for item in items[:advanced]], *items[advanced:])
    return wrap(materialize(tensor, info)[key], info.level)


def _lined_up(item, rank, info):
    """A batched index's physical value padded to ``rank`` after its batch dim; an
    unbatched one as it is (it broadcasts from the right)."""
    value, batched = unwrap(item, info.level)
    return pad_to_rank(value, rank) if batched else item


def _per_sample(tensor, items, info):
    from ember.func.batching import fallback_counts
    from ember.native.shape.shape import stack

    fallback_counts["aten::index"] += 1  # the loop, counted as the op's fallback
    level = info.level
    results = []
    for i in range(info.size):
        key = tuple(_sample(item, level, i) for item in items)
        results.append(_sample(tensor, level, i)[key])
    return wrap(stack(results), level)


def _sample(x, level, i):
    value, batched = unwrap(x, level)
    return value.select(0, i) if batched else x
