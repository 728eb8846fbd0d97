"""``histogramdd`` and ``histogram``: counts (or weights, or a density) of points in the
cells of a grid of bins, each dimension's bins given by a number of equal-width bins or
by their edges, and those edges.

PyTorch counterpart: aten/src/ATen/native/Histogram.cpp and
aten/src/ATen/native/cpu/HistogramKernel.cpp (``histogramdd``; ``histogram`` is its
one-dimensional case) (v2.13).

``histogramdd``'s input is a batch of points: its innermost dimension holds each
point's D coordinates. In each dimension every bin is half-open, ``[edge_k, edge_k+1)``,
except the last, which also holds its right edge; a point outside the edges of any
dimension is not counted. With ``bins`` a number the edges are
``linspace(min, max, bins + 1)`` over that dimension's ``range`` (else the data's range,
widened by 0.5 each way when it is a single value; ``[0, 1]`` when there are no points).
``density`` divides by the total and by each cell's volume, so the histogram integrates
to 1. Not differentiable, as in PyTorch.
"""

import collections

from ember import dtypes
from ember.dispatcher import Op
from ember.tensor import Tensor

return_types_histogram = collections.namedtuple("histogram", ["hist", "bin_edges"])
return_types_histogramdd = collections.namedtuple("histogramdd", ["hist", "bin_edges"])


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


def _histogramdd_kernel(xp, points, weight, *edges, density, equal_width=False):
    """``points`` is (N, D), ``edges`` one 1-d array per dimension: each point's cell is
    its bin in every dimension, flattened in C order and counted."""
    shape = tuple(e.shape[0] - 1 for e in edges)
    # points with no coordinates fall in no cell: PyTorch's zero-dimensional histogram is 0
    inside = xp.full(points.shape[0], bool(edges))
    for d, e in enumerate(edges):
        inside &= (points[:, d] >= e[0]) & (points[:, d] <= e[-1])
    points = points[inside]
    cell = xp.zeros(points.shape[0], dtype="int64")
    for d, e in enumerate(edges):
        cell = cell * shape[d] + _bin_positions(xp, points[:, d], e, equal_width)
    cells = int(xp.prod(xp.asarray(shape, dtype="int64")))
    if weight is None:
        hist = xp.bincount(cell, minlength=cells).astype(points.dtype)
    else:  # summed in the input's dtype, in point order, as PyTorch's kernel does
        hist = xp.zeros(cells, dtype=points.dtype)
        xp.add.at(hist, cell, weight.reshape(-1)[inside])
    hist = hist.reshape(shape)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):  # each cell's volume, one dimension's widths at a time
            hist = hist / xp.diff(e).reshape((-1,) + (1,) * (len(edges) - d - 1))
    return hist.astype(points.dtype, copy=False)


HISTOGRAMDD = Op("aten::histogramdd", _histogramdd_kernel, None)


# --- the edges -----------------------------------------------------------------------


def _outer_edges(points, dimensions, range):
    """Each dimension's (low, high): from ``range`` (a flat list of 2*D numbers) or the
    points' extremes, [0, 1] when there are none."""
    if range is not None:
        if len(range) != 2 * dimensions:
            raise RuntimeError(f"torch.histogramdd: for a {dimensions}-dimensional histogram range should have "
                               f"{2 * dimensions} elements, but got {len(range)}")
        return [(float(range[2 * d]), float(range[2 * d + 1])) for d in builtins_range(dimensions)]
    if not points.shape[0]:
        return [(0.0, 1.0)] * dimensions
    lows, highs = points.amin(0).tolist(), points.amax(0).tolist()
    return list(zip(lows, highs))


builtins_range = range  # ``range`` is an argument name below, as in PyTorch's signature


def _linear_edges(points, bins, outer):
    """``bins[d] + 1`` equal-width edges over each dimension's (checked, widened) range."""
    from ember.native.factory import linspace

    edges = []
    for d, (low, high) in enumerate(outer):
        if low > high:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_number(low)} max "
                               f"{_number(high)} for dimension {d}")
        if not (low - low == 0 and high - high == 0):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_number(low)}, {_number(high)}] is not "
                               "finite")
        if low == high:
            low, high = low - 0.5, high + 0.5
        edges.append(linspace(low, high, bins[d] + 1, dtype=points.dtype, device=points.device))
    return edges


def _number(value):
    return str(int(value)) if value - value == 0 and value == int(value) else str(value)


# --- the checks ----------------------------------------------------------------------


def _check_dtype(input):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{dtypes.SCALAR_TYPE_NAMES[input.dtype.name]}'")


def _check_input(input):
    _check_dtype(input)
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")


def _check_counts(bins, dimensions):
    if len(bins) != dimensions:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    for d, count in enumerate(bins):
        if count <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension {d}")


def _check_edges(points, edges):
    dimensions = points.shape[1]
    if len(edges) != dimensions:
        raise RuntimeError(f"torch.histogramdd: expected {dimensions} sequences of bin edges for a {dimensions}-"
                           f"dimensional histogram but got {len(edges)}")
    for d, e in enumerate(edges):
        if e.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{e.ndim} dimensions in the bins tensor for dimension {d}")
        if e.dtype is not points.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_c_name(points.dtype)} and bins for dimension {d} with dtype "
                               f"{_c_name(e.dtype)}")
        if e.shape[0] < 2:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {e.shape[0] - 1} for dimension {d}")


def _check_weight(input, weight, expected_shape):
    if weight is None:
        return
    if tuple(weight.shape) != tuple(expected_shape):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.shape)} and weight with shape {list(weight.shape)}")
    if weight.dtype is not input.dtype:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({_c_name(input.dtype)}), and "
                           f"weight({_c_name(weight.dtype)})")


def _c_name(dtype):
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(
        dtype.name, dtype.name)


# --- the functions -------------------------------------------------------------------


def _histogram_of_points(points, bins, range, weight, density):
    """The shared body: ``points`` is (N, D); ``bins`` a list of D counts or of D edge tensors."""
    dimensions = points.shape[1]
    if bins and isinstance(bins[0], Tensor):
        _check_edges(points, bins)
        edges, equal_width = [e.clone() for e in bins], False
    else:
        _check_counts(bins, dimensions)
        edges, equal_width = _linear_edges(points, bins, _outer_edges(points, dimensions, range)), True
    hist = HISTOGRAMDD(points, weight, *edges, density=bool(density), equal_width=equal_width)
    return hist, edges


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: the count (or summed ``weight``) of the points of ``input``
    (its innermost dimension holds each point's D coordinates) in each cell of a
    D-dimensional grid. ``bins`` is a number of equal-width bins for every dimension, a
    list of D numbers, or a list of D 1-d tensors of increasing edges; ``range`` is
    ``[low_0, high_0, low_1, high_1, ...]``; ``weight`` has ``input``'s shape without its
    innermost dimension.

    >>> import ember
    >>> ember.histogramdd(ember.tensor([[0., 0.], [1., 1.], [1., 0.]]), bins=2)
    histogramdd(hist=tensor([[1., 0.],
            [1., 1.]]), bin_edges=(tensor([0.0000, 0.5000, 1.0000]), tensor([0.0000, 0.5000, 1.0000])))
    """
    _check_input(input)
    dimensions = input.shape[-1]
    if isinstance(bins, int):
        bins = [bins] * dimensions
    bins = list(bins)
    points = input.reshape(input.numel() // dimensions if dimensions else input.shape[:-1].numel(), dimensions)
    _check_weight(input, weight, input.shape[:-1])
    hist, edges = _histogram_of_points(points, bins, range, None if weight is None else weight.reshape(-1), density)
    return return_types_histogramdd(hist, tuple(edges))


def histogram(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: the count (or summed ``weight``) of ``input``'s elements in
    each bin: :func:`histogramdd` of the elements as one-dimensional points. ``bins`` is
    a number of equal-width bins over ``range`` or a 1-d tensor of increasing edges.

    >>> import ember
    >>> ember.histogram(ember.tensor([1., 2., 1.]), bins=4, range=(0., 3.))
    histogram(hist=tensor([0., 2., 1., 0.]), bin_edges=tensor([0.0000, 0.7500, 1.5000, 2.2500, 3.0000]))
    """
    _check_dtype(input)
    points = input.reshape(-1, 1)
    _check_weight(points, weight, input.shape)  # weight has the input's shape, which PyTorch reports as (N, 1)
    hist, edges = _histogram_of_points(points, [bins], range, None if weight is None else weight.reshape(-1),
                                       density)
    return return_types_histogram(hist, edges[0])
