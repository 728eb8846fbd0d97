"""Reductions: ``sum mean prod var std amax amin max min argmax argmin all any
logsumexp norm count_nonzero`` and ``sum_to_size``.

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp, TensorCompare.cpp (max/min
with indices), LinearAlgebra.cpp (norm) and their derivatives.yaml entries (v2.13).

``dim`` may be None (every dimension), an int or a sequence of ints; negative dims
count from the end. Integer and bool sums accumulate in int64, as in PyTorch.
"""

import builtins
import collections

from ember import dtypes
from ember.dispatcher import NONE, Op
from ember.tensor import _wrap_dim

return_types_max = collections.namedtuple("max", ["values", "indices"])
return_types_min = collections.namedtuple("min", ["values", "indices"])


def reduction_dims(dim, ndim):
    """Normalise ``dim`` to a sorted tuple of non-negative dims (all dims for None)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        return (_wrap_dim(dim, ndim),) if ndim else ()
    dims = tuple(_wrap_dim(d, ndim) for d in dim) if ndim else ()
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims} appears multiple times in the list of dims")
    return tuple(sorted(dims)) if dims or dim is None else tuple(range(ndim))


def _axis(dims, ndim):
    return None if ndim == 0 else dims


def expand_reduced(grad, input_shape, dims, keepdim):
    """Broadcast a reduced gradient back to ``input_shape``."""
    if not keepdim:
        for d in dims:
            grad = grad.unsqueeze(d)
    return grad.expand(input_shape)


# --- sum, mean ------------------------------------------------------------------


def _sum_kernel(xp, a, dims, keepdim, dtype=None):
    if dtype is not None:
        a = a.astype(dtype.np)
    elif a.dtype.kind in "iub":
        a = a.astype("int64")
    return xp.sum(a, axis=_axis(dims, a.ndim), keepdims=keepdim)


def _sum_backward(ctx, grad):
    (meta,) = ctx.input_meta
    return (expand_reduced(grad, meta[0], ctx.attrs["dims"], ctx.attrs["keepdim"]),)


SUM = Op("aten::sum", _sum_kernel, _sum_backward, promote=NONE)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (all elements by default).

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]]).sum(dim=0)
    tensor([4, 6])
    """
    dims = reduction_dims(dim, input.ndim)
    if dtype is None:
        return SUM(input, dims=dims, keepdim=keepdim)
    return SUM(input, dims=dims, keepdim=keepdim, dtype=dtypes.to_dtype(dtype))


def _mean_kernel(xp, a, dims, keepdim, dtype=None):
    if dtype is not None:
        a = a.astype(dtype.np)
    axis = _axis(dims, a.ndim)
    count = 1
    for d in (dims if axis is not None else ()):
        count *= a.shape[d]
    if count == 0 or a.size == 0:
        return xp.sum(a, axis=axis, keepdims=keepdim) * float("nan")
    return xp.mean(a, axis=axis, keepdims=keepdim, dtype=a.dtype)


def _mean_backward(ctx, grad):
    (meta,) = ctx.input_meta
    shape, dims = meta[0], ctx.attrs["dims"]
    count = 1
    for d in dims:
        count *= shape[d]
    return (expand_reduced(grad, shape, dims, ctx.attrs["keepdim"]) / builtins.max(count, 1),)


MEAN = Op("aten::mean", _mean_kernel, _mean_backward, promote=NONE)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean over ``dim``; floating dtypes only, as in PyTorch."""
    result_dtype = input.dtype if dtype is None else dtypes.to_dtype(dtype)
    if not result_dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {_legacy(input.dtype)}")
    dims = reduction_dims(dim, input.ndim)
    if dtype is None:
        return MEAN(input, dims=dims, keepdim=keepdim)
    return MEAN(input, dims=dims, keepdim=keepdim, dtype=result_dtype)


def _legacy(d):
    from ember.native._inplace import _type_name

    return _type_name(d)


def sum_to_size(input, *size):
    """Sum ``input`` down to ``size``, the inverse of broadcasting ``size`` to
    ``input.shape``; raises when ``size`` does not broadcast to it."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    size = tuple(size)
    shape = tuple(input.shape)
    if shape == size:
        return input
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    out = sum(input, dims, keepdim=True) if dims else input
    return out.reshape(size) if lead or out.shape != size else out


# --- prod -----------------------------------------------------------------------


def _prod_kernel(xp, a, dims, keepdim, dtype=None):
    if dtype is not None:
        a = a.astype(dtype.np)
    elif a.dtype.kind in "iub":
        a = a.astype("int64")
    return xp.prod(a, axis=_axis(dims, a.ndim), keepdims=keepdim)


def _prod_backward(ctx, grad):
    (x,) = ctx.saved_inputs
    dims = ctx.attrs["dims"]
    if x.ndim == 0:
        return (grad,)
    # The product of all *other* elements, exact even where x has zeros: exclusive
    # cumulative products from the left and from the right, multiplied.
    flat = x.movedim(dims[0], -1) if len(dims) == 1 else x.reshape(-1)
    ones = flat.narrow(-1, 0, 1) * 0 + 1
    from ember.native.shape import cat

    left = cat([ones, flat.cumprod(-1).narrow(-1, 0, flat.shape[-1] - 1)], -1) if flat.shape[-1] else flat
    right_rev = cat([ones, flat.flip(-1).cumprod(-1).narrow(-1, 0, flat.shape[-1] - 1)], -1) if flat.shape[-1] else flat
    others = left * right_rev.flip(-1)
    others = others.movedim(-1, dims[0]) if len(dims) == 1 else others.reshape(x.shape)
    return (expand_reduced(grad, x.shape, dims, ctx.attrs["keepdim"]) * others,)


PROD = Op("aten::prod", _prod_kernel, _prod_backward, promote=NONE, save="inputs")


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over one dim (``dim=int``) or over all elements (``dim=None``)."""
    dims = reduction_dims(dim, input.ndim)
    attrs = {"dims": dims, "keepdim": keepdim}
    if dtype is not None:
        attrs["dtype"] = dtypes.to_dtype(dtype)
    return PROD(input, **attrs)


# --- var, std -------------------------------------------------------------------


def _var_kernel(xp, a, dims, keepdim, correction):
    axis = _axis(dims, a.ndim)
    return xp.var(a, axis=axis, keepdims=keepdim, ddof=correction)


def _var_backward(ctx, grad):
    (x,) = ctx.saved_inputs
    dims, keepdim, correction = ctx.attrs["dims"], ctx.attrs["keepdim"], ctx.attrs["correction"]
    n = 1
    for d in dims:
        n *= x.shape[d]
    centered = x - x.mean(dims, keepdim=True)
    return (expand_reduced(grad, x.shape, dims, keepdim) * centered * (2.0 / (n - correction)),)


VAR = Op("aten::var", _var_kernel, _var_backward, promote=NONE, save="inputs")


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with Bessel's correction by default (``correction=1``)."""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"std and var only support floating point and complex dtypes")
    return VAR(input, dims=reduction_dims(dim, input.ndim), keepdim=keepdim,
               correction=_correction(unbiased, correction))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: ``sqrt(var(...))``."""
    return var(input, dim, unbiased, keepdim, correction=correction).sqrt()


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


# --- amax, amin, max, min, argmax, argmin ---------------------------------------


def _check_nonempty(a, dims, name):
    for d in (dims if a.ndim else ()):
        if a.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if a.size == 0 and not dims and a.ndim:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
    if a.size == 0 and a.ndim == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")


def _extreme_kernel(which):
    def kernel(xp, a, dims, keepdim):
        _check_nonempty(a, dims, which)
        fn = xp.amax if which == "amax" else xp.amin
        return fn(a, axis=_axis(dims, a.ndim), keepdims=keepdim)
    return kernel


def _extreme_backward(ctx, grad):
    (x,) = ctx.saved_inputs
    (y,) = ctx.saved_outputs
    dims, keepdim = ctx.attrs["dims"], ctx.attrs["keepdim"]
    y_full = expand_reduced(y, x.shape, dims, keepdim)
    mask = (x == y_full)
    # Ties share the gradient evenly, as in PyTorch's amax/amin backward.
    count = mask.sum(dims, keepdim=True)
    return (mask * expand_reduced(grad, x.shape, dims, keepdim) / count,)


AMAX = Op("aten::amax", _extreme_kernel("amax"), _extreme_backward, promote=NONE, save="both")
AMIN = Op("aten::amin", _extreme_kernel("amin"), _extreme_backward, promote=NONE, save="both")


def amax(input, dim=(), keepdim=False):
    """Maximum over ``dim`` (all dims for ``()``); the gradient is shared among ties."""
    return AMAX(input, dims=reduction_dims(dim if dim != () else None, input.ndim), keepdim=keepdim)


def amin(input, dim=(), keepdim=False):
    return AMIN(input, dims=reduction_dims(dim if dim != () else None, input.ndim), keepdim=keepdim)


def _arg_kernel(which):
    def kernel(xp, a, dim, keepdim):
        if a.size == 0:
            raise RuntimeError(f"{which}(): Expected reduction dim to be specified for input.numel() == 0.")
        fn = xp.argmax if which == "argmax" else xp.argmin
        if dim is None:
            out = fn(a.reshape(-1))
            return xp.asarray(out, dtype="int64").reshape((1,) * a.ndim if keepdim else ())
        if a.ndim == 0:
            return xp.zeros((), dtype="int64")
        return fn(a, axis=dim, keepdims=keepdim).astype("int64", copy=False)
    return kernel


ARGMAX = Op("aten::argmax", _arg_kernel("argmax"), None, promote=NONE)
ARGMIN = Op("aten::argmin", _arg_kernel("argmin"), None, promote=NONE)


def argmax(input, dim=None, keepdim=False):
    """Index of the first maximum (NaN counts as the maximum)."""
    return ARGMAX(input, dim=None if dim is None else _wrap_dim(dim, input.ndim), keepdim=keepdim)


def argmin(input, dim=None, keepdim=False):
    return ARGMIN(input, dim=None if dim is None else _wrap_dim(dim, input.ndim), keepdim=keepdim)


def _max_dim_kernel(which):
    def kernel(xp, a, dim, keepdim):
        if a.ndim and a.shape[dim] == 0:
            raise IndexError(f"{which}(): Expected reduction dim {dim} to have non-zero size.")
        if a.ndim == 0:
            return a.copy(), xp.zeros((), dtype="int64")
        fn = xp.argmax if which == "max" else xp.argmin
        idx = fn(a, axis=dim, keepdims=True)
        values = xp.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx.astype("int64", copy=False)
    return kernel


def _max_dim_backward(ctx, grad, grad_indices=None):
    (meta,) = ctx.input_meta
    shape = meta[0]
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    _, indices = ctx.saved_outputs
    if len(shape) == 0:
        return (grad,)
    from ember.native.factory import zeros
    from ember.native.indexing import scatter

    if not keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return (scatter(zeros(shape, dtype=grad.dtype, device=grad.device), dim, indices, grad),)


MAX_DIM = Op("aten::max", _max_dim_kernel("max"), _max_dim_backward, promote=NONE, save="outputs",
             num_outputs=2)
MIN_DIM = Op("aten::min", _max_dim_kernel("min"), _max_dim_backward, promote=NONE, save="outputs",
             num_outputs=2)


def max(input, dim=None, keepdim=False, *, other=None):
    """``max(input)``: the largest element; ``max(input, dim)``: (values, indices);
    ``max(input, other_tensor)``: the elementwise maximum."""
    from ember.tensor import Tensor

    if isinstance(dim, Tensor):
        from ember.native.binary import maximum

        return maximum(input, dim)
    if dim is None:
        return amax(input)
    return return_types_max(*MAX_DIM(input, dim=_wrap_dim(dim, input.ndim), keepdim=keepdim))


def min(input, dim=None, keepdim=False, *, other=None):
    from ember.tensor import Tensor

    if isinstance(dim, Tensor):
        from ember.native.binary import minimum

        return minimum(input, dim)
    if dim is None:
        return amin(input)
    return return_types_min(*MIN_DIM(input, dim=_wrap_dim(dim, input.ndim), keepdim=keepdim))


# --- all, any, count_nonzero ----------------------------------------------------


def _bool_reduce(fn_name):
    def kernel(xp, a, dims, keepdim):
        return getattr(xp, fn_name)(a, axis=_axis(dims, a.ndim), keepdims=keepdim)
    return kernel


ALL = Op("aten::all", _bool_reduce("all"), None, promote=NONE)
ANY = Op("aten::any", _bool_reduce("any"), None, promote=NONE)


def all(input, dim=None, keepdim=False):
    """True where every element over ``dim`` is nonzero."""
    return ALL(input, dims=reduction_dims(dim, input.ndim), keepdim=keepdim)


def any(input, dim=None, keepdim=False):
    return ANY(input, dims=reduction_dims(dim, input.ndim), keepdim=keepdim)


def count_nonzero(input, dim=None):
    return (input != 0).sum(dim)


# --- logsumexp, norm ------------------------------------------------------------


def _logsumexp_kernel(xp, a, dims, keepdim):
    axis = _axis(dims, a.ndim)
    if a.size == 0:
        return xp.log(xp.sum(xp.exp(a), axis=axis, keepdims=keepdim))
    m = xp.amax(a, axis=axis, keepdims=True)
    m = xp.where(xp.isinf(m), 0, m)
    out = xp.log(xp.sum(xp.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdim else (out.squeeze(axis) if axis is not None else out.reshape(()))


def _logsumexp_backward(ctx, grad):
    (x,) = ctx.saved_inputs
    (y,) = ctx.saved_outputs
    dims, keepdim = ctx.attrs["dims"], ctx.attrs["keepdim"]
    return (expand_reduced(grad, x.shape, dims, keepdim) * (x - expand_reduced(y, x.shape, dims, keepdim)).exp(),)


LOGSUMEXP = Op("aten::logsumexp", _logsumexp_kernel, _logsumexp_backward, promote="int_to_float", save="both")


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed without overflow."""
    return LOGSUMEXP(input, dims=reduction_dims(dim, input.ndim), keepdim=keepdim)


def _pnorm_kernel(xp, a, p, dims, keepdim):
    axis = _axis(dims, a.ndim)
    absa = xp.abs(a)
    if p == 2:
        return xp.sqrt(xp.sum(absa * absa, axis=axis, keepdims=keepdim))
    if p == 1:
        return xp.sum(absa, axis=axis, keepdims=keepdim)
    return xp.power(xp.sum(xp.power(absa, p), axis=axis, keepdims=keepdim), 1.0 / p)


def _pnorm_backward(ctx, grad):
    from ember.native.indexing import where

    (x,) = ctx.saved_inputs
    (y,) = ctx.saved_outputs
    p, dims, keepdim = ctx.attrs["p"], ctx.attrs["dims"], ctx.attrs["keepdim"]
    g = expand_reduced(grad, x.shape, dims, keepdim)
    y = expand_reduced(y, x.shape, dims, keepdim)
    if p == 1:
        return (g * x.sign(),)
    if p == 2:
        return (where(y == 0, 0.0, g * x / y),)
    scale = x * x.abs() ** (p - 2) / y ** (p - 1)
    return (where(y == 0, 0.0, g * scale),)


PNORM = Op("aten::norm", _pnorm_kernel, _pnorm_backward, promote=NONE, save="both",
           backward_name="NormBackward1")


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over ``dim`` (all elements by default); ``p`` may be a number,
    ``inf``, ``-inf``, ``0`` or ``"fro"`` (2-norm of the flattened values)."""
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {_legacy(input.dtype)}")
    if p == "fro" or p is None:
        p = 2
    dims = reduction_dims(dim, input.ndim)
    if p == float("inf"):
        return input.abs().amax(dims, keepdim)
    if p == float("-inf"):
        return input.abs().amin(dims, keepdim)
    if p == 0:
        return (input != 0).to(input.dtype).sum(dims, keepdim)
    return PNORM(input, p=p, dims=dims, keepdim=keepdim)
