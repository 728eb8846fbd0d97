"""Running reductions along a dim: ``cummax`` and ``cummin`` (the extreme so far and
where it was), ``logcumsumexp`` (the running ``log(sum(exp))``), and ``diff``, their
inverse in spirit (the differences of neighbours). ``cumsum`` and ``cumprod`` live in
softmax.py.

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp (``cummax``, ``cummin``,
``logcumsumexp``, ``diff``) and their derivatives.yaml entries (v2.13).

``cummax``'s index is the last position reaching the running maximum (a tie moves
it forward). NaN is the largest of all: once met it stays, with the index of the
latest NaN. The gradient flows to those indices.
"""

import collections

from ember import dtypes
from ember.dispatcher import NONE, Op
from ember.tensor import _wrap_dim

return_types_cummax = collections.namedtuple("cummax", ["values", "indices"])
return_types_cummin = collections.namedtuple("cummin", ["values", "indices"])


def _cumulative_extreme_kernel(xp, a, dim, largest):
    if a.ndim == 0:
        return a.copy(), xp.zeros((), dtype="int64")
    extreme = xp.maximum if largest else xp.minimum  # both propagate NaN
    values = extreme.accumulate(a, axis=dim)
    # Position j holds the running extreme when a[j] equals it (a tie counts) or is NaN;
    # the index at i is the last such j <= i.
    holds = values == a
    if a.dtype.kind == "f":
        holds |= xp.isnan(a)
    shape = [1] * a.ndim
    shape[dim] = a.shape[dim]
    positions = xp.arange(a.shape[dim], dtype="int64").reshape(shape)
    indices = xp.maximum.accumulate(xp.where(holds, positions, -1), axis=dim)
    return values, indices


def _cumulative_extreme_backward(ctx, grad, grad_indices=None):
    from ember.native.factory import zeros

    (meta,) = ctx.input_meta
    _, indices = ctx.saved_outputs
    if len(meta[0]) == 0:
        return (grad,)
    return (zeros(meta[0], dtype=grad.dtype, device=grad.device).scatter_add(ctx.attrs["dim"], indices, grad),)


CUMMAX = Op("aten::cummax", lambda xp, a, dim: _cumulative_extreme_kernel(xp, a, dim, True),
            _cumulative_extreme_backward, promote=NONE, save="outputs", num_outputs=2)
CUMMIN = Op("aten::cummin", lambda xp, a, dim: _cumulative_extreme_kernel(xp, a, dim, False),
            _cumulative_extreme_backward, promote=NONE, save="outputs", num_outputs=2)


def cummax(input, dim):
    """``(values, indices)``: the largest element so far along ``dim``, and its index.

    >>> import ember
    >>> ember.tensor([1., 3., 2., 3.]).cummax(0)
    cummax(values=tensor([1., 3., 3., 3.]), indices=tensor([0, 1, 1, 3]))
    """
    return return_types_cummax(*CUMMAX(input, dim=_wrap_dim(dim, input.ndim) if input.ndim else 0))


def cummin(input, dim):
    """``(values, indices)``: the smallest element so far along ``dim``, and its index.

    >>> import ember
    >>> ember.tensor([3., 1., 2., 1.]).cummin(0)
    cummin(values=tensor([3., 1., 1., 1.]), indices=tensor([0, 1, 1, 3]))
    """
    return return_types_cummin(*CUMMIN(input, dim=_wrap_dim(dim, input.ndim) if input.ndim else 0))


# --- logcumsumexp ---------------------------------------------------------------


def _logcumsumexp_kernel(xp, a, dim):
    return a.copy() if a.ndim == 0 else xp.logaddexp.accumulate(a, axis=dim)


def _logcumsumexp_backward(ctx, grad):
    # d out_j / d x_i = exp(x_i - out_j) for j >= i, so grad_x_i = sum_{j>=i} grad_j
    # exp(x_i - out_j). Summed in log space (a reversed logcumsumexp), the positive and
    # negative parts of grad apart, so that no exp overflows.
    from ember.native.indexing.indexing import where

    (x,) = ctx.saved_inputs
    (out,) = ctx.saved_outputs
    dim = ctx.attrs["dim"]
    if x.ndim == 0:
        return (grad,)

    def reversed_logcumsumexp(t):
        return LOGCUMSUMEXP(t.flip([dim]), dim=dim).flip([dim])

    negative_infinity = float("-inf")
    positive = reversed_logcumsumexp(where(grad > 0, grad.abs().log(), negative_infinity) - out)
    negative = reversed_logcumsumexp(where(grad < 0, grad.abs().log(), negative_infinity) - out)
    return ((positive + x).exp() - (negative + x).exp(),)


LOGCUMSUMEXP = Op("aten::logcumsumexp", _logcumsumexp_kernel, _logcumsumexp_backward, promote=NONE, save="both")


def logcumsumexp(input, dim):
    """``out[i] = log(exp(input[0]) + ... + exp(input[i]))`` along ``dim``, computed
    without overflow.

    >>> import ember
    >>> ember.tensor([0., 0., 0.]).logcumsumexp(0)
    tensor([0.0000, 0.6931, 1.0986])
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{dtypes.SCALAR_TYPE_NAMES[input.dtype.name]}'")
    return LOGCUMSUMEXP(input, dim=_wrap_dim(dim, input.ndim) if input.ndim else 0)


# --- diff -----------------------------------------------------------------------


def _check_diff(input, n, prepend, append):
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for extra in (prepend, append):
        if extra is not None and extra.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``: ``out[i] = input[i + 1] - input[i]``
    applied ``n`` times (``logical_xor`` for bool), after joining ``prepend`` and
    ``append`` to the ends.

    >>> import ember
    >>> ember.tensor([1, 4, 9, 16]).diff()
    tensor([3, 5, 7])
    >>> ember.tensor([1, 4, 9, 16]).diff(n=2)
    tensor([2, 2])
    """
    from ember.native.shape.shape import cat

    _check_diff(input, n, prepend, append)
    dim = _wrap_dim(dim, input.ndim)
    if n == 0:  # no difference taken: prepend and append are not joined either (PyTorch's rule)
        return input
    pieces = [t for t in (prepend, input, append) if t is not None]
    out = cat(pieces, dim=dim) if len(pieces) > 1 else input
    for _ in range(min(n, out.shape[dim])):
        length = out.shape[dim] - 1
        later, earlier = out.narrow(dim, 1, length), out.narrow(dim, 0, length)
        out = later.logical_xor(earlier) if out.dtype is dtypes.bool_ else later - earlier
    return out
