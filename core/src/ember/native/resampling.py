"""Resampling along one dim by a fixed map: ``out[j] = sum_t w_t[j] * x[index_t[j]]``.

PyTorch counterpart: the index/weight precomputation shared by
aten/src/ATen/native/UpSample.h (``compute_indices_weights_*``) and the backward
kernels of UpSampleNearest*.cpp, UpSampleBilinear2d.cpp, ReflectionPad.cpp and
ReplicationPad.cpp, which add each output gradient back onto the inputs it read (v2.13).

Nearest interpolation is one tap (``weight`` None), linear interpolation two taps
(left and right neighbour), reflect/replicate/circular padding one tap. The forward
is a ``take`` per tap; the backward (``aten::resample_backward``) sums the gradient of
every output onto its source position without a scatter: positions are sorted, each
input position owns a contiguous run of outputs, and the runs are summed one step at
a time (as many steps as the longest run, e.g. 2 for a 2x upsampling). The two ops
are adjoint, so each one's backward is the other: double backward for free.
"""

import numpy as np

from ember.autograd.forward_grad import AUTO_LINEAR
from ember.dispatcher import NONE, Op


def _along(weight, ndim, dim):
    shape = [1] * ndim
    shape[dim] = -1
    return weight.reshape(shape)


def _resample_kernel(xp, x, dim, taps, size):
    out = None
    for index, weight in taps:
        part = xp.take(x, xp.asarray(index), axis=dim)
        if weight is not None:
            part *= _along(xp.asarray(weight.astype(x.dtype)), x.ndim, dim)
        out = part if out is None else out + part
    return out


def _runs(index, size):
    """``(order, starts, counts)``: after sorting the outputs by source (``order``, None
    when already sorted), source ``i`` owns outputs ``starts[i] .. starts[i]+counts[i]``."""
    order = None
    if index.size > 1 and np.any(index[1:] < index[:-1]):
        order = np.argsort(index, kind="stable")
        index = index[order]
    sources = np.arange(size)
    starts = np.searchsorted(index, sources, side="left")
    counts = np.searchsorted(index, sources, side="right") - starts
    return order, starts, counts


def _resample_backward_kernel(xp, grad, dim, taps, size):
    shape = list(grad.shape)
    shape[dim] = size
    out = xp.zeros(shape, dtype=grad.dtype)
    for index, weight in taps:
        values = grad if weight is None else grad * _along(xp.asarray(weight.astype(grad.dtype)), grad.ndim, dim)
        order, starts, counts = _runs(index, size)
        if order is not None:
            values = xp.take(values, xp.asarray(order), axis=dim)
        last = max(index.size - 1, 0)
        for step in range(int(counts.max()) if counts.size else 0):
            owned = counts > step
            picked = xp.take(values, xp.asarray(np.minimum(starts + step, last)), axis=dim)
            if owned.all():
                out += picked
            else:
                out += picked * _along(xp.asarray(owned.astype(grad.dtype)), grad.ndim, dim)
    return out


def _resample_backward(ctx, grad):
    attrs = dict(ctx.attrs)
    attrs["size"] = ctx.input_meta[0][0][attrs["dim"]]
    return (RESAMPLE_BACKWARD(grad, **attrs),)


def _resample_double_backward(ctx, grad):
    attrs = dict(ctx.attrs)
    attrs["size"] = ctx.input_meta[0][0][attrs["dim"]]
    return (RESAMPLE(grad, **attrs),)


RESAMPLE = Op("aten::resample", _resample_kernel, _resample_backward, promote=NONE, jvp=AUTO_LINEAR)
RESAMPLE_BACKWARD = Op("aten::resample_backward", _resample_backward_kernel, _resample_double_backward,
                       promote=NONE)


def resample(input, dim, taps):
    """``out[j] = sum_t w_t[j] * input[index_t[j]]`` along ``dim``; ``taps`` is a list of
    ``(index, weight)`` NumPy arrays (``weight`` None means 1), all of the output's length."""
    taps = tuple((np.asarray(index, dtype=np.int64), weight) for index, weight in taps)
    return RESAMPLE(input, dim=dim, taps=taps, size=len(taps[0][0]))
