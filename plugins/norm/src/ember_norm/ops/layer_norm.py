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
from ember.autograd.forward_grad import Decomposition
from ember.autograd.grad_mode import grad_state
from ember.native.support.blas_sums import blas_dtype, column_sums, row_dots, row_sums

# Rows longer than this are summed with NumPy's pairwise sum, and their variance in two
# passes: BLAS's few running sums lose accuracy over very long rows.
BLAS_ROW_LIMIT = 8192


def _rows(array, normalized_ndim):
    """View the input as (rows, normalized values); an empty input keeps its row count,
    also when the normalized values are the empty ones."""
    rows = 1
    for size in array.shape[:array.ndim - normalized_ndim]:
        rows *= size
    return array.reshape(rows, _normalized_numel(array, normalized_ndim))


def _normalized_numel(input, normalized_ndim):
    numel = 1
    for size in input.shape[input.ndim - normalized_ndim:]:
        numel *= size
    return numel


# NOTE [ Layer norm statistics in one pass, checked ]
# The variance is E[x^2] - mean^2 from two BLAS reductions over the input (a row sum
# and a row dot product), with no centered copy of the input formed. That difference
# cancels when |mean| is large against the standard deviation: its relative error
# grows like (1 + mean^2 / var) times the sums' rounding. Rows where mean^2 >= var are
# recomputed in two passes (mean, then the sum of squared deviations), so the one-pass
# formula is used only where its error stays within twice the sums' own (float32:
# about 1e-7 relative, as torch's Welford). Typical activations (|mean| < std) never
# take the second pass.


@library.custom_op("norm::layer_norm_stats", num_outputs=2, opmath="unrounded")
def layer_norm_stats(xp, input, *, normalized_ndim, eps):
    """Mean and ``1 / sqrt(var + eps)`` (biased variance) over the last ``normalized_ndim`` dims.

    >>> import ember
    >>> ember.ops.norm.layer_norm_stats(ember.tensor([[1.0, 3.0]]), normalized_ndim=1, eps=0.0)
    (tensor([[2.]]), tensor([[1.]]))
    """
    kept = input.shape[:input.ndim - normalized_ndim]
    stats_shape = kept + (1,) * normalized_ndim
    numel = _normalized_numel(input, normalized_ndim)
    if numel == 0:  # rows of no values: mean 0 and rstd NaN, as torch gives
        return xp.zeros(stats_shape, dtype=input.dtype), xp.full(stats_shape, xp.nan, dtype=input.dtype)
    rows = _rows(input, normalized_ndim)
    if numel <= BLAS_ROW_LIMIT and blas_dtype(xp, rows):
        mean = row_sums(xp, rows) / numel
        var = row_dots(xp, rows, rows) / numel
        var -= mean * mean
        cancelling = xp.nonzero(mean * mean >= var)[0]  # NOTE above
        if cancelling.size:
            var[cancelling] = _two_pass_var(xp, rows[cancelling], mean[cancelling])
    else:
        mean = rows.sum(axis=1) / numel
        var = _two_pass_var(xp, rows, mean)
    var += eps
    rstd = xp.sqrt(var, out=var)
    xp.reciprocal(rstd, out=rstd)
    return mean.reshape(stats_shape), rstd.reshape(stats_shape)


def _two_pass_var(xp, rows, mean):
    centered = rows - mean[:, None]
    return row_dots(xp, centered, centered) / rows.shape[1]


@library.custom_op("norm::layer_norm", save="inputs", opmath=True)
def layer_norm(xp, input, weight, bias, mean, rstd, *, normalized_ndim, eps):
    """``(input - mean) * rstd * weight + bias``; weight and bias have the normalized
    shape and may be None; mean and rstd come from ``norm::layer_norm_stats``.

    >>> import ember
    >>> x = ember.tensor([[1.0, 3.0]])
    >>> ember.ops.norm.layer_norm(x, None, None, *ember.ops.norm.layer_norm_stats(x, normalized_ndim=1,
    ...                           eps=0.0), normalized_ndim=1, eps=0.0)
    tensor([[-1.,  1.]])
    """
    # One new array and three passes in place on it: NOTE [ Layer norm passes ]. As torch's
    # kernel, x * rstd - mean * rstd rather than (x - mean) * rstd: in float32 the two
    # differ in the last bit, which a bfloat16 result can show.
    rstd = rstd.reshape(-1, 1)
    out = _rows(input, normalized_ndim) * rstd
    out -= mean.reshape(-1, 1) * rstd
    if weight is not None:
        out *= weight.reshape(-1)
    if bias is not None:
        out += bias.reshape(-1)
    return out.reshape(input.shape)


@library.custom_op("norm::layer_norm_backward", num_outputs=3, opmath=True)
def layer_norm_backward(xp, grad, input, weight, mean, rstd, *, normalized_ndim):
    """The gradients of ``norm::layer_norm`` for input, weight and bias (no
    autograd)."""
    normalized_shape = input.shape[input.ndim - normalized_ndim:]
    numel = _normalized_numel(input, normalized_ndim)
    g = _rows(grad, normalized_ndim)
    r = rstd.reshape(-1)
    centered = _rows(input, normalized_ndim) - mean.reshape(-1, 1)
    # NOTE [ Layer norm passes ]
    # With c = x - mean, xhat = c * rstd and w the weight (or ones), the sums are BLAS
    # products (NOTE [ Norm reductions as matrix-vector products ]):
    #   grad_weight = rstd @ (g * c)   grad_bias = ones @ g
    #   k1 = (g * c) @ w = sum(h * c)  k2 = g @ w = sum(h)      (h = g * w, per row)
    # and  grad_input = rstd * (h - k2 / D - c * rstd^2 * k1 / D). Two new arrays
    # (c, then g * c, whose buffer becomes grad_input) and five passes besides; the
    # forward's output is never needed, so the op saves only its inputs.
    w = weight.reshape(-1) if weight is not None else None
    gc = g * centered
    grad_weight = column_sums(xp, gc, r).reshape(normalized_shape)
    grad_bias = column_sums(xp, g).reshape(normalized_shape)
    k1 = row_sums(xp, gc, w)
    k2 = row_sums(xp, g, w)
    out = gc
    if w is not None:
        xp.multiply(g, w, out=out)
        out -= (k2 / numel)[:, None]
    else:
        xp.subtract(g, (k2 / numel)[:, None], out=out)
    k1 *= r * r / numel
    centered *= k1[:, None]
    out -= centered
    out *= r[:, None]
    return out.reshape(input.shape), grad_weight, grad_bias


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


def _layer_norm_composite(input, weight, bias, mean, rstd, *, normalized_ndim, eps):
    # the statistics recomputed from the input, so the tangent goes through them too
    dims = tuple(range(input.ndim - normalized_ndim, input.ndim))
    centered = input - input.mean(dims, keepdim=True)
    out = centered * (centered.square().mean(dims, keepdim=True) + eps).rsqrt()
    out = out if weight is None else out * weight
    return out if bias is None else out + bias


# forward AD runs the composite on the dual inputs (torch's decompositions_for_jvp does so too)
library.register_jvp(layer_norm, Decomposition(_layer_norm_composite))
layer_norm.backward_name = "NativeLayerNormBackward0"  # the grad_fn name torch prints for this layer
