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
    # BLAS sums sequentially: for long rows NumPy's pairwise sum keeps the mean as accurate as torch's.
    mean = (_row_sums(xp, rows) if numel <= 8192 else rows.sum(axis=1)) / numel
    centered = rows - mean[:, None]  # two passes (mean, then squares) for accuracy
    rstd = xp.einsum("bd,bd->b", centered, centered)
    rstd /= numel
    rstd += eps
    xp.sqrt(rstd, out=rstd)
    xp.reciprocal(rstd, out=rstd)
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
    r = rstd.reshape(-1, 1)
    xhat = _rows(input, numel) - mean.reshape(-1, 1)
    xhat *= r
    # NOTE [ Layer norm backward in row and column sums ]
    # With w the weight (or ones), mean(h) = g @ w / D and mean(h * xhat) = (g * xhat) @ w / D,
    # and the column sums are ones @ g and ones @ (g * xhat): every reduction is a
    # matrix-vector product (BLAS, several times faster than NumPy's reductions here), and
    # g * xhat is the only product formed before grad_input, which then reuses its buffer.
    # (Folding xhat into x * k1 + k2 would save a pass but cancels badly when |mean| >> std.)
    w = weight.reshape(-1) if weight is not None else None
    gx = g * xhat
    grad_weight = _column_sums(xp, gx).reshape(normalized_shape)
    grad_bias = _column_sums(xp, g).reshape(normalized_shape)
    mean_hx = _row_sums(xp, gx, w)
    mean_hx /= numel
    mean_h = _row_sums(xp, g, w)
    mean_h /= numel
    out = gx
    if w is not None:
        xp.multiply(g, w, out=out)
    else:
        out[...] = g
    xhat *= mean_hx[:, None]
    xhat += mean_h[:, None]
    out -= xhat
    out *= r
    return out.reshape(input.shape), grad_weight, grad_bias


def _blas(xp, a):
    return a.dtype == xp.float32 or a.dtype == xp.float64


def _row_sums(xp, a, weights=None):
    """``(a * weights).sum(axis=1)`` for a 2-d ``a``: a matrix-vector product where BLAS has
    the dtype (faster than NumPy's row reduction)."""
    if not _blas(xp, a):
        return (a if weights is None else a * weights).sum(axis=1)
    if weights is None:
        weights = xp.ones(a.shape[1], dtype=a.dtype)
    return a @ weights


def _column_sums(xp, a):
    """``a.sum(axis=0)`` for a 2-d ``a``, through BLAS where it can."""
    if not _blas(xp, a):
        return a.sum(axis=0)
    return xp.ones(a.shape[0], dtype=a.dtype) @ a


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
