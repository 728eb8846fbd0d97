"""``softmax``, ``log_softmax``, ``cumsum``, ``cumprod``: reductions that keep the shape.

PyTorch counterpart: aten/src/ATen/native/SoftMax.cpp, ReduceOps.cpp (cumsum,
cumprod) and derivatives.yaml (``_softmax_backward_data``,
``_log_softmax_backward_data``, ``cumprod_backward``) (v2.13).
"""

from ember import dtypes
from ember.dispatcher import NONE, Op
from ember.tensor import _wrap_dim


def _softmax_kernel(xp, a, dim):
    if a.ndim == 0:
        return xp.ones_like(a)
    shifted = a - xp.amax(a, axis=dim, keepdims=True) if a.size else a
    e = xp.exp(shifted)
    return e / xp.sum(e, axis=dim, keepdims=True)


def _softmax_backward(ctx, grad):
    (y,) = ctx.saved_outputs
    dim = ctx.attrs["dim"]
    return (y * (grad - (grad * y).sum(dim, keepdim=True)),)


def _log_softmax_kernel(xp, a, dim):
    if a.ndim == 0:
        return xp.zeros_like(a)
    if a.size == 0:
        return a.copy()
    shifted = a - xp.amax(a, axis=dim, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))


def _log_softmax_backward(ctx, grad):
    (y,) = ctx.saved_outputs
    dim = ctx.attrs["dim"]
    return (grad - y.exp() * grad.sum(dim, keepdim=True),)


SOFTMAX = Op("aten::softmax", _softmax_kernel, _softmax_backward, promote=NONE, save="outputs")
LOG_SOFTMAX = Op("aten::log_softmax", _log_softmax_kernel, _log_softmax_backward, promote=NONE, save="outputs")


def _prepare(input, dim, dtype, name):
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}_lastdim_kernel_impl\" not implemented for '{input.dtype.name.capitalize()}'")
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1  # PyTorch's legacy implicit choice
    return input, _wrap_dim(dim, input.ndim)


def softmax(input, dim=None, dtype=None):
    """``exp(x) / sum(exp(x), dim)``, computed after subtracting the max."""
    input, dim = _prepare(input, dim, dtype, "softmax")
    return SOFTMAX(input, dim=dim)


def log_softmax(input, dim=None, dtype=None):
    """``x - logsumexp(x, dim)``."""
    input, dim = _prepare(input, dim, dtype, "log_softmax")
    return LOG_SOFTMAX(input, dim=dim)


def _cumsum_kernel(xp, a, dim, dtype=None):
    if dtype is not None:
        a = a.astype(dtype.np)
    elif a.dtype.kind in "iub":
        a = a.astype("int64")
    return xp.cumsum(a, axis=dim) if a.ndim else a.copy()


def _cumsum_backward(ctx, grad):
    dim = ctx.attrs["dim"]
    if grad.ndim == 0:
        return (grad,)
    return (grad.flip(dim).cumsum(dim).flip(dim),)


CUMSUM = Op("aten::cumsum", _cumsum_kernel, _cumsum_backward, promote=NONE)


def cumsum(input, dim, *, dtype=None):
    """Running sum along ``dim``; integers accumulate in int64."""
    dim = _wrap_dim(dim, input.ndim)
    if dtype is None:
        return CUMSUM(input, dim=dim)
    return CUMSUM(input, dim=dim, dtype=dtypes.to_dtype(dtype))


def _cumprod_kernel(xp, a, dim, dtype=None):
    if dtype is not None:
        a = a.astype(dtype.np)
    elif a.dtype.kind in "iub":
        a = a.astype("int64")
    return xp.cumprod(a, axis=dim) if a.ndim else a.copy()


def _cumprod_backward(ctx, grad):
    # d out_j / d x_i = out_j / x_i for j >= i: the reverse cumulative sum of
    # grad * out, divided by x. Exact where x has no zeros; PyTorch's zero-aware
    # formula is left out.
    (x,) = ctx.saved_inputs
    (y,) = ctx.saved_outputs
    dim = ctx.attrs["dim"]
    if x.ndim == 0:
        return (grad,)
    return ((grad * y).flip(dim).cumsum(dim).flip(dim) / x,)


CUMPROD = Op("aten::cumprod", _cumprod_kernel, _cumprod_backward, promote=NONE, save="both")


def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim``."""
    dim = _wrap_dim(dim, input.ndim)
    if dtype is None:
        return CUMPROD(input, dim=dim)
    return CUMPROD(input, dim=dim, dtype=dtypes.to_dtype(dtype))
