"""Which arrays ember-numba's compiled loops take, and the views and stand-ins they
take them in.

PyTorch counterpart: the ``expect_contiguous`` and dtype checks at the top of
aten/src/ATen/native/layer_norm.cpp and group_norm.cpp (v2.13); torch copies a
non-contiguous input, ember-numba hands it to ember-norm's NumPy kernel.
"""

import numpy as np

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def compilable(*arrays, empty=False):
    """Whether the compiled loops serve these arrays: all float32 or all float64 (the
    first's dtype), all C-contiguous, and non-empty unless ``empty`` (None entries, a
    buffer an option turned off, are skipped; the first is never None). A loop, not
    all() over a generator: the optimizers call it once per parameter."""
    dtype = arrays[0].dtype
    if dtype not in FLOATS:
        return False
    for array in arrays:
        if array is not None and (array.dtype != dtype or not array.flags.c_contiguous
                                  or not (empty or array.size)):
            return False
    return True


def channels(array):
    """View a contiguous (N, C, *) array as (N, C, L)."""
    return array.reshape(array.shape[0], array.shape[1], -1)


def flat_or_filled(param, fill, size, dtype):
    """A weight or bias as a flat array, or ``size`` copies of ``fill`` when it is None."""
    return np.full(size, fill, dtype=dtype) if param is None else param.reshape(-1)


def channels_last_rows(array):
    """An (N, C, *) array stored channels-last, as its (N * L, C) rows of channels;
    None for any other layout (a C-contiguous array, including any 2-d one, is NCHW)."""
    if array.ndim < 3 or array.flags.c_contiguous:
        return None
    # transpose, not np.moveaxis: the same view, without moveaxis's axis normalization
    # (about 3 us against 9 per call; yolo_nano runs 33 eval batch norms on small maps)
    moved = array.transpose((0, *range(2, array.ndim), 1))
    if not moved.flags.c_contiguous or array.size == 0:
        return None
    return moved.reshape(-1, array.shape[1])


def empty_channels_last(like):
    """A new array shaped and laid out like the channels-last array ``like``, and its
    (N * L, C) rows."""
    moved = np.empty(like.shape[:1] + like.shape[2:] + like.shape[1:2], dtype=like.dtype)
    last = like.ndim - 1
    return moved.transpose((0, last, *range(1, last))), moved.reshape(-1, like.shape[1])
