"""Counting ops: ``bincount`` (how often each non-negative integer occurs, optionally
weighted) and ``histc`` (counts in equal-width bins between two bounds).

PyTorch counterpart: aten/src/ATen/native/SummaryOps.cpp (``bincount``) and
aten/src/ATen/native/Histogram.cpp (``histc``, which PyTorch computes with its
histogram kernel) (v2.13).

Neither is differentiable (a count has no gradient; PyTorch records none either).
``histogram`` and its edges live in histogram.py.
"""

from ember import dtypes
from ember.dispatcher import Op


def _bincount_kernel(xp, a, weights, minlength):
    counts = xp.bincount(a, weights=weights, minlength=minlength)
    if weights is None:
        return counts.astype("int64")
    return counts.astype(weights.dtype if weights.dtype.kind == "f" else "float64")


BINCOUNT = Op("aten::bincount", _bincount_kernel, None)


def bincount(input, weights=None, minlength=0):
    """``out[n]`` = how many times ``n`` occurs in the 1-d non-negative integer ``input``
    (or the sum of the ``weights`` at those places); ``max(input) + 1`` bins, at least
    ``minlength``.

    >>> import ember
    >>> ember.bincount(ember.tensor([1, 3, 3, 0]))
    tensor([1, 1, 0, 2])
    """
    if input.dtype is dtypes.bool_ or input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim != 1 or (input.numel() and bool((input < 0).any())):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return BINCOUNT(input, weights, minlength=int(minlength))


def _histc_kernel(xp, a, bins, low, high):
    # bin = floor((x - low) * bins / (high - low)); x == high belongs to the last bin,
    # and values outside [low, high] are not counted.
    flat = a.reshape(-1)
    flat = flat[(flat >= low) & (flat <= high)]
    position = ((flat - low) * a.dtype.type(bins) / a.dtype.type(high - low)).astype("int64")
    position = xp.minimum(position, bins - 1)
    return xp.bincount(position, minlength=bins).astype(a.dtype)


HISTC = Op("aten::histc", _histc_kernel, None)


def histc(input, bins=100, min=0, max=0):
    """Counts of ``input``'s elements in ``bins`` equal-width bins over ``[min, max]``
    (``min = max = 0``: the data's own range; a single value's range is widened by 1
    each way).

    >>> import ember
    >>> ember.histc(ember.tensor([1., 2., 1.]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low == high and input.numel():
        low, high = float(input.min().item()), float(input.max().item())
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (_finite(low) and _finite(high)):
        raise RuntimeError(f"torch.histc: range of [{_number(low)}, {_number(high)}] is not finite")
    if low == high:
        low, high = low - 1, high + 1
    return HISTC(input, bins=int(bins), low=low, high=high)


def _finite(value):
    return value - value == 0


def _number(value):
    # PyTorch prints the bounds with C++'s stream: nan as -nan, integral values without ".0"
    if value != value:
        return "-nan"
    if _finite(value) and value == int(value):
        return str(int(value))
    return str(value)


def _scalar_name(dtype):
    return dtypes.SCALAR_TYPE_NAMES[dtype.name]
