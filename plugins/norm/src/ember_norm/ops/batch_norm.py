"""Batch normalization as three fused operators: statistics, normalization, backward.

PyTorch counterpart: aten/src/ATen/native/Normalization.cpp (``batch_norm_cpu``,
``batch_norm_backward_cpu``) and cuda/Normalization.cuh (``batch_norm_stats``) (v2.13).

    norm::batch_norm_stats(input, *, eps) -> (mean, invstd, unbiased_var)   per channel
    norm::batch_norm(input, weight, bias, mean, invstd, *, training, eps) -> output
    norm::batch_norm_backward(grad, input, weight, mean, invstd, *, training) -> (gi, gw, gb)

# NOTE [ Why batch norm is two ops, not one with three outputs ]
# torch's native_batch_norm returns (output, save_mean, save_invstd) and saves only the
# last two for backward. An ember op saves either none or all of its outputs, and
# saving ``output`` would (a) keep one more activation alive per layer and (b) make
# ``relu_(bn(x))`` (ResNet's in-place ReLU) fail the saved-tensor version check. So the
# statistics come from a small op without autograd (``batch_norm_stats``), and are
# passed to ``batch_norm`` as inputs, which saves only its inputs. In training mode
# the backward formula still accounts for mean and invstd being functions of
# ``input``: the closed form below is the gradient of the whole normalization.

Backward, with ``xhat = (x - mean) * invstd``, ``M`` values per channel and sums over
every axis but the channel axis:

    grad_bias   = sum(g)
    grad_weight = sum(g * xhat)
    grad_input  = weight * invstd * (g - grad_bias / M - xhat * grad_weight / M)  (training)
    grad_input  = weight * invstd * g                                              (eval)

Without ``create_graph`` backward runs the fused NumPy/CuPy kernel
``batch_norm_backward`` (a handful of array passes, no graph). With it, the same
formula is written in ember ops, with mean and invstd recomputed differentiably from
``input``, so double backward is exact.
"""

from ember import library
from ember.autograd.grad_mode import grad_state


def _per_channel(array):
    """View an (N, C, *) array as (N, C, L): sums per channel are then two reductions."""
    length = 1
    for size in array.shape[2:]:
        length *= size
    return array.reshape(array.shape[0], array.shape[1], length)


def _count(array3d):
    # Values per channel; an empty batch divides by 1 (its sums are 0, as torch's are).
    return max(array3d.shape[0] * array3d.shape[2], 1)


def _channel_sum(array3d):
    # The inner axis is contiguous: NumPy sums it pairwise, which keeps float32 accurate.
    return array3d.sum(axis=2).sum(axis=0)


@library.custom_op("norm::batch_norm_stats", num_outputs=3)
def batch_norm_stats(xp, input, *, eps):
    """Per-channel batch statistics of an (N, C, *) input: the mean, ``1 / sqrt(var + eps)``
    with the biased variance, and the unbiased variance (for the running estimate).

    >>> import ember
    >>> mean, invstd, var = ember.ops.norm.batch_norm_stats(ember.tensor([[1.0], [3.0]]), eps=0.0)
    >>> mean, var
    (tensor([2.]), tensor([2.]))
    """
    x = _per_channel(input)
    count = _count(x)
    mean = _channel_sum(x) / count
    centered = x - mean[:, None]  # two passes (mean, then squares) for accuracy, as torch does
    square_sum = xp.einsum("ncl,ncl->c", centered, centered)
    invstd = 1.0 / xp.sqrt(square_sum / count + eps)
    unbiased = square_sum / (count - 1) if count > 1 else square_sum * float("nan")
    return mean, invstd, unbiased


@library.custom_op("norm::batch_norm", save="inputs")
def batch_norm(xp, input, weight, bias, mean, invstd, *, training, eps):
    """``(input - mean) * invstd * weight + bias`` per channel of an (N, C, *) input.

    ``mean`` and ``invstd`` are the batch statistics (``training=True``, from
    ``norm::batch_norm_stats``) or the running ones (``training=False``); ``weight`` and
    ``bias`` may be None. ``eps`` is what ``invstd`` was computed with.

    >>> import ember
    >>> x = ember.tensor([[1.0], [3.0]])
    >>> ember.ops.norm.batch_norm(x, None, None, ember.tensor([2.0]), ember.tensor([1.0]),
    ...                           training=True, eps=0.0)
    tensor([[-1.],
            [ 1.]])
    """
    shape = (1, -1) + (1,) * (input.ndim - 2)
    scale = invstd if weight is None else invstd * weight
    # Two passes over the input: x * scale + (bias - mean * scale). Subtracting the mean
    # first measured no more accurate in float32 (the mean's own rounding dominates).
    shift = -mean * scale if bias is None else bias - mean * scale
    out = input * scale.reshape(shape)
    out += shift.reshape(shape)
    return out


@library.custom_op("norm::batch_norm_backward", num_outputs=3)
def batch_norm_backward(xp, grad, input, weight, mean, invstd, *, training):
    """The gradients of ``norm::batch_norm`` for input, weight and bias (no autograd).

    Two arrays of the input's size are allocated (``x - mean`` and the result); the
    rest happens in place, with ``einsum`` for the per-channel sums of products.
    """
    g = _per_channel(grad)
    centered = _per_channel(input) - mean[:, None]
    count = _count(g)
    grad_bias = _channel_sum(g)
    grad_weight = xp.einsum("ncl,ncl->c", g, centered) * invstd
    scale = invstd if weight is None else invstd * weight
    grad_input = g * scale[:, None]
    if training:
        # scale * (g - grad_bias / M - xhat * grad_weight / M), with xhat = centered * invstd
        centered *= (scale * invstd * grad_weight / count)[:, None]
        centered += (scale * grad_bias / count)[:, None]
        grad_input -= centered
    return grad_input.reshape(input.shape), grad_weight, grad_bias


def _batch_norm_formula(ctx, grad):
    input, weight, bias, mean, invstd = ctx.saved_inputs
    training = ctx.attrs["training"]
    if grad_state.enabled:  # create_graph: differentiable ember ops
        grads = _composite_backward(grad, input, weight, mean, invstd, training, ctx.attrs["eps"])
    else:
        grads = batch_norm_backward(grad, input, weight, mean, invstd, training=training)
    needs = ctx.needs_input_grad
    return tuple(g if need else None for g, need in zip(grads, needs)) + (None, None)


def _composite_backward(grad, input, weight, mean, invstd, training, eps):
    """The backward formula in ember ops (NOTE at the top), for higher-order gradients."""
    dims = [0] + list(range(2, input.ndim))
    shape = [1, -1] + [1] * (input.ndim - 2)
    if training:  # mean and invstd depend on input: recompute them in the graph
        centered = input - input.mean(dims, keepdim=True)
        invstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    else:
        centered = input - mean.reshape(shape)
        invstd = invstd.reshape(shape)
    xhat = centered * invstd
    grad_bias = grad.sum(dims)
    grad_weight = (grad * xhat).sum(dims)
    scale = invstd if weight is None else invstd * weight.reshape(shape)
    if training:
        count = input.numel() // input.shape[1]
        inner = grad - grad_bias.reshape(shape) / count - xhat * (grad_weight.reshape(shape) / count)
        grad_input = scale * inner
    else:
        grad_input = grad * scale
    return grad_input, grad_weight, grad_bias


library.register_autograd(batch_norm, _batch_norm_formula)
batch_norm.backward_name = "NativeBatchNormBackward0"  # the grad_fn name torch prints for this layer
