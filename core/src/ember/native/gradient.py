"""``gradient``: a function's derivative estimated from its samples by central
differences (one-sided at the ends), along each dim.

PyTorch counterpart: ``gradient`` in aten/src/ATen/native/ReduceOps.cpp (v2.13), after
NumPy's ``gradient``.

Inside, the estimate is second-order accurate: with even spacing h it is
``(f[i+1] - f[i-1]) / 2h``; at points ``x`` it is the derivative of the parabola through
three neighbours. At the two ends ``edge_order`` 1 takes one-sided first differences and
2 one-sided second-order ones. The result is a tuple, one tensor per dim asked for;
each is a composition of ember ops (slices, cat), so autograd gives its gradient.
"""

from ember.native.shape.shape import cat
from ember.native.shape.views import SLICE
from ember.tensor import Tensor, _wrap_dim


def _s(t, dim, start=None, end=None):
    return SLICE(t, dim=dim, start=start, end=end, step=1)


def _dims_and_spacings(input, spacing, dim, edge_order):
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if spacing is None:
        spacing = 1.0
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims) and dim is None:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                               f"equal to 'self.dim() = {input.ndim}', since dim argument was not given, but got a "
                               f"list of length {len(spacing)}")
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        spacings = list(spacing)
    else:
        spacings = [spacing] * len(dims)
    dims = [_wrap_dim(d, input.ndim) for d in dims]
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return dims, spacings


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The estimated derivative of ``input`` along each dim in ``dim`` (all by default),
    with samples ``spacing`` apart (a number, one number per dim, or one 1-d tensor of
    coordinates per dim). Returns a tuple of tensors of ``input``'s shape.

    >>> import ember
    >>> ember.gradient(ember.tensor([1., 4., 9., 16.]))
    (tensor([3., 4., 6., 7.]),)
    """
    dims, spacings = _dims_and_spacings(input, spacing, dim, edge_order)
    return tuple(_along_coordinates(input, h, d, edge_order) if isinstance(h, Tensor)
                 else _along_even(input, h, d, edge_order) for d, h in zip(dims, spacings))


def _along_even(f, h, d, edge_order):
    center = (_s(f, d, 2) - _s(f, d, 0, -2)) / h
    if edge_order == 1:
        first = (_s(f, d, 1, 2) - _s(f, d, 0, 1)) / h
        last = (_s(f, d, -1) - _s(f, d, -2, -1)) / h
    else:
        first = (-1.5 * _s(f, d, 0, 1) + 2 * _s(f, d, 1, 2) - 0.5 * _s(f, d, 2, 3)) / h
        last = (0.5 * _s(f, d, -3, -2) - 2 * _s(f, d, -2, -1) + 1.5 * _s(f, d, -1)) / h
    return cat([first, center / 2, last], d)


def _along_coordinates(f, x, d, edge_order):
    if x.ndim != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {x.ndim} dimensions!")
    shape = [1] * f.ndim
    shape[d] = -1
    h = x[1:] - x[:-1]
    h1, h2 = h[:-1], h[1:]
    a = (-h2 / (h1 * (h1 + h2))).reshape(*shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(*shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(*shape)
    center = a * _s(f, d, 0, -2) + b * _s(f, d, 1, -1) + c * _s(f, d, 2)
    if edge_order == 1:
        first = (_s(f, d, 1, 2) - _s(f, d, 0, 1)) / h[0]
        last = (_s(f, d, -1) - _s(f, d, -2, -1)) / h[-1]
    else:
        first = _three_point(f, d, (0, 1, 2), _one_sided(h[0], h[1], leading=True))
        last = _three_point(f, d, (-3, -2, -1), _one_sided(h[-1], h[-2], leading=False))
    return cat([first, center, last], d)


def _one_sided(near, far, leading):
    """The weights of the second-order one-sided difference at an end, from the two
    spacings next to it (``near`` touches the end)."""
    if leading:
        return (-(2.0 * near + far) / (near * (near + far)), (near + far) / (near * far),
                -near / (far * (near + far)))
    return (near / (far * (near + far)), -(near + far) / (near * far), (2 * near + far) / (near * (near + far)))


def _three_point(f, d, positions, weights):
    total = None
    for position, weight in zip(positions, weights):
        term = weight * _s(f, d, position, position + 1 if position != -1 else None)
        total = term if total is None else total + term
    return total
