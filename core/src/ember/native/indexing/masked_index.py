"""``_unsafe_masked_index`` and ``_unsafe_masked_index_put_accumulate``: advanced indexing
where a mask says which indices count, those it masks off free to be out of bounds.

PyTorch counterpart: aten/src/ATen/native/TensorAdvancedIndexing.cpp
(``_unsafe_masked_index``, ``_unsafe_masked_index_put_accumulate``) and derivatives.yaml
(v2.13).

``_unsafe_masked_index(x, mask, indices, fill)`` is ``where(mask, x[indices], fill)`` and
``_unsafe_masked_index_put_accumulate(x, mask, indices, values)`` is ``x.index_put(indices,
where(mask, values, 0), accumulate=True)``, with every index first clamped into
``[-size, size - 1]``: a masked-off index then reads or adds to some element in bounds
(adding 0 to it), so no bounds check is needed where the mask is false (PyTorch's
decompositions of padding and of the embedding backward build such indices). Composites
of ``clamp``, indexing and ``where``, so their gradients are those ops': the gradient of
``x`` is put back (accumulated) at the indices where the mask holds, 0 elsewhere.
"""

from ember.native.indexing.indexing import where


def _clamped_key(input, indices):
    """The indices clamped into their dims (None: the whole dim), as an indexing key."""
    return tuple(slice(None) if index is None else index.clamp(-size, size - 1)
                 for index, size in zip(indices, input.shape))


def _unsafe_masked_index(input, mask, indices, fill):
    """``where(mask, input[indices], fill)``, the indices clamped into bounds first so a
    masked-off index may be out of range.

    >>> import ember
    >>> x = ember.tensor([10., 20., 30.])
    >>> i = ember.tensor([0, 2, 7])
    >>> ember._unsafe_masked_index(x, i < 3, [i], -1.)
    tensor([10., 30., -1.])
    """
    return where(mask, input[_clamped_key(input, indices)], fill)


def _unsafe_masked_index_put_accumulate(input, mask, indices, values):
    """``input.index_put(indices, where(mask, values, 0), accumulate=True)``, the indices
    clamped into bounds first so a masked-off index may be out of range.

    >>> import ember
    >>> i = ember.tensor([0, 0, 7])
    >>> ember._unsafe_masked_index_put_accumulate(ember.zeros(3), i < 3, [i], ember.ones(3))
    tensor([2., 0., 0.])
    """
    return input.index_put(_clamped_key(input, indices), where(mask, values, 0), accumulate=True)
