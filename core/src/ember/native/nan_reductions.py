"""Reductions that skip NaN: ``nansum`` (NaN counts as zero) and ``nanmean`` (the mean
of the non-NaN elements), and ``aminmax`` (both extremes at once).

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp (``nansum``, ``nanmean``,
``aminmax``) and their derivatives.yaml entries (v2.13).

All three are built from ember ops (``where``, ``sum``, ``amin``, ``amax``), so their
gradients are those ops' gradients: NaN positions get zero; ``aminmax`` shares each
extreme's gradient evenly among its ties, as ``amin``/``amax`` (and PyTorch) do.
"""

import collections

from ember.native.extremes import amax, amin
from ember.native.indexing import where
from ember.native.reduction import reduction_dims
from ember.native.reduction import sum as sum_

return_types_aminmax = collections.namedtuple("aminmax", ["min", "max"])


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum with NaN read as zero.

    >>> import ember
    >>> ember.tensor([1., float("nan"), 2.]).nansum()
    tensor(3.)
    """
    if input.dtype.is_floating_point:
        input = where(input.isnan(), 0.0, input)
    return sum_(input, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN elements (NaN where there are none).

    >>> import ember
    >>> ember.tensor([1., float("nan"), 2.]).nanmean()
    tensor(1.5000)
    """
    if not input.dtype.is_floating_point:
        from ember.native._inplace import _type_name

        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_type_name(input.dtype)}")
    count = sum_(input.isnan().logical_not(), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def aminmax(input, *, dim=None, keepdim=False):
    """The smallest and largest elements (over ``dim`` if given), a ``(min, max)`` tuple.

    >>> import ember
    >>> ember.aminmax(ember.tensor([[1, 5], [3, 2]]), dim=0)
    aminmax(min=tensor([1, 2]), max=tensor([3, 5]))
    """
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims = ()
    else:
        (dims,) = reduction_dims(dim, input.ndim) or (dim,)
        if input.ndim and input.shape[dims] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims} to have non-zero size.")
        if input.ndim == 0:
            dims = ()
    if dim is None and keepdim:
        dims = tuple(range(input.ndim))
    return return_types_aminmax(amin(input, dims, keepdim), amax(input, dims, keepdim))
