"""``xlogy``: ``x * log(y)``, defined as 0 where ``x`` is 0 (unless ``y`` is NaN).

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp (``xlogy``) and its
derivatives.yaml entry (v2.13).

Either argument may be a Python number. Integers and bools become the default float
type. Gradients: ``grad * xlogy(x != 0, y)`` for ``x`` and ``grad * x / y`` for ``y``.
"""

from ember.dispatcher import INT_TO_FLOAT, Op


def _xlogy_kernel(xp, x, y):
    y = xp.asarray(y, dtype=x.dtype)  # a Python number takes the tensor's dtype
    with xp.errstate(divide="ignore", invalid="ignore"):
        product = x * xp.log(y)
    return xp.where((x == 0) & ~xp.isnan(y), xp.zeros_like(product), product)


def _xlogy_backward(ctx, grad):
    x, y = ctx.saved_inputs
    need_x, need_y = ctx.needs_input_grad
    grad_x = grad * xlogy((x != 0).to(grad.dtype), y) if need_x else None
    grad_y = grad * x / y if need_y else None
    return grad_x, grad_y


XLOGY = Op("aten::xlogy", _xlogy_kernel, _xlogy_backward, promote=INT_TO_FLOAT, save="inputs")


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 and ``other`` is not NaN.

    >>> import ember
    >>> ember.xlogy(ember.tensor([0., 2., 0.]), ember.tensor([0., 3., float("nan")]))
    tensor([0.0000, 2.1972,    nan])
    """
    if not hasattr(input, "_data") and not hasattr(other, "_data"):
        raise TypeError("xlogy() received an invalid combination of arguments: no Tensor given")
    if not hasattr(input, "_data"):  # xlogy(number, tensor): the number as a 0-d tensor
        from ember.native.factory import scalar_tensor

        input = scalar_tensor(input, dtype=other.dtype if other.dtype.is_floating_point else None,
                              device=other.device)
    return XLOGY(input, other)
