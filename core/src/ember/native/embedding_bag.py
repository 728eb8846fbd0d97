"""``embedding_bag``: the sum, mean or max of the embeddings of each bag of indices, the op
behind ``nn.EmbeddingBag``.

PyTorch counterpart: aten/src/ATen/native/EmbeddingBag.cpp and torch/nn/functional.py
(``embedding_bag``: its argument checks) (v2.13).

A bag is a run of ``input`` (1-D, starting at each ``offsets`` entry) or a row of a 2-D
``input``. ember lays the bags out as a padded ``(B, longest bag)`` matrix of indices
into the table with one extra row (zeros for a sum or mean, ``-inf`` for a max) where a
bag has ended or an index is ``padding_idx``; one ``embedding`` lookup of that matrix
and one reduction over its second dim give every bag at once:

    sum   sum_j w_j * weight[input_j]            (w: per_sample_weights, else 1)
    mean  the sum over the bag's entries that are not padding_idx, divided by their count
    max   per feature, the largest weight[input_j, d]

An empty bag (or one of padding only) gives zeros. The gradient is autograd's: the
lookup's backward scatters into the table (honouring ``scale_grad_by_freq``), the max's
goes to the first row that holds each maximum, as torch's kernel picks it.

With ``scale_grad_by_freq``, each table row's gradient is divided by how often its index
occurs in ``input``, as documented; torch 2.13's embedding_bag divides by the count of a
neighbouring index instead (its backward reads the counts out of step), so ember's
gradient differs from torch's there.
"""

import numpy as np

MODES = ("sum", "mean", "max")


def _bag_layout(indices, offsets, include_last_offset, padding_idx, sentinel):
    """``(positions, real)``: per bag and slot, the table row to read (``sentinel`` past a
    bag's end or for ``padding_idx``), and whether the slot holds a real entry."""
    indices = np.asarray(indices, dtype=np.int64)
    starts = np.asarray(offsets, dtype=np.int64)
    ends = np.append(starts[1:], len(indices))
    if include_last_offset:
        starts, ends = starts[:-1], np.minimum(starts[1:], len(indices))
    lengths = np.maximum(ends - starts, 0)
    longest = int(lengths.max()) if lengths.size else 0
    slot = np.arange(longest)
    within = slot[None, :] < lengths[:, None]
    source = np.where(within, starts[:, None] + slot[None, :], 0)
    rows = indices[source] if indices.size else np.zeros(source.shape, dtype=np.int64)
    real = within & (rows != padding_idx)
    return np.where(real, rows, sentinel), real, source


def _check_offsets(offsets, count):
    if offsets.numel() == 0:
        return
    first, last = int(offsets[0]), int(offsets[-1])
    if first != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {first}")
    if last > count:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {count} but got offsets[-1] of {last}")


def _resolve_padding_idx(padding_idx, num_weights):
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        assert padding_idx < num_weights, "padding_idx must be within the number of embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num_weights, "padding_idx must be within the number of embeddings"
        padding_idx = num_weights + padding_idx
    return int(padding_idx)


def _flatten_bags(input, offsets, per_sample_weights):
    """A 2-D input as 1-D with an offset per row, as torch's functional does."""
    from ember.native.factory import arange

    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
                         f"then it must have the same shape as the input ({input.shape})")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = arange(0, input.numel(), max(input.shape[1], 1), dtype=input.dtype, device=input.device)
        if input.shape[1] == 0:
            offsets = arange(0, input.shape[0], dtype=input.dtype, device=input.device) * 0
        flat_weights = None if per_sample_weights is None else per_sample_weights.reshape(-1)
        return input.reshape(-1), offsets, flat_weights, False
    if input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return input, offsets, per_sample_weights, None
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")


def _sparse_rows(weight, positions, real, scale_grad_by_freq):
    """The looked-up rows for ``sparse=True`` (sum and mean only): the empty slots look
    up row 0 and are zeroed, so the weight's sparse gradient holds one entry per slot
    (zero for an empty one) where torch's holds one per index; their sums agree
    (``scale_grad_by_freq`` is refused by the backward, as torch refuses it)."""
    from ember.native.embedding import embedding
    from ember.native.factory import tensor

    slots = tensor(np.where(real, positions, 0), device=weight.device)
    rows = embedding(slots, weight, scale_grad_by_freq=scale_grad_by_freq, sparse=True)
    return rows * tensor(real, dtype=weight.dtype, device=weight.device).unsqueeze(-1)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Reduce each bag of embeddings to one row: ``(B, embedding_dim)``.

    Args:
        input: 1-D indices with ``offsets`` (where each bag starts), or 2-D ``(B, N)``: B bags of N.
        weight: the ``(num_embeddings, embedding_dim)`` table.
        mode: ``'sum'``, ``'mean'`` or ``'max'``.
        per_sample_weights: a weight per index (``'sum'`` only).
        include_last_offset: ``offsets`` has B + 1 entries, the last one the end of the last bag.
        padding_idx: entries of this index are left out of every bag.

    >>> import ember
    >>> table = ember.arange(6.).view(3, 2)
    >>> ember.nn.functional.embedding_bag(ember.tensor([0, 2, 1]), table, ember.tensor([0, 2])).tolist()
    [[2.0, 3.0], [2.0, 3.0]]
    """
    from ember.native.embedding import _check_indices, embedding, embedding_renorm_
    from ember.native.factory import full, tensor
    from ember.native.indexing.indexing import where
    from ember.native.shape.shape import cat

    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    input, offsets, per_sample_weights, last = _flatten_bags(input, offsets, per_sample_weights)
    include_last_offset = include_last_offset if last is None else last
    if mode not in MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    _check_indices(input, "embedding_bag")
    _check_offsets(offsets, input.numel())
    num_weights, dim = weight.shape
    padding_idx = _resolve_padding_idx(padding_idx, num_weights)
    positions, real, source = _bag_layout(input.detach().numpy(), offsets.detach().numpy(), include_last_offset,
                                          padding_idx, sentinel=num_weights)
    if sparse:
        rows = _sparse_rows(weight, positions, real, scale_grad_by_freq)
    else:
        fill = float("-inf") if mode == "max" else 0.0
        extended = cat([weight, full((1, dim), fill, dtype=weight.dtype, device=weight.device)])
        rows = embedding(tensor(positions, device=weight.device), extended, scale_grad_by_freq=scale_grad_by_freq)
    if per_sample_weights is not None:
        slot_weights = per_sample_weights[tensor(source, device=weight.device)]
        rows = rows * where(tensor(real, device=weight.device), slot_weights, 0.0).unsqueeze(-1)
    if mode == "sum":
        return rows.sum(1)
    if mode == "mean":
        counts = tensor(np.maximum(real.sum(1), 1), dtype=weight.dtype, device=weight.device)
        return rows.sum(1) / counts.unsqueeze(-1)
    if rows.shape[1] == 0:
        return rows.sum(1)
    best = rows.max(1).values
    return where(tensor(real.any(1), device=weight.device).unsqueeze(-1), best, 0.0)
