"""``histogram``: counts (or weights, or a density) of a tensor's elements in bins given
by a number of equal-width bins or by their edges, and those edges.

PyTorch counterpart: aten/src/ATen/native/Histogram.cpp and
aten/src/ATen/native/cpu/HistogramKernel.cpp (``histogram``, the one-dimensional case
of ``histogramdd``) (v2.13).

Every bin is half-open, ``[edge_k, edge_k+1)``, except the last, which also holds its
right edge; elements outside the edges are not counted. With ``bins`` a number the
edges are ``linspace(min, max, bins + 1)`` over ``range`` (else the data's range,
widened by 0.5 each way when it is a single value; ``[0, 1]`` when empty). ``density``
divides by the total and by each bin's width, so the histogram integrates to 1.
Not differentiable, as in PyTorch.
"""

import collections

from ember import dtypes
from ember.dispatcher import Op
from ember.tensor import Tensor

return_types_histogram = collections.namedtuple("histogram", ["hist", "bin_edges"])


def _bin_positions(xp, values, edges, equal_width):
    """The bin of each value (all within the edges): the last edge <= x, the right
    edge itself in the last bin. Equal-width edges are found by arithmetic and
    corrected against the edges themselves (rounding can be off by one, either way),
    as PyTorch does; other edges by binary search."""
    bin_count = edges.shape[0] - 1
    if not equal_width:
        return xp.minimum(xp.searchsorted(edges, values, side="right") - 1, bin_count - 1)
    scale = bin_count / (edges[-1] - edges[0])
    position = xp.clip(((values - edges[0]) * scale).astype("int64"), 0, bin_count - 1)
    position -= values < edges[position]
    position += (values >= edges[xp.minimum(position + 1, bin_count)]) & (position < bin_count - 1)
    return position


def _histogram_kernel(xp, a, edges, weight, density, equal_width=False):
    flat = a.reshape(-1)
    weights = None if weight is None else weight.reshape(-1)
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    flat = flat[inside]
    bin_count = edges.shape[0] - 1
    position = _bin_positions(xp, flat, edges, equal_width)
    if weights is None:
        hist = xp.bincount(position, minlength=bin_count).astype(a.dtype)
    else:  # summed in the input's dtype, in element order, as PyTorch's kernel does
        hist = xp.zeros(bin_count, dtype=a.dtype)
        xp.add.at(hist, position, weights[inside])
    if density:
        total = hist.sum()
        hist = hist / (total * xp.diff(edges))
    return hist.astype(a.dtype, copy=False)


HISTOGRAM = Op("aten::histogram", _histogram_kernel, None)


def _edges(input, bins, range):
    from ember.native.factory import linspace

    if range is not None:
        low, high = float(range[0]), float(range[1])
    elif input.numel():
        low, high = float(input.min().item()), float(input.max().item())
    else:
        low, high = 0.0, 1.0
    if low > high:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_number(low)} max "
                           f"{_number(high)} for dimension 0")
    if not (low - low == 0 and high - high == 0):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_number(low)}, {_number(high)}] is not finite")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return linspace(low, high, bins + 1, dtype=input.dtype, device=input.device)


def _number(value):
    return str(int(value)) if value - value == 0 and value == int(value) else str(value)


def _check(input, bins, weight):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_scalar_name(input.dtype)}'")
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{bins.ndim} dimensions in the bins tensor for dimension 0")
        if bins.dtype is not input.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_c_name(input.dtype)} and bins for dimension 0 with dtype "
                               f"{_c_name(bins.dtype)}")
        if bins.shape[0] < 2:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins.shape[0] - 1} for dimension 0")
    elif bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.reshape(-1, 1).shape)} and weight with shape {list(weight.shape)}")


def _c_name(dtype):
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(
        dtype.name, dtype.name)


def histogram(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: the count (or summed ``weight``) of ``input``'s elements in
    each bin. ``bins`` is a number of equal-width bins over ``range`` or a 1-d tensor
    of increasing edges.

    >>> import ember
    >>> ember.histogram(ember.tensor([1., 2., 1.]), bins=4, range=(0., 3.))
    histogram(hist=tensor([0., 2., 1., 0.]), bin_edges=tensor([0.0000, 0.7500, 1.5000, 2.2500, 3.0000]))
    """
    _check(input, bins, weight)
    edges = bins.clone() if isinstance(bins, Tensor) else _edges(input, int(bins), range)
    return return_types_histogram(HISTOGRAM(input, edges, weight, density=bool(density),
                                            equal_width=not isinstance(bins, Tensor)), edges)


def _scalar_name(dtype):
    return dtypes.SCALAR_TYPE_NAMES[dtype.name]
