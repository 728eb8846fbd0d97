"""Reducing writes: ``scatter_reduce`` (element ``src[i][j]`` goes to
``out[index[i][j]][j]`` for ``dim=0``) and ``index_reduce`` (slice ``source[i]`` goes to
slice ``out[index[i]]``), where every value landing on a position is combined with
what is there by ``sum``, ``prod``, ``mean``, ``amax`` or ``amin``.

PyTorch counterpart: aten/src/ATen/native/TensorAdvancedIndexing.cpp
(``scatter_reduce.two``, ``index_reduce``) and ``scatter_reduce_backward``,
``index_reduce_backward`` in torch/csrc/autograd/FunctionsManual.cpp (v2.13).

The two ops differ only in how a value finds its position, so they share one kernel
and one gradient (NOTE [ Reducing writes ]).
"""

import collections

from ember import dtypes
from ember.dispatcher import NONE, Op
from ember.native.indexing.indexing import _check_gather, _check_index_range, _scatter_index
from ember.tensor import _wrap_dim

# NOTE [ Reducing writes ]
# scatter_reduce's kernel copies the input, then combines each value into its
# position with the reduction's ufunc, applied at repeated positions one value
# after another (`ufunc.at`). index_reduce moves whole slices, for which
# `ufunc.at` is slow: it splits its (short) index into rounds, round k holding
# every target's k-th occurrence, and combines each round's slices into their
# distinct targets in one call. Either way the values meet each position in the
# order they come, as in PyTorch's loop. `include_self=False` first resets every
# position that receives a value to the reduction's identity, so the input's old
# value takes no part there; `mean` divides by how many values met at each
# position (counting the input's own when included), rounding down for integers
# as PyTorch does.
#
# The gradient is written once with helpers (`Positions`): `pick` reads, for
# each value, the output position it went to (`gather` for scatter_reduce,
# `index_select` for index_reduce), and `spread` adds values back into positions
# (`scatter_add`, `index_add`). For sum and mean each contribution gets the
# gradient of its position (divided by the count for mean); for prod, the
# product of the others (computed without dividing by zero, as PyTorch does);
# for amax and amin, the gradient is shared evenly among the contributions equal
# to the result.

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_UFUNCS = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def _identity(xp, dtype, reduce):
    """The value that leaves a position unchanged under ``reduce``."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -xp.inf if reduce == "amax" else xp.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = xp.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _reduce_into(xp, a, key, values, reduce, include_self):
    out = a.copy()
    if not include_self:
        out[key] = _identity(xp, a.dtype, reduce)
    values = xp.broadcast_to(values, out[key].shape)
    getattr(xp, _UFUNCS[reduce]).at(out, key, values)
    if reduce == "mean":
        count = xp.full(a.shape, 1 if include_self else 0, dtype="int64")
        xp.add.at(count, key, 1)
        count = xp.maximum(count, 1)
        out = out / count if a.dtype.kind == "f" else xp.floor_divide(out, count)
    return out.astype(a.dtype, copy=False)


def _scatter_reduce_kernel(xp, a, index, src, dim, reduce, include_self):
    if a.ndim == 0:
        return _scatter_reduce_kernel(xp, a.reshape(1), index.reshape(-1), src.reshape(-1), 0, reduce,
                                      include_self).reshape(())
    values = src[tuple(slice(0, s) for s in index.shape)]
    return _reduce_into(xp, a, _scatter_index(xp, index, dim), values, reduce, include_self)


def _index_reduce_kernel(xp, a, index, source, dim, reduce, include_self):
    # Slices, not elements, land on positions here (NOTE [ Reducing writes ]).
    if a.ndim == 0:
        return _index_reduce_kernel(xp, a.reshape(1), index.reshape(-1), source.reshape(-1), 0, reduce,
                                    include_self).reshape(())
    out = a.copy()
    rows, source_rows = xp.moveaxis(out, dim, 0), xp.moveaxis(source, dim, 0)  # views: rows writes `out`
    if not include_self:
        rows[index] = _identity(xp, a.dtype, reduce)
    ufunc = getattr(xp, _UFUNCS[reduce])
    for occurrence in _occurrences(xp, index):
        targets = index[occurrence]  # distinct within one round
        rows[targets] = ufunc(rows[targets], source_rows[occurrence])
    if reduce == "mean":
        counts = xp.bincount(index, minlength=rows.shape[0]) + (1 if include_self else 0)
        counts = xp.maximum(counts, 1).reshape((-1,) + (1,) * (rows.ndim - 1))
        rows[...] = rows / counts if a.dtype.kind == "f" else xp.floor_divide(rows, counts)
    return out


def _occurrences(xp, index):
    """The positions of ``index`` in rounds: round k holds each target's k-th
    occurrence, in the order they appear, so no round names a target twice."""
    if index.size == 0:
        return []
    order = xp.argsort(index, kind="stable")
    grouped = index[order]
    starts = xp.concatenate([xp.ones(1, dtype=bool), grouped[1:] != grouped[:-1]])
    first = xp.flatnonzero(starts)
    rank = xp.arange(index.size) - first[xp.cumsum(starts) - 1]
    return [order[rank == k] for k in range(int(rank.max()) + 1)]


# How a reducing write addresses its positions, for the gradient: `pick(t)` reads the
# position of every value, `spread(base, v)` adds values into their positions, and
# `redo(base, v)` reruns the forward op on other operands.
Positions = collections.namedtuple("Positions", ["pick", "spread", "redo"])


def _reduce_gradients(grad, a, values, result, positions, reduce, include_self):
    """``(grad_a, grad_values)`` of a reducing write (NOTE [ Reducing writes ])."""
    from ember.native.indexing.indexing import where

    pick, spread = positions.pick, positions.spread
    ones = values.detach() * 0 + 1
    touched = spread(a.detach() * 0, ones) > 0
    if reduce == "sum":
        grad_a, grad_values = grad, pick(grad)
    elif reduce == "mean":
        count = spread(a.detach() * 0 + (1 if include_self else 0), ones)
        per_value = grad / count.masked_fill(count == 0, 1)
        grad_a, grad_values = per_value, pick(per_value)
    elif reduce == "prod":
        grad_a, grad_values = _prod_gradients(grad, a, values, result, positions)
    else:
        a_is_result, values_are_result = a == result, values == pick(result)
        shares = spread(a_is_result.to(grad.dtype), values_are_result.to(grad.dtype))
        per_share = grad / shares
        grad_a = where(a_is_result, per_share, 0.0)
        grad_values = where(values_are_result, pick(per_share), 0.0)
    if not include_self:
        grad_a = grad_a.masked_fill(touched, 0)
    return grad_a, grad_values


def _prod_gradients(grad, a, values, result, positions):
    # The product of the others: result / own value, except where the own value is 0;
    # there the product is recomputed with that zero replaced by 1. A zero among the
    # values landing on a position is handled so when it is the only one there.
    from ember.native.indexing.indexing import where

    pick, spread, redo = positions
    a_ones = a.masked_fill(a == 0, 1)
    grad_a = grad * redo(a_ones, values) / a_ones
    zero = values == 0
    single_zero = zero & (pick(spread(a.detach() * 0, zero.to(a.dtype))) == 1)
    without_zero = redo(a, values.masked_fill(single_zero, 1))
    grad_values = where(single_zero, pick(grad * without_zero), pick(grad * result) / values.masked_fill(zero, 1))
    return grad_a, grad_values


def _scatter_reduce_backward(ctx, grad):
    a, index, src = ctx.saved_inputs
    (result,) = ctx.saved_outputs
    dim, reduce, include_self = ctx.attrs["dim"], ctx.attrs["reduce"], ctx.attrs["include_self"]
    corner = tuple(slice(0, s) for s in index.shape)
    used = src[corner] if tuple(src.shape) != tuple(index.shape) else src
    positions = Positions(
        pick=lambda t: t.gather(dim, index),
        spread=lambda base, values: base.scatter_add(dim, index, values),
        redo=lambda base, values: SCATTER_REDUCE(base, index, values, dim=dim, reduce=reduce,
                                                 include_self=include_self))
    grad_a, grad_used = _reduce_gradients(grad, a, used, result, positions, reduce, include_self)
    if used is src:
        return grad_a, None, grad_used
    from ember.native.factory import zeros  # src is larger than index: its unused part gets no gradient

    grad_src = zeros(src.shape, dtype=grad.dtype, device=grad.device)
    grad_src[corner] = grad_used
    return grad_a, None, grad_src


def _index_reduce_backward(ctx, grad):
    a, index, source = ctx.saved_inputs
    (result,) = ctx.saved_outputs
    dim, reduce, include_self = ctx.attrs["dim"], ctx.attrs["reduce"], ctx.attrs["include_self"]
    positions = Positions(
        pick=lambda t: t.index_select(dim, index),
        spread=lambda base, values: base.index_add(dim, index, values),
        redo=lambda base, values: INDEX_REDUCE(base, index, values, dim=dim, reduce=reduce,
                                               include_self=include_self))
    grad_a, grad_source = _reduce_gradients(grad, a, source, result, positions, reduce, include_self)
    return grad_a, None, grad_source


SCATTER_REDUCE = Op("aten::scatter_reduce.two", _scatter_reduce_kernel, _scatter_reduce_backward, promote=NONE,
                    save="both", backward_name="ScatterReduceBackward0")
INDEX_REDUCE = Op("aten::index_reduce", _index_reduce_kernel, _index_reduce_backward, promote=NONE, save="both")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """A copy of ``input`` where each ``src`` element is combined, by ``reduce``, into the
    position ``index`` names along ``dim`` (``out[index[i][j]][j]`` for ``dim=0``).

    >>> import ember
    >>> ember.zeros(3).scatter_reduce(0, ember.tensor([0, 0, 2]), ember.tensor([1., 2., 5.]), "amax")
    tensor([2., 0., 5.])
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch takes the old names too
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _check_gather("scatter_reduce", input, dim, index)
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim] if input.ndim else 1
    if index.numel() and (bool((index < 0).any()) or bool((index >= size).any())):
        low = int(index.min().item())
        raise RuntimeError(f"index {low if low < 0 else int(index.max().item())} is out of bounds for dimension "
                           f"{dim} with size {size}")
    return SCATTER_REDUCE(input, index, src, dim=dim, reduce=reduce, include_self=bool(include_self))


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """A copy of ``input`` where slice ``source[i]`` along ``dim`` is combined, by
    ``reduce`` (``prod``, ``mean``, ``amax``, ``amin``), into slice ``index[i]``.

    >>> import ember
    >>> ember.ones(3, 2).index_reduce(0, ember.tensor([0, 0]), ember.tensor([[2., 3.], [4., 5.]]), "prod")
    tensor([[ 8., 15.],
            [ 1.,  1.],
            [ 1.,  1.]])
    """
    import warnings

    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=2)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    dim = _wrap_dim(dim, input.ndim)
    _check_index_reduce(input, dim, index, source)
    _check_index_range(index, dim, input.shape[dim] if input.ndim else 1, "index_select")
    return INDEX_REDUCE(input, index.reshape(-1).long(), source, dim=dim, reduce=reduce,
                        include_self=bool(include_self))


def _check_index_reduce(input, dim, index, source):
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_name(index.dtype)} and size: {list(index.shape)}")
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {_name(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_name(input.dtype)}) and source ({_name(source.dtype)}) must "
                           "have the same scalar type")
    size = source.shape[dim] if source.ndim else 1
    if index.numel() != size:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({size}), for dim: {dim}")


def _name(dtype):
    return dtypes.SCALAR_TYPE_NAMES[dtype.name]
