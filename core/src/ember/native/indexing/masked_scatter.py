"""``masked_scatter``: write consecutive elements of ``source`` where ``mask`` is True.

PyTorch counterpart: aten/src/ATen/native/TensorAdvancedIndexing.cpp
(``masked_scatter``) and its derivatives.yaml entry (v2.13).

The mask (bool) broadcasts to ``input``; the True positions, in row-major order,
receive ``source``'s first elements in row-major order. Gradients: ``input`` gets the
gradient where the mask is False; ``source`` gets, in its first elements, the gradient
at the True positions, zeros after them.
"""

from ember.dispatcher import NONE, Op
from ember.native.support._inplace import inplace


def _masked_scatter_kernel(xp, a, mask, source):
    out = a.copy()
    full_mask = xp.broadcast_to(mask, a.shape)
    count = int(full_mask.sum())
    out[full_mask] = source.reshape(-1)[:count]
    return out


def _masked_scatter_backward(ctx, grad):
    from ember.native.factory import zeros
    from ember.native.shape.shape import cat

    _, mask, source = ctx.saved_inputs
    need_input, _, need_source = ctx.needs_input_grad
    grad_input = grad.masked_fill(mask, 0.0) if need_input else None
    grad_source = None
    if need_source:
        selected = grad.masked_select(mask)
        padding = zeros(source.numel() - selected.numel(), dtype=grad.dtype, device=grad.device)
        grad_source = cat([selected, padding]).reshape(source.shape)
    return grad_input, None, grad_source


MASKED_SCATTER = Op("aten::masked_scatter", _masked_scatter_kernel, _masked_scatter_backward, promote=NONE,
                    save="inputs")


def _check(input, mask, source):
    from ember.native.support._inplace import _type_name

    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_type_name(input.dtype)} and {_type_name(source.dtype)}")
    import numpy as np

    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    if int(mask.expand(shape).sum().item()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return shape


def masked_scatter(input, mask, source):
    """``input`` with the True positions of ``mask`` filled from ``source`` in order.

    >>> import ember
    >>> x = ember.zeros(2, 3)
    >>> x.masked_scatter(ember.tensor([[True, False, True], [False, True, True]]), ember.arange(1., 7.))
    tensor([[1., 0., 2.],
            [0., 3., 4.]])
    """
    shape = _check(input, mask, source)
    return MASKED_SCATTER(input.expand(shape), mask.expand(shape), source)


def masked_scatter_(input, mask, source):
    mask = mask.expand(input.shape)  # the mask broadcasts to the target, never the reverse
    _check(input, mask, source)
    return inplace(input, MASKED_SCATTER, (input, mask, source))
