"""Integration by the trapezoidal rule: ``trapezoid`` (and its older name ``trapz``)
and ``cumulative_trapezoid``.

PyTorch counterpart: aten/src/ATen/native/Integration.cpp (v2.13).

Samples ``y`` along ``dim`` at points ``x`` (or evenly, ``dx`` apart) are integrated
as the sum of the trapezoids between neighbours, ``dx_i * (y_i + y_{i+1}) / 2``. All
three are compositions of ember ops (slices, sums, cumsum), so autograd gives their
gradients. The differences ``dx`` are taken before ``x`` is broadcast against ``y``, as
NumPy does: a 1-d ``x`` runs along ``dim``, a shorter ``x`` gains leading dims.
"""

from ember.native.shape.views import SLICE
from ember.tensor import Tensor, _wrap_dim


def _slice(t, dim, start=None, end=None):
    return SLICE(t, dim=dim, start=start, end=end, step=1)


def _check_not_bool(name, *tensors):
    if any(isinstance(t, Tensor) and t.dtype.name == "bool" for t in tensors):
        which = "`x` or `y`" if len(tensors) > 1 else "`y`"
        raise RuntimeError(f"{name}: received a bool input for {which}, but bool is not supported")


def _differences(name, y, x, dim):
    """``x``'s differences along ``dim``, shaped to broadcast against ``y``'s pairs."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0]
        x = x.view(*shape)
    elif x.ndim < y.ndim:
        x = x.view(*([1] * (y.ndim - x.ndim) + list(x.shape)))
    return _slice(x, dim, 1) - _slice(x, dim, 0, -1)


def _pairs(y, dim):
    """``y_{i+1} + y_i`` for each neighbouring pair along ``dim``."""
    return _slice(y, dim, 1) + _slice(y, dim, 0, -1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, at points ``x`` or
    evenly spaced ``dx`` apart (1 by default). No samples integrate to zero.

    >>> import ember
    >>> ember.trapezoid(ember.tensor([1., 2., 3.]))
    tensor(4.)
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received both `x` and `dx`; expected one of them")
    _check_not_bool("trapezoid", y) if x is None else _check_not_bool("trapezoid", y, x)
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _wrap_dim(dim, y.ndim)
    if y.shape[dim] == 0:  # NumPy's answer for no samples
        from ember.native.factory import zeros

        return zeros(tuple(y.shape[:dim] + y.shape[dim + 1:]), dtype=y.dtype, device=y.device)
    if x is None:
        step = 1 if dx is None else dx
        ends = y.select(dim, 0) + y.select(dim, -1)
        return (y.sum(dim) - ends * 0.5) * step
    return ((_differences("trapezoid", y, x, dim) * _pairs(y, dim)) / 2.0).sum(dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    """:func:`trapezoid`'s older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integral of ``y`` along ``dim`` by the trapezoidal rule: one value
    per pair of neighbouring samples (the dim shrinks by one).

    >>> import ember
    >>> ember.cumulative_trapezoid(ember.tensor([1., 2., 3.]))
    tensor([1.5000, 4.0000])
    """
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received both `x` and `dx`; expected one of them")
    _check_not_bool("cumulative_trapezoid", y) if x is None else _check_not_bool("cumulative_trapezoid", y, x)
    if y.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, y.ndim)
    step = (1 if dx is None else dx) if x is None else _differences("cumulative_trapezoid", y, x, dim)
    return (step / 2.0 * _pairs(y, dim)).cumsum(dim)
