"""``segment_reduce``: reduce consecutive segments of a dim, their sizes given by
``lengths`` or their boundaries by ``offsets``.

PyTorch counterpart: aten/src/ATen/native/SegmentReduce.cpp (``segment_reduce_kernel``,
``_segment_reduce_backward_kernel``) and derivatives.yaml (``segment_reduce``) (v2.13).

``lengths`` (or ``offsets``) has the data's dims before ``axis`` and then one dim of
segments: row ``r`` cuts ``data[r]`` along ``axis`` into segments, and the result has
``num_segments`` where the data had ``axis``. Reductions: sum, mean, max, min, prod.
See NOTE [ Segment reductions and their initial value ].
"""

import numpy as np

from ember import dtypes
from ember.dispatcher import NONE, Op
from ember.tensor import _wrap_dim

# NOTE [ Segment reductions and their initial value ]
# ``initial`` takes part in every segment: max(initial, values), min likewise,
# initial + sum, initial * prod, and (initial + sum) / length for mean (divided by the
# values' count, not count + 1). An empty segment gives ``initial``, or without it the
# reduction's identity (-inf for max, inf for min, 0 for sum, 1 for prod) and NaN for
# mean (0 / 0). max and min propagate NaN. The gradient (PyTorch's
# _segment_reduce_backward, which has no derivative of its own): sum sends the gradient
# to every value, mean the gradient / length, max and min share it evenly between the
# values equal to the result (NaN: the NaN values), and prod sends gradient * result /
# value, or for a zero or NaN value the product of the segment's other values (and
# initial) computed outright, exact where the division is not.

# NOTE [ Shared only if positive ]
# PyTorch's CPU backward of max and min divides the gradient between tied values only
# where it is positive: a negative (or zero, or NaN) gradient reaches every tie whole.
# (The sum of the shares is then not the gradient; ember keeps PyTorch's numbers.)

REDUCTIONS = ("sum", "mean", "max", "min", "prod")
_IDENTITY = {"sum": 0.0, "mean": 0.0, "max": -np.inf, "min": np.inf, "prod": 1.0}


def _segments(bounds, offsets):
    """(starts, ends) per row of the lengths or offsets, the rows flattened."""
    bounds = bounds.reshape(-1, bounds.shape[-1]).astype(np.int64)
    if offsets:
        return bounds[:, :-1], bounds[:, 1:]
    ends = np.cumsum(bounds, axis=1)
    return ends - bounds, ends


def _rows(xp, data, axis):
    """The data as (rows, length of axis, rest): a row per lengths row."""
    lead = int(np.prod(data.shape[:axis], dtype=np.int64))
    return data.reshape(lead, data.shape[axis], -1)


def _reduce(xp, values, reduce, initial):
    start = _IDENTITY[reduce] if initial is None else initial
    if reduce == "mean":
        if len(values) == 0:
            return xp.full(values.shape[1:], np.nan if initial is None else initial)
        return (start + values.sum(axis=0)) / len(values)
    combine = {"sum": xp.add, "prod": xp.multiply, "max": xp.maximum, "min": xp.minimum}[reduce]
    total = {"sum": values.sum, "prod": values.prod, "max": values.max, "min": values.min}[reduce]
    if len(values) == 0:
        return xp.full(values.shape[1:], start)
    return combine(total(axis=0), start)


def _segment_reduce_kernel(xp, data, bounds, reduce, axis, initial=None, offsets=False):
    starts, ends = _segments(bounds, offsets)
    rows = _rows(xp, data, axis)
    out = xp.empty((rows.shape[0], starts.shape[1], rows.shape[2]), dtype=data.dtype)
    for r in range(rows.shape[0]):
        for s in range(starts.shape[1]):
            out[r, s] = _reduce(xp, rows[r, starts[r, s]:ends[r, s]], reduce, initial)
    return out.reshape(tuple(bounds.shape[:-1]) + (starts.shape[1],) + tuple(data.shape[axis + 1:]))


def _excluded_products(values, initial):
    """For each value, the product of the segment's others (and ``initial``)."""
    start = 1.0 if initial is None else initial
    return np.stack([start * np.delete(values, j, axis=0).prod(axis=0) for j in range(len(values))])


def _segment_grad(values, grad, result, reduce, initial):
    if reduce == "sum":
        return np.broadcast_to(grad, values.shape)
    if reduce == "mean":
        return np.broadcast_to(grad / len(values), values.shape)
    if reduce == "prod":
        with np.errstate(divide="ignore", invalid="ignore"):
            shares = grad * result / values
        exact = (values == 0) | np.isnan(values)
        return np.where(exact, grad * _excluded_products(values, initial), shares)
    hits = (values == result) | (np.isnan(values) & np.isnan(result))
    shared = np.where(grad > 0, grad / np.maximum(hits.sum(axis=0), 1), grad)  # NOTE [ Shared only if positive ]
    return np.where(hits, shared, 0)


def _segment_reduce_backward_kernel(xp, grad, output, data, bounds, reduce, axis, initial=None, offsets=False):
    starts, ends = _segments(bounds, offsets)
    rows = _rows(xp, data, axis)
    grads = _rows(xp, grad, axis)
    results = _rows(xp, output, axis)
    out = xp.zeros_like(rows)
    for r in range(rows.shape[0]):
        for s in range(starts.shape[1]):
            start, end = starts[r, s], ends[r, s]
            if end > start:
                out[r, start:end] = _segment_grad(rows[r, start:end], grads[r, s], results[r, s], reduce, initial)
    return out.reshape(data.shape)


def _segment_reduce_backward(ctx, grad):
    data, bounds = ctx.saved_inputs
    (output,) = ctx.saved_outputs
    return SEGMENT_REDUCE_BACKWARD(grad, output, data, bounds, **ctx.attrs), None


SEGMENT_REDUCE = Op("aten::segment_reduce", _segment_reduce_kernel, _segment_reduce_backward, promote=NONE,
                    save="both")
SEGMENT_REDUCE_BACKWARD = Op("aten::_segment_reduce_backward", _segment_reduce_backward_kernel, promote=NONE)


def _check(data, reduce, bounds, name, axis, unsafe):
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if bounds.ndim > data.ndim:
        raise RuntimeError(f"Expected data.dim() >= {name}_value.dim() to be true, but got false.")
    if bounds.ndim - 1 != axis:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} but got {axis}.")
    if bounds.dtype not in (dtypes.int32, dtypes.int64):
        from ember.native.support._inplace import _type_name

        raise RuntimeError(f"\"_segment_reduce_{name}_cpu_kernel1\" not implemented for '{_type_name(data.dtype)}'")
    if not unsafe and name == "lengths":
        if bool((bounds < 0).any()):
            raise RuntimeError("lengths contains negative value!")
        if not bool((bounds.sum(-1) == data.shape[axis]).all()):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                               "data.size(lengths.dim()-1) when !unsafe.")


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Reduce segments of ``data`` along ``axis`` (``reduce``: "sum", "mean", "max", "min"
    or "prod"), cut by ``lengths`` (their sizes) or ``offsets`` (their boundaries), each
    row of them for the matching row of ``data``; ``initial`` joins every segment (NOTE
    [ Segment reductions and their initial value ]). ``unsafe`` skips the check that the
    lengths cover the dim.

    >>> import ember
    >>> ember.segment_reduce(ember.tensor([1., 2., 3., 4.]), "sum", lengths=ember.tensor([1, 3]))
    tensor([1., 9.])
    """
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if (lengths is None) == (offsets is None):
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    axis = _wrap_dim(axis, data.ndim)
    name, bounds = ("lengths", lengths) if lengths is not None else ("offsets", offsets)
    _check(data, reduce, bounds, name, axis, unsafe)
    return SEGMENT_REDUCE(data, bounds, reduce=reduce, axis=axis, initial=initial, offsets=name == "offsets")


_segment_reduce = segment_reduce
