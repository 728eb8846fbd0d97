"""The gated linear unit: one half of the input gates the other.

PyTorch counterpart: ``glu`` in torch/nn/functional.py and
aten/src/ATen/native/GatedLinearUnit.cpp (v2.13). ember composes it from core ops
(chunk, sigmoid, mul): three nodes, and no backward of its own to maintain.
"""


def glu(input, dim=-1):
    """``a * sigmoid(b)``, where ``a`` and ``b`` are the two halves of ``input`` along ``dim``.

    Args:
        dim: the dim to split in half; its size must be even.

    >>> import ember
    >>> glu(ember.tensor([1., 2., 0., 0.]))
    tensor([0.5000, 1.0000])
    """
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    from ember.tensor import _wrap_dim

    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {size}")
    if not input.dtype.is_floating_point:
        from ember.native.pointwise.unary import not_implemented_for

        raise not_implemented_for("glu_cpu", input._data.dtype)
    first, second = input.chunk(2, dim)
    return first * second.sigmoid()
