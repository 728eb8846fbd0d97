"""Extremes: ``amax amin max min argmax argmin`` (``max``/``min`` along a dim return
``(values, indices)`` namedtuples).

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp (amax/amin/argmax/argmin),
TensorCompare.cpp (max/min with indices) and their derivatives.yaml entries (v2.13).

``dim`` follows the rules of ember/native/reduction/reduction.py; the extreme of no elements is
an error, as in PyTorch.
"""

import collections

from ember import dtypes
from ember.autograd.forward_grad import REDUCTION
from ember.dispatcher import NONE, Op
from ember.native.reduction.reduction import _axis, contiguous_result, expand_reduced, reduction_dims
from ember.tensor import _wrap_dim

return_types_max = collections.namedtuple("max", ["values", "indices"])
return_types_min = collections.namedtuple("min", ["values", "indices"])


def _check_nonempty(input, dims, name, error=RuntimeError):
    """PyTorch refuses the extreme of no elements: naming no dim is ``error``, a
    named dim of size 0 an IndexError."""
    if input.numel() != 0:
        return
    if dims is None:
        raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                    + (" Specify the reduction dim with the 'dim' argument." if error is RuntimeError else ""))
    for d in dims:
        if input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _extreme_kernel(fn_name):
    def kernel(xp, a, dims, keepdim, nan_ties=False):
        return getattr(xp, fn_name)(a, axis=_axis(dims, a.ndim), keepdims=keepdim)
    return kernel


def _extreme_backward(ctx, grad):
    (x,) = ctx.saved_inputs
    (y,) = ctx.saved_outputs
    dims, keepdim = ctx.attrs["dims"], ctx.attrs["keepdim"]
    y_full = expand_reduced(y, x.shape, dims, keepdim)
    mask = x == y_full
    # NOTE [ Gradient of tied extremes ]
    # amax/amin and the dim-less max()/min() share the gradient evenly among the
    # elements equal to the result (max(dim) instead sends it to the index it
    # returns). The dim-less forms count NaN results as tied with the NaN inputs.
    if ctx.attrs.get("nan_ties"):
        mask = mask | (x.isnan() & y_full.isnan())
    count = mask.sum(dims, keepdim=True)
    return (mask * expand_reduced(grad, x.shape, dims, keepdim) / count,)


AMAX = Op("aten::amax", contiguous_result(_extreme_kernel("amax")), _extreme_backward, promote=NONE, save="both",
          jvp=REDUCTION)
AMIN = Op("aten::amin", contiguous_result(_extreme_kernel("amin")), _extreme_backward, promote=NONE, save="both",
          jvp=REDUCTION)


def _extreme(op, input, dim, keepdim, name):
    if dim is None or dim.__class__ is tuple and not dim:
        _check_nonempty(input, None, name)
        return op(input, dims=tuple(range(input.ndim)), keepdim=keepdim)
    dims = reduction_dims(dim, input.ndim)
    _check_nonempty(input, dims, name)
    return op(input, dims=dims, keepdim=keepdim)


def amax(input, dim=(), keepdim=False):
    """Largest value over ``dim`` (every dim for ``()``); NaN propagates. The
    gradient is shared evenly among tied maxima (see NOTE [ Gradient of tied extremes ]).

    >>> import ember
    >>> ember.tensor([[1., 5.], [3., 2.]]).amax(1)
    tensor([5., 3.])
    """
    return _extreme(AMAX, input, dim, keepdim, "amax")


def amin(input, dim=(), keepdim=False):
    """Smallest value over ``dim``; see :func:`amax`."""
    return _extreme(AMIN, input, dim, keepdim, "amin")


def _arg_kernel(fn_name):
    def kernel(xp, a, dim, keepdim):
        fn = getattr(xp, fn_name)
        if dim is None:
            index = xp.asarray(fn(a.reshape(-1)), dtype="int64")
            return index.reshape((1,) * a.ndim) if keepdim else index
        if a.ndim == 0:
            return xp.zeros((), dtype="int64")
        return fn(a, axis=dim, keepdims=keepdim).astype("int64", copy=False)
    return kernel


ARGMAX = Op("aten::argmax", contiguous_result(_arg_kernel("argmax")), None, promote=NONE)
ARGMIN = Op("aten::argmin", contiguous_result(_arg_kernel("argmin")), None, promote=NONE)


def _arg_extreme(op, input, dim, keepdim, name):
    if input.dtype is dtypes.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        _check_nonempty(input, None, name, IndexError)
        return op(input, dim=None, keepdim=keepdim)
    dim = _wrap_dim(dim, input.ndim)
    _check_nonempty(input, (dim,) if input.ndim else (), name)
    return op(input, dim=dim, keepdim=keepdim)


def argmax(input, dim=None, keepdim=False):
    """Index of the first maximum along ``dim`` (of the flattened input for None);
    NaN counts as the maximum. Returns int64.

    >>> import ember
    >>> ember.tensor([[1., 5.], [3., 2.]]).argmax(1)
    tensor([1, 0])
    """
    return _arg_extreme(ARGMAX, input, dim, keepdim, "argmax")


def argmin(input, dim=None, keepdim=False):
    """Index of the first minimum; see :func:`argmax`."""
    return _arg_extreme(ARGMIN, input, dim, keepdim, "argmin")


def _max_dim_kernel(arg_name):
    def kernel(xp, a, dim, keepdim):
        if a.ndim == 0:
            return a.copy(), xp.zeros((), dtype="int64")
        index = getattr(xp, arg_name)(a, axis=dim, keepdims=True)
        values = xp.take_along_axis(a, index, axis=dim)
        if not keepdim:
            values, index = values.squeeze(dim), index.squeeze(dim)
        return values, index.astype("int64", copy=False)
    return kernel


def _max_dim_backward(ctx, grad, grad_indices=None):
    from ember.native.factory import zeros
    from ember.native.indexing.indexing import scatter

    (meta,) = ctx.input_meta
    shape = meta[0]
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    (indices,) = ctx.saved_outputs_from(1)  # the values stay free to change in place, as in torch
    if len(shape) == 0:
        return (grad,)
    if not keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return (scatter(zeros(shape, dtype=grad.dtype, device=grad.device), dim, indices, grad),)


MAX_DIM = Op("aten::max", _max_dim_kernel("argmax"), _max_dim_backward, promote=NONE, save="outputs",
             num_outputs=2, backward_name="MaxBackward0", jvp=REDUCTION)
MIN_DIM = Op("aten::min", _max_dim_kernel("argmin"), _max_dim_backward, promote=NONE, save="outputs",
             num_outputs=2, backward_name="MinBackward0", jvp=REDUCTION)
MAX_ALL = Op("aten::max_all", _extreme_kernel("amax"), _extreme_backward, promote=NONE, save="both",
             backward_name="MaxBackward1", jvp=REDUCTION)
MIN_ALL = Op("aten::min_all", _extreme_kernel("amin"), _extreme_backward, promote=NONE, save="both",
             backward_name="MinBackward1", jvp=REDUCTION)


def _max_or_min(input, dim, keepdim, other, name):
    from ember.tensor import Tensor

    if isinstance(dim, Tensor) or other is not None:
        from ember.native.pointwise.binary_functions import maximum, minimum

        return (maximum if name == "max" else minimum)(input, other if other is not None else dim)
    if dim is None:
        _check_nonempty(input, None, name)
        op = MAX_ALL if name == "max" else MIN_ALL
        return op(input, dims=tuple(range(input.ndim)), keepdim=False, nan_ties=True)
    dim = _wrap_dim(dim, input.ndim)
    _check_nonempty(input, (dim,) if input.ndim else (), name)
    op, result = (MAX_DIM, return_types_max) if name == "max" else (MIN_DIM, return_types_min)
    return result(*op(input, dim=dim, keepdim=keepdim))


def max(input, dim=None, keepdim=False, *, other=None):
    """Three forms, as in PyTorch:

    - ``max(input)``: the largest element (ties share the gradient evenly);
    - ``max(input, dim, keepdim=False)``: a ``(values, indices)`` named tuple, the
      first index of the maximum; the gradient goes to that index only;
    - ``max(input, other)``: the elementwise maximum of two tensors.

    >>> import ember
    >>> ember.tensor([[1., 5.], [3., 2.]]).max(1)
    max(values=tensor([5., 3.]), indices=tensor([1, 0]))
    """
    return _max_or_min(input, dim, keepdim, other, "max")


def min(input, dim=None, keepdim=False, *, other=None):
    """The smallest element, ``(values, indices)`` along ``dim``, or the elementwise
    minimum; see :func:`max`."""
    return _max_or_min(input, dim, keepdim, other, "min")
