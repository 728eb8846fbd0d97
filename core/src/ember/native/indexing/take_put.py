"""``take`` and ``put``: read and write a tensor's elements by their position in its
flattened (row-major) order, whatever its shape.

PyTorch counterpart: aten/src/ATen/native/TensorAdvancedIndexing.cpp (``take``,
``put``, ``put_``) and their derivatives.yaml entries (v2.13).

``take(x, index)`` is ``x.flatten()[index]``, shaped like ``index``; ``put`` writes
``source`` there (``accumulate=True`` adds, so a repeated position sums every
value written to it). A negative position counts from the end. Both are built from
the indexing ops, whose gradients they inherit: ``take``'s gradient adds back to each
position read, ``put``'s gives ``source`` the gradient of where it went and the
input the gradient of what was not overwritten.
"""

from ember import dtypes


def _check_index(index, name):
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{dtypes.SCALAR_TYPE_NAMES[index.dtype.name]}")


def _flat_positions(index, numel, name):
    """``index`` with negative positions wrapped, after PyTorch's range check."""
    if index.numel():
        if numel == 0:
            raise IndexError(f"{name}(): tried to take from an empty tensor")
        low, high = int(index.min().item()), int(index.max().item())
        bad = low if low < -numel else high if high >= numel else None
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {numel} elements.")
    return index + (index < 0).to(index.dtype) * numel


def take(input, index):
    """The elements of ``input`` at flat positions ``index``, shaped like ``index``.

    >>> import ember
    >>> ember.take(ember.tensor([[4, 3], [5, 7]]), ember.tensor([0, 3, -1]))
    tensor([4, 7, 7])
    """
    _check_index(index, "take")
    positions = _flat_positions(index, input.numel(), "take")
    return input.reshape(-1)[positions]


def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source``'s elements written at flat positions ``index``
    (added to what is there with ``accumulate=True``).

    >>> import ember
    >>> ember.zeros(2, 2).put(ember.tensor([1, 1, 2]), ember.tensor([1., 2., 3.]), accumulate=True)
    tensor([[0., 3.],
            [3., 0.]])
    """
    _check_index(index, "put_")
    if source.dtype is not input.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{dtypes.SCALAR_TYPE_NAMES[input.dtype.name]} and source.dtype = "
                           f"{dtypes.SCALAR_TYPE_NAMES[source.dtype.name]}")
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    positions = _flat_positions(index, input.numel(), "put_").reshape(-1)
    flat = input.reshape(-1).index_put((positions,), source.reshape(-1), accumulate=accumulate)
    return flat.reshape(input.shape)
