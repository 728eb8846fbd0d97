"""``unravel_index``: flat (row-major) indices into a shape, as one coordinate tensor
per dim.

PyTorch counterpart: ``unravel_index`` in torch/functional.py (v2.13), after NumPy's.

Coordinate ``d`` of a flat index ``i`` is ``(i // stride_d) % size_d``, with the
row-major strides of the shape; floor division and modulo, so an index outside
``[0, numel)`` wraps around as it does in PyTorch instead of raising.
"""

import math

from ember import dtypes


def _check_shape(shape):
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    for s in shape:
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s)}")
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    return shape


def unravel_index(indices, shape):
    """The coordinates of each flat index in ``indices`` within a tensor of ``shape``:
    a tuple of int64 tensors of ``indices``' shape, one per dim.

    >>> import ember
    >>> ember.unravel_index(ember.tensor([5, 7]), (2, 4))
    (tensor([1, 1]), tensor([1, 3]))
    """
    from ember.native.factory import tensor
    from ember.native.shape.splitting import unbind

    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is dtypes.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = _check_shape(shape)
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    steps = tensor(strides, dtype=dtypes.int64, device=indices.device)
    sizes = tensor(list(shape), dtype=dtypes.int64, device=indices.device)
    coordinates = indices.long().unsqueeze(-1).floor_divide(steps) % sizes
    return unbind(coordinates, -1)
