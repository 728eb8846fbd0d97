"""``_chunk_cat``: split each tensor into ``num_chunks`` chunks along ``dim`` and lay the
i-th chunks of all tensors side by side, for FSDP's gradient buckets.

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp (``_chunk_cat``) and
torch/_decomp/decompositions.py (``_chunk_cat``, ``_pad_chunk``) (v2.13).

Each tensor is zero-padded along ``dim`` to a multiple of ``num_chunks``, viewed as
``size[:dim] + (num_chunks, -1)`` (the chunk and everything after ``dim`` flattened), and
the views are concatenated along ``dim + 1``: the result is ``size[:dim] + (num_chunks,
total)``. A composite of ``constant_pad_nd``, ``reshape`` and ``cat``, so its gradient is
theirs (PyTorch's op has none).
"""

from ember.native.padding import constant_pad_nd
from ember.native.shape.shape import cat
from ember.tensor import _wrap_dim


def _check(condition, message):
    if not condition:
        raise RuntimeError(f"_chunk_cat expects {message}")


def _chunk_dim(tensors, dim, num_chunks):
    """``dim`` wrapped, after torch's checks on the inputs."""
    _check(num_chunks >= 1, "positive num_chunks")
    _check(len(tensors) > 0, "a non-empty input tensor list")
    for t in tensors:
        _check(t.numel() > 0, "non-empty tensor")
        _check(t.dtype is tensors[0].dtype, "all input tensors with the same dtype")
        _check(t.device == tensors[0].device, "all inputs tensors on the same device")
    if all(t.ndim == tensors[0].ndim for t in tensors):
        dim = _wrap_dim(dim, tensors[0].ndim)
    else:
        _check(dim >= 0, "non-negative dim when input tensors have different ndims")
        for t in tensors:
            _check(dim < t.ndim, "dim < ndim for all input tensors")
    for t in tensors:
        _check(tuple(t.shape[:dim]) == tuple(tensors[0].shape[:dim]),
               "same sizes of 0,...,dim-1 dimensions for all tensors")
    return dim


def _chunked(t, dim, num_chunks):
    size = t.shape[dim]
    padded = -(-size // num_chunks) * num_chunks
    if padded != size:
        t = constant_pad_nd(t, [0, 0] * (t.ndim - dim - 1) + [0, padded - size], 0)
    return t.reshape(tuple(t.shape[:dim]) + (num_chunks, -1))


def _chunk_cat(tensors, dim, num_chunks):
    """The ``num_chunks`` chunks of each tensor along ``dim`` (zero-padded to equal
    chunks, everything after ``dim`` flattened), the i-th chunks side by side.

    >>> import ember
    >>> ember._chunk_cat([ember.tensor([1, 2, 3]), ember.tensor([4, 5])], 0, 2)
    tensor([[1, 2, 4],
            [3, 0, 5]])
    """
    dim = _chunk_dim(list(tensors), dim, num_chunks)
    return cat([_chunked(t, dim, num_chunks) for t in tensors], dim + 1)
