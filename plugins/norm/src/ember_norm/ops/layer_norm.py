"""Layer normalization as fused operators: statistics, normalization, backward.

PyTorch counterpart: aten/src/ATen/native/layer_norm.cpp and cpu/layer_norm_kernel.cpp
(``LayerNormKernelImpl``, ``LayerNormBackwardKernelImpl``) (v2.13).

    norm::layer_norm_stats(input, *, normalized_ndim, eps) -> (mean, rstd)
    norm::layer_norm(input, weight, bias, mean, rstd, *, normalized_ndim, eps) -> output
    norm::layer_norm_backward(grad, input, weight, mean, rstd, *, normalized_ndim) -> (gi, gw, gb)

``mean`` and ``rstd`` have the input's shape with the last ``normalized_ndim`` sizes set
to 1, like torch's ``native_layer_norm``. The split into a statistics op and a
normalization op that saves only its inputs follows NOTE [ Why batch norm is two ops,
not one with three outputs ] in batch_norm.py.

Backward, over the D normalized values of each row, ``xhat = (x - mean) * rstd`` and
``h = g * weight``:

    grad_input  = rstd * (h - mean(h) - xhat * mean(h * xhat))
    grad_weight = sum over rows of g * xhat
    grad_bias   = sum over rows of g
"""

from ember import library
from ember.autograd.grad_mode import grad_state


def _rows(array, normalized_numel):
    """View the input as (rows, normalized values); an empty input keeps its row count."""
    rows = 1
    for size in array.shape:
        rows *= size
    rows = rows // normalized_numel if normalized_numel else 0
    return array.reshape(rows, normalized_numel)


@library.custom_op("norm::layer_norm_stats", num_outputs=2)
def layer_norm_stats(xp, input, *, normalized_ndim, eps):
    """Mean and ``1 / sqrt(var + eps)`` (biased variance) over the last ``normalized_ndim`` dims.

    >>> import ember
    >>> ember.ops.norm.layer_norm_stats(ember.tensor([[1.0, 3.0]]), normalized_ndim=1, eps=0.0)
    (tensor([[2.]]), tensor([[1.]]))
    """
    kept = input.shape[:input.ndim - normalized_ndim]
    stats_shape = kept + (1,) * normalized_ndim
    numel = 1
    for size in input.shape[input.ndim - normalized_ndim:]:
        numel *= size
    rows = _rows(input, numel)
    mean = rows.sum(axis=1) / numel
    centered = rows - mean[:, None]  # two passes (mean, then squares) for accuracy
    rstd = 1.0 / xp.sqrt(xp.einsum("bd,bd->b", centered, centered) / numel + eps)
    return mean.reshape(stats_shape), rstd.reshape(stats_shape)


@library.custom_op("norm::layer_norm", save="inputs")
def layer_norm(xp, input, weight, bias, mean, rstd, *, normalized_ndim, eps):
    """``(input - mean) * rstd * weight + bias``; weight and bias have the normalized
    shape and may be None; mean and rstd come from ``norm::layer_norm_stats``.

    >>> import ember
    >>> x = ember.tensor([[1.0, 3.0]])
    >>> ember.ops.norm.layer_norm(x, None, None, *ember.ops.norm.layer_norm_stats(x, normalized_ndim=1,
    ...                           eps=0.0), normalized_ndim=1, eps=0.0)
    tensor([[-1.,  1.]])
    """
    out = input - mean
    out *= rstd
    if weight is not None:
        out *= weight
    if bias is not None:
        out += bias
    return out


@library.custom_op("norm::layer_norm_backward", num_outputs=3)
def layer_norm_backward(xp, grad, input, weight, mean, rstd, *, normalized_ndim):
    """The gradients of ``norm::layer_norm`` for input, weight and bias (no autograd)."""
    normalized_shape = input.shape[input.ndim - normalized_ndim:]
    numel = 1
    for size in normalized_shape:
        numel *= size
    g = _rows(grad, numel)
    xhat = _rows(input, numel) - mean.reshape(-1, 1)
    r = rstd.reshape(-1, 1)
    xhat *= r
    grad_bias = g.sum(axis=0).reshape(normalized_shape)
    grad_weight = xp.einsum("bd,bd->d", g, xhat).reshape(normalized_shape)
    # h = g * weight becomes grad_input in place: two arrays of the input's size in all.
    h = g * weight.reshape(1, -1) if weight is not None else g.copy()
    mean_h = h.sum(axis=1, keepdims=True) / numel
    mean_hx = xp.einsum("bd,bd->b", h, xhat)[:, None] / numel
    xhat *= mean_hx
    h -= xhat
    h -= mean_h
    h *= r
    return h.reshape(input.shape), grad_weight, grad_bias


def _layer_norm_formula(ctx, grad):
    input, weight, bias, mean, rstd = ctx.saved_inputs
    if grad_state.enabled:  # create_graph: differentiable ember ops
        grads = _composite_backward(grad, input, weight, ctx.attrs["normalized_ndim"], ctx.attrs["eps"])
    else:
        grads = layer_norm_backward(grad, input, weight, mean, rstd, normalized_ndim=ctx.attrs["normalized_ndim"])
    needs = ctx.needs_input_grad
    return tuple(g if need else None for g, need in zip(grads, needs)) + (None, None)


def _composite_backward(grad, input, weight, normalized_ndim, eps):
    """The backward formula in ember ops, with mean and rstd recomputed in the graph."""
    dims = list(range(input.ndim - normalized_ndim, input.ndim))
    batch_dims = list(range(input.ndim - normalized_ndim))
    centered = input - input.mean(dims, keepdim=True)
    rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = centered * rstd
    grad_bias = grad.sum(batch_dims) if batch_dims else grad
    grad_weight = (grad * xhat).sum(batch_dims) if batch_dims else grad * xhat
    h = grad if weight is None else grad * weight
    inner = h - h.mean(dims, keepdim=True) - xhat * (h * xhat).mean(dims, keepdim=True)
    return rstd * inner, grad_weight, grad_bias


library.register_autograd(layer_norm, _layer_norm_formula)
layer_norm.backward_name = "NativeLayerNormBackward0"  # the grad_fn name torch prints for this layer
