"""Group normalization as a fused operator with its backward; the statistics come from
``norm::layer_norm_stats`` over the (N, G, C/G * spatial) view.

PyTorch counterpart: aten/src/ATen/native/group_norm.cpp and
cpu/group_norm_kernel.cpp (``GroupNormKernelImpl``, ``GroupNormBackwardKernelImpl``) (v2.13).

    norm::group_norm(input, weight, bias, mean, rstd, *, num_groups, eps) -> output
    norm::group_norm_backward(grad, input, weight, mean, rstd, *, num_groups) -> (gi, gw, gb)

With ``mean`` and ``rstd`` per (sample, group), ``xhat = (x - mean) * rstd``, the
per-channel affine ``y = xhat * weight[c] + bias[c]`` folds into one scale and shift
per (sample, channel): ``y = x * scale + shift``. Backward, with ``h = g * weight[c]``
and means over the D = C/G * spatial values of a group:

    grad_input  = rstd * (h - mean(h) - xhat * mean(h * xhat))
    grad_weight = sum over samples and positions of g * xhat
    grad_bias   = sum over samples and positions of g

The fused kernel writes grad_input as ``g * a + x * b + c`` with coefficients per
(sample, channel) or (sample, group), from two sums per (sample, channel): of g and
of g * x. Composed of the layer-norm op and a per-channel multiply and add, group_norm
ran about 2x slower forward and backward (32x64x16x16, 8 groups, float32, measured).
"""

from ember import library
from ember.autograd.grad_mode import grad_state
from ember.native.support.blas_sums import row_dots, row_sums
from ember_norm.ops.batch_norm import _per_channel


def _group_shaped(array, num_groups):
    """(N, G) statistics, with any trailing 1s, as (N, G, 1)."""
    return array.reshape(array.shape[0], num_groups, 1)


def _scale_and_shift(xp, weight, bias, mean, rstd, num_groups, channels):
    """Per (sample, channel) ``scale`` and ``shift`` with ``y = x * scale + shift``."""
    n, per_group = mean.shape[0], channels // num_groups
    rstd3, mean3 = _group_shaped(rstd, num_groups), _group_shaped(mean, num_groups)
    if weight is None:
        scale = xp.broadcast_to(rstd3, (n, num_groups, per_group))
    else:
        scale = rstd3 * weight.reshape(1, num_groups, per_group)
    shift = -mean3 * scale
    if bias is not None:
        shift += bias.reshape(1, num_groups, per_group)
    return scale.reshape(n, channels), shift.reshape(n, channels)


@library.custom_op("norm::group_norm", save="inputs", opmath=True)
def group_norm(xp, input, weight, bias, mean, rstd, *, num_groups, eps):
    """Normalize each group of channels of each sample with ``mean`` and ``rstd`` (shaped
    (N, G, 1), from ``norm::layer_norm_stats`` over the (N, G, -1) view), then apply the
    per-channel ``weight`` and ``bias`` (either may be None).

    >>> import ember
    >>> x = ember.tensor([[[1.0], [3.0]]])
    >>> mean, rstd = ember.ops.norm.layer_norm_stats(x.reshape(1, 1, 2), normalized_ndim=1, eps=0.0)
    >>> ember.ops.norm.group_norm(x, None, None, mean, rstd, num_groups=1, eps=0.0)
    tensor([[[-1.],
             [ 1.]]])
    """
    x = _per_channel(input)
    scale, shift = _scale_and_shift(xp, weight, bias, mean, rstd, num_groups, x.shape[1])
    out = x * scale[:, :, None]
    out += shift[:, :, None]
    return out.reshape(input.shape)


@library.custom_op("norm::group_norm_backward", num_outputs=3, opmath=True)
def group_norm_backward(xp, grad, input, weight, mean, rstd, *, num_groups):
    """The gradients of ``norm::group_norm`` for input, weight and bias (no autograd)."""
    x, g = _per_channel(input), _per_channel(grad)
    n, channels, length = x.shape
    per_group = channels // num_groups
    values = max(per_group * length, 1)  # D, the values of one group of one sample
    rstd3, mean3 = _group_shaped(rstd, num_groups), _group_shaped(mean, num_groups)
    # Two sums per (sample, channel) row, as BLAS products (NOTE [ Norm reductions as
    # matrix-vector products ]): of g, and of g * x.
    g_rows, x_rows = g.reshape(n * channels, length), x.reshape(n * channels, length)
    sum_g = row_sums(xp, g_rows).reshape(n, num_groups, per_group)
    sum_gx = row_dots(xp, g_rows, x_rows).reshape(n, num_groups, per_group)
    sum_g_xhat = (sum_gx - mean3 * sum_g) * rstd3  # per (sample, channel): sum of g * xhat
    grad_bias = sum_g.reshape(n, channels).sum(axis=0)
    grad_weight = sum_g_xhat.reshape(n, channels).sum(axis=0)
    w3 = 1.0 if weight is None else weight.reshape(1, num_groups, per_group)
    mean_h = (w3 * sum_g).sum(axis=2, keepdims=True) / values
    mean_h_xhat = (w3 * sum_g_xhat).sum(axis=2, keepdims=True) / values
    # rstd * (h - mean_h - (x - mean) * rstd * mean_h_xhat) = g * a + x * b + c, with
    # a per (sample, channel) and b, c per (sample, group): x * b + c runs over rows of a
    # whole group (longer rows, fewer broadcasts), then g * a is added.
    a = xp.broadcast_to(rstd3 * w3, (n, num_groups, per_group)).reshape(n, channels, 1)
    b = -rstd3 * rstd3 * mean_h_xhat
    c = mean3 * rstd3 * rstd3 * mean_h_xhat - rstd3 * mean_h
    grad_input = x.reshape(n, num_groups, per_group * length) * b
    grad_input += c
    grad_input = grad_input.reshape(n, channels, length)
    grad_input += g * a
    return grad_input.reshape(input.shape), grad_weight, grad_bias


def _group_norm_formula(ctx, grad):
    input, weight, bias, mean, rstd = ctx.saved_inputs
    num_groups = ctx.attrs["num_groups"]
    if grad_state.enabled:  # create_graph: differentiable ember ops
        grads = _composite_backward(grad, input, weight, num_groups, ctx.attrs["eps"])
    else:
        grads = group_norm_backward(grad, input, weight, mean, rstd, num_groups=num_groups)
    return tuple(g if need else None for g, need in zip(grads, ctx.needs_input_grad[:3])) + (None, None)


def _composite_backward(grad, input, weight, num_groups, eps):
    """The backward formula in ember ops, with mean and rstd recomputed in the graph."""
    n, channels = input.shape[0], input.shape[1]
    groups_view = (n, num_groups, input.numel() // max(n * num_groups, 1))
    channel_shape = (channels,) + (1,) * (input.ndim - 2)
    reduce_dims = [0] + list(range(2, input.ndim))
    rows = input.reshape(groups_view)
    centered = rows - rows.mean(-1, keepdim=True)
    rstd = ((centered * centered).mean(-1, keepdim=True) + eps).rsqrt()
    xhat = (centered * rstd).reshape(input.shape)
    grad_bias = grad.sum(reduce_dims)
    grad_weight = (grad * xhat).sum(reduce_dims)
    h = (grad if weight is None else grad * weight.reshape(channel_shape)).reshape(groups_view)
    xhat_rows = xhat.reshape(groups_view)
    inner = h - h.mean(-1, keepdim=True) - xhat_rows * (h * xhat_rows).mean(-1, keepdim=True)
    return (rstd * inner).reshape(input.shape), grad_weight, grad_bias


library.register_autograd(group_norm, _group_norm_formula)
group_norm.backward_name = "NativeGroupNormBackward0"  # the grad_fn name torch prints for this layer
