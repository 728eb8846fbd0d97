"""Max unpooling: ``max_unpool1d``, ``max_unpool2d``, ``max_unpool3d``, the partial inverse
of max pooling.

PyTorch counterpart: aten/src/ATen/native/MaxUnpooling.cpp and torch/nn/functional.py
(``max_unpool*d``, ``_unpool_output_size``) (v2.13).

Each pooled value goes back to the position its index names in a zero plane (the flat
``H*W`` or ``D*H*W`` index ``max_pool*d(..., return_indices=True)`` gives); every other
position is 0. It is a ``scatter`` into zeros, so its gradient is the ``gather`` of the
output gradient at the same indices (what torch's backward computes), from autograd.
"""

from ember import dtypes


def _tuple(value, dims):
    return (value,) * dims if isinstance(value, int) else tuple(value)


def unpool_output_size(input, kernel_size, stride, padding, output_size):
    """The spatial output size: the one max pooling came from, ``(in - 1) * s + k - 2p``, or
    ``output_size`` (with or without the batch and channel dims) if it is within a stride."""
    dims = len(kernel_size)
    default = [(input.shape[-dims + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(dims)]
    if output_size is None:
        return default
    if len(output_size) == dims + 2:
        output_size = output_size[2:]
    if len(output_size) != dims:
        raise ValueError(f"output_size should be a sequence containing {dims} or {dims + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(dims):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return list(output_size)


def _unpool(input, indices, sizes, name):
    """Scatter ``input``'s values into zero planes of ``sizes`` at the flat ``indices``."""
    from ember.native.factory import zeros

    dims = len(sizes)
    if indices.dtype != dtypes.int64:
        from ember.native.factory import _legacy_name

        raise RuntimeError(f"elements in indices should be type int64 but got: {_legacy_name(indices.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_sizes(input.shape)}) but got indices tensor with shape: {_sizes(indices.shape)}")
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"Input to {name} should be a {dims + 1}d or {dims + 2}d Tensor, but got a tensor with "
                           f"{input.ndim} dimensions.")
    volume = 1
    for size in sizes:
        volume *= size
    flat_indices = indices.flatten(-dims) if input.numel() else indices.reshape(tuple(indices.shape[:-dims]) + (0,))
    invalid = (flat_indices < 0) | (flat_indices >= volume)
    if bool(invalid.any()):
        first = int(flat_indices[invalid][0])  # the first in memory order (torch's threads may name another)
        raise RuntimeError(f"Found an invalid max index: {first} (output volumes are of size "
                           f"{'x'.join(map(str, sizes))})")
    batch = tuple(input.shape[:-dims])
    planes = zeros(batch + (volume,), dtype=input.dtype, device=input.device)
    return planes.scatter(-1, flat_indices, input.flatten(-dims)).reshape(batch + tuple(sizes))


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, dims, name):
    kernel_size = _tuple(kernel_size, dims)
    stride = kernel_size if stride is None else _tuple(stride, dims)
    padding = _tuple(padding, dims)
    sizes = unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _unpool(input, indices, sizes, name)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Undo :func:`max_pool1d` on ``(N, C, L)`` or ``(C, L)``: each value back at its index.

    >>> import ember
    >>> ember.nn.functional.max_unpool1d(ember.tensor([[[5., 7.]]]), ember.tensor([[[1, 2]]]), 2).tolist()
    [[[0.0, 5.0, 7.0, 0.0]]]
    """
    kernel_size, padding = _tuple(kernel_size, 1), _tuple(padding, 1)
    stride = kernel_size if stride is None else _tuple(stride, 1)
    sizes = unpool_output_size(input, kernel_size, stride, padding, output_size)
    # torch runs it as a 2-D unpooling of width 1, and names that in its errors
    out = _unpool(input.unsqueeze(-1), indices.unsqueeze(-1), sizes + [1], "max_unpooling2d")
    return out.squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Undo :func:`max_pool2d` on ``(N, C, H, W)`` or ``(C, H, W)``."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpooling2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Undo :func:`max_pool3d` on ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpooling3d")
