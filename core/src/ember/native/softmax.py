"""``softmax``, ``log_softmax``, ``cumsum``, ``cumprod``: reductions that keep the shape.

PyTorch counterpart: aten/src/ATen/native/SoftMax.cpp, ReduceOps.cpp (cumsum,
cumprod) and derivatives.yaml (``_softmax_backward_data``,
``_log_softmax_backward_data``, ``cumprod_backward``) (v2.13).
"""

from ember import dtypes
from ember.autograd.forward_grad import AUTO_LINEAR
from ember.autograd.grad_mode import grad_state
from ember.dispatcher import DEFAULT, NONE, Op
from ember.native.reduction.reduction import contiguous_result
from ember.native.support.blas_sums import blas_dtype, row_sums
from ember.tensor import _wrap_dim


def _softmax_kernel(xp, a, dim):
    if a.ndim == 0:
        return xp.ones_like(a)
    if a.size == 0:
        return a.copy()
    # Subtract the max so exp cannot overflow; the temporaries are reused in place.
    e = a - xp.amax(a, axis=dim, keepdims=True)
    xp.exp(e, out=e)
    e /= xp.sum(e, axis=dim, keepdims=True)
    return e


def _softmax_backward(ctx, grad):
    # dx = y * (g - sum(g * y)): the Jacobian diag(y) - y y^T applied to g.
    (y,) = ctx.saved_outputs
    dim = ctx.attrs["dim"]
    if grad_state.enabled:  # create_graph: ember ops, differentiable again
        return (y * (grad - (grad * y).sum(dim, keepdim=True)),)
    return (SOFTMAX_BACKWARD(grad, y, dim=dim),)


# NOTE [ Fused softmax backwards ]
# Written with ember ops, each backward above is four ops (a product, a sum, a
# subtraction, a product): four dispatches and three temporaries. Without
# ``create_graph`` (the backward itself not recorded) each runs as one op instead,
# ``_softmax_backward_data`` and ``_log_softmax_backward_data`` as in PyTorch's
# derivatives.yaml: one new array, the rest in place. On (128, 10) logits the
# dispatches cost more than the arithmetic.


def _softmax_backward_data_kernel(xp, grad, output, dim):
    if output.ndim == 0:  # a single entry: its softmax is 1, whatever x is
        return output * (grad - grad * output)
    out = grad - (grad * output).sum(axis=dim, keepdims=True)
    out *= output
    return out


def _log_softmax_kernel(xp, a, dim):
    if a.ndim == 0:
        return xp.zeros_like(a)
    if a.size == 0:
        return a.copy()
    if _blas_rows(xp, a, dim):  # NOTE [ log_softmax over short rows ]
        shifted = a - _row_max(xp, a)[:, None]
        shifted -= xp.log(row_sums(xp, xp.exp(shifted)))[:, None]
        return shifted
    shifted = a - xp.amax(a, axis=dim, keepdims=True)
    shifted -= xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))
    return shifted


# NOTE [ log_softmax over short rows ]
# The composite cross-entropy nll_loss(log_softmax(x)) runs log_softmax on (N, C)
# logits every step. NumPy's reductions along a short last axis restart their inner
# loop for every row: on (128, 10) float32 logits the row max took about 9 us and
# sum(axis=1) 7 us, where the matrix-vector product x @ ones takes under 2 us
# (ember/native/support/blas_sums.py) and the max of a transposed copy, reduced across rows,
# about 5 us. So 2-d float32/float64 inputs over their last dim with rows of at most
# BLAS_ROW_LIMIT values take row sums by BLAS (for the forward's sum of exponentials
# and the backward's sum of the gradient), and rows of at most 32 values in batches
# of at least 64 take their max across a transposed copy. Longer rows keep NumPy's
# pairwise sums (BLAS accumulates in a few running sums).
BLAS_ROW_LIMIT = 4096


def _blas_rows(xp, a, dim):
    return a.ndim == 2 and dim == 1 and a.shape[1] <= BLAS_ROW_LIMIT and blas_dtype(xp, a)


def _row_max(xp, a):
    """The max of each row of a 2-d ``a``."""
    if a.shape[1] <= 32 and a.shape[0] >= 64:
        return xp.ascontiguousarray(a.T).max(axis=0)
    return a.max(axis=1)


def _log_softmax_backward(ctx, grad):
    # dx = g - softmax(x) * sum(g), with softmax(x) = exp(y).
    (y,) = ctx.saved_outputs
    dim = ctx.attrs["dim"]
    if grad_state.enabled:  # create_graph: ember ops, differentiable again
        return (grad - y.exp() * grad.sum(dim, keepdim=True),)
    return (LOG_SOFTMAX_BACKWARD(grad, y, dim=dim),)


def _log_softmax_backward_data_kernel(xp, grad, output, dim):
    if output.ndim == 0:
        return grad - xp.exp(output) * grad
    out = xp.exp(output)
    if _blas_rows(xp, grad, dim) and grad.dtype == output.dtype:
        out *= row_sums(xp, grad)[:, None]
    else:
        out *= grad.sum(axis=dim, keepdims=True)
    xp.subtract(grad, out, out=out)
    return out


# PyTorch's softmax and log_softmax allocate their output row-major, whatever the
# input's layout (they run on a contiguous copy of it).
def _softmax_jvp(ctx, tangent):
    # softmax's Jacobian diag(y) - y y^T is symmetric: its backward is its jvp
    return _softmax_backward(ctx, tangent)


def _log_softmax_jvp(ctx, tangent):
    # d log_softmax = t - sum(softmax(x) * t), with softmax(x) = exp(y)
    (y,) = ctx.saved_outputs
    dim = ctx.attrs["dim"]
    return tangent - (y.exp() * tangent).sum(dim, keepdim=True)


SOFTMAX = Op("aten::softmax", contiguous_result(_softmax_kernel), _softmax_backward, promote=DEFAULT,
             save="outputs", opmath=True, jvp=_softmax_jvp)
LOG_SOFTMAX = Op("aten::log_softmax", contiguous_result(_log_softmax_kernel), _log_softmax_backward,
                 promote=NONE, save="outputs", opmath=True, jvp=_log_softmax_jvp)
def _softmax_backward_data_backward(ctx, grad):
    # out = y * (g - s) with s = sum(g * y): linear in g (softmax's backward again),
    # and d out / d y = diag(g - s) - y g^T, so y's share is G * (g - s) - g * sum(G * y).
    g, y = ctx.saved_inputs
    dim = ctx.attrs["dim"]
    weighted = (grad * y).sum(dim, keepdim=True)
    return y * (grad - weighted), grad * (g - (g * y).sum(dim, keepdim=True)) - g * weighted


SOFTMAX_BACKWARD = Op("aten::_softmax_backward_data", _softmax_backward_data_kernel, _softmax_backward_data_backward,
                      promote=NONE, save="inputs", opmath=True)
LOG_SOFTMAX_BACKWARD = Op("aten::_log_softmax_backward_data", _log_softmax_backward_data_kernel, promote=NONE,
                          opmath=True)


def _prepare(input, dim, dtype, name):
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1  # PyTorch's legacy implicit choice
    dim = _wrap_dim(dim, input.ndim)
    if not input.dtype.is_floating_point and input.numel():  # PyTorch returns an empty input unchecked
        from ember.native.support._inplace import _type_name

        kernel = "lastdim_kernel_impl" if dim == max(input.ndim - 1, 0) else "kernel_impl"
        raise NotImplementedError(f"\"{name}_{kernel}\" not implemented for '{_type_name(input.dtype)}'")
    return input, dim


def softmax(input, dim=None, dtype=None):
    """``exp(x) / sum(exp(x), dim)``, computed after subtracting the max along ``dim``.

    Args:
        dim: the dim whose slices sum to 1.
        dtype: cast the input to this dtype first (e.g. to take the softmax of integers).

    >>> import ember
    >>> ember.tensor([1., 2., 3.]).softmax(0)
    tensor([0.0900, 0.2447, 0.6652])
    """
    input, dim = _prepare(input, dim, dtype, "softmax")
    return SOFTMAX(input, dim=dim)


def log_softmax(input, dim=None, dtype=None):
    """``x - logsumexp(x, dim)``: the log of :func:`softmax`, without its underflow.

    >>> import ember
    >>> ember.tensor([1., 2., 3.]).log_softmax(0)
    tensor([-2.4076, -1.4076, -0.4076])
    """
    input, dim = _prepare(input, dim, dtype, "log_softmax")
    return LOG_SOFTMAX(input, dim=dim)


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """The gradient of ``softmax`` given its ``output`` y: ``y * (g - sum(g * y, dim))``,
    itself differentiable. ``input_dtype`` names the softmax's input dtype; on the CPU
    PyTorch keeps the gradient's dtype whatever it says, and refuses only half with a
    gradient of another dtype.

    >>> import ember
    >>> y = ember.tensor([0.25, 0.75])
    >>> ember._softmax_backward_data(ember.tensor([1., 0.]), y, 0, ember.float32)
    tensor([ 0.1875, -0.1875])
    """
    from ember.native.support._inplace import _type_name

    found = output.dtype if output.dtype != grad_output.dtype else dtypes.to_dtype(input_dtype)
    if found != grad_output.dtype and (found is output.dtype or found is dtypes.float16):
        raise RuntimeError(f"expected scalar type {_type_name(grad_output.dtype)} but found {_type_name(found)}")
    return SOFTMAX_BACKWARD(grad_output, output, dim=_wrap_dim(dim, output.ndim))


def _cumsum_kernel(xp, a, dim, dtype=None):
    if a.ndim == 0:
        return a.astype(dtype) if dtype is not None else a.copy()
    return xp.cumsum(a, axis=dim, dtype=dtype)


def _cumsum_backward(ctx, grad):
    dim = ctx.attrs["dim"]
    if grad.ndim == 0:
        return (grad,)
    return (grad.flip(dim).cumsum(dim).flip(dim),)


CUMSUM = Op("aten::cumsum", contiguous_result(_cumsum_kernel), _cumsum_backward, promote=DEFAULT, opmath=True,
            jvp=AUTO_LINEAR)


def cumsum(input, dim, *, dtype=None):
    """Running sum along ``dim``: ``out[i] = input[0] + ... + input[i]``; integers
    and bool accumulate in int64.

    >>> import ember
    >>> ember.tensor([1, 2, 3]).cumsum(0)
    tensor([1, 3, 6])
    """
    dim = _wrap_dim(dim, input.ndim)
    accumulate = _cumulative_dtype(input, dtype)
    if accumulate is None:
        return CUMSUM(input, dim=dim)
    return CUMSUM(input, dim=dim, dtype=accumulate)


def _cumprod_kernel(xp, a, dim, dtype=None):
    if a.ndim == 0:
        return a.astype(dtype) if dtype is not None else a.copy()
    return xp.cumprod(a, axis=dim, dtype=dtype)


def exclusive_cumprod(input, dim):
    """``out[i] = prod(input[:i])`` along ``dim`` (1 at the start), without division,
    so exact with zeros. Used by the backward of ``prod`` and ``cumprod``."""
    size = input.shape[dim]
    if size == 0:
        return input
    from ember.native.factory import ones
    from ember.native.shape.shape import cat

    one_shape = list(input.shape)
    one_shape[dim] = 1
    start = ones(one_shape, dtype=input.dtype, device=input.device)
    return cat([start, input.narrow(dim, 0, size - 1)], dim).cumprod(dim)


def _reverse_cumsum(t, dim):
    return t.flip(dim).cumsum(dim).flip(dim)


def _cumprod_backward(ctx, grad):
    # NOTE [ cumprod backward with zeros ]
    # d y_j / d x_i = prod_{k <= j, k != i} x_k for j >= i. Let z be the first zero
    # along the line. For i < z the usual formula sum_{j >= i} g_j y_j / x_i is exact
    # (x_i != 0, and y_j = 0 for j >= z adds nothing). For i > z every term holds
    # the factor x_z = 0. For i == z the gradient is
    #     prod(x[:z]) * sum_{j >= z} g_j * prod(x[z+1 : j+1]),
    # a running product of the elements after z, computed with a second cumprod.
    from ember.native.indexing.indexing import where

    (x,) = ctx.saved_inputs
    (y,) = ctx.saved_outputs
    dim = ctx.attrs["dim"]
    if x.ndim == 0 or x.numel() == 0:
        return (grad,)
    is_zero = x == 0
    if grad_state.enabled and bool(is_zero.any()):  # create_graph: see the function below
        return (_cumprod_backward_twice_differentiable(x, grad, dim),)
    zeros_so_far = is_zero.cumsum(dim)
    before_first_zero = zeros_so_far == 0
    first_zero = is_zero & (zeros_so_far == 1)
    after_first_zero = zeros_so_far > first_zero.long()  # strictly after z
    safe_x = where(before_first_zero, x, 1.0)
    grad_input = where(before_first_zero, _reverse_cumsum(grad * y, dim) / safe_x, 0.0)
    tail_products = where(after_first_zero, x, 1.0).cumprod(dim)
    tail_sum = (grad * tail_products * (zeros_so_far > 0)).sum(dim, keepdim=True)
    at_first_zero = exclusive_cumprod(x, dim) * tail_sum
    return (grad_input + where(first_zero, at_first_zero, 0.0),)


def _cumprod_backward_twice_differentiable(x, grad, dim):
    # The formula above sets the gradient after the first zero to a constant 0, so its
    # own derivative misses that those entries are multiples of that zero. Under
    # create_graph with zeros PyTorch computes, per position k, the products with x_k
    # left out, prod(x[:k]) * prod(x[k+1 : j+1]) for j >= k, with no division and no
    # masking: O(n^2) work, but the second derivative is exact.
    from ember.native.shape.shape import cat

    n = x.shape[dim]
    columns = []
    for k in range(n):
        before = x.narrow(dim, 0, k).prod(dim, keepdim=True)  # 1 for k == 0
        after = x.narrow(dim, k + 1, n - k - 1).cumprod(dim)
        omitted = cat([before, before * after], dim)
        columns.append((grad.narrow(dim, k, n - k) * omitted).sum(dim, keepdim=True))
    return cat(columns, dim)


CUMPROD = Op("aten::cumprod", contiguous_result(_cumprod_kernel), _cumprod_backward, promote=DEFAULT, save="both",
             opmath=True)


def _cumulative_dtype(input, dtype):
    # As for sum: an explicit dtype, else int64 for integers and bool.
    if dtype is not None:
        from ember.native.reduction.reduction import check_differentiable_dtype

        check_differentiable_dtype(input, dtypes.to_dtype(dtype))
        return dtypes.to_dtype(dtype).np
    if input.dtype.category < dtypes.FLOATING:
        return dtypes.int64.np
    return None


def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim``: ``out[i] = input[0] * ... * input[i]``;
    integers and bool multiply in int64. The gradient is exact with zeros.

    >>> import ember
    >>> ember.tensor([1., 2., 3., 0.]).cumprod(0)
    tensor([1., 2., 6., 0.])
    """
    dim = _wrap_dim(dim, input.ndim)
    accumulate = _cumulative_dtype(input, dtype)
    if accumulate is None:
        return CUMPROD(input, dim=dim)
    return CUMPROD(input, dim=dim, dtype=accumulate)
