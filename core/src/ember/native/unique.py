"""``unique`` (the distinct values or slices, sorted, with where each element went and
how often each occurs) and ``unique_consecutive`` (the same for runs of equal
neighbours only).

PyTorch counterpart: aten/src/ATen/native/Unique.cpp (``_unique2``, ``unique_dim``,
``unique_consecutive``) and torch/functional.py (the Python front that picks which
results to return) (v2.13).

Both have one recipe: sort (``unique``) or keep the order (``unique_consecutive``),
mark where a value differs from its predecessor, and number the groups those marks
start. ``inverse[i]`` is the group of element ``i``; ``counts`` the group sizes.
With ``dim``, the "values" are the slices along ``dim`` compared whole, sorted
lexicographically. NaN differs from everything, itself included, so every NaN is a
group of its own (as in PyTorch). On the CPU PyTorch sorts even with ``sorted=False``;
so does ember. Neither op is differentiable (PyTorch records no gradient either).
"""

from ember.dispatcher import Op
from ember.tensor import _wrap_dim


def _groups(xp, lines, starts):
    """``(first row of each group, inverse in sorted order, counts)`` from the group
    starts of rows already in order."""
    group = xp.cumsum(starts) - 1
    first = xp.flatnonzero(starts)
    counts = xp.diff(xp.append(first, lines.shape[0]))
    return lines[first], group.astype("int64"), counts.astype("int64")


def _differs_from_previous(xp, lines):
    """True where row ``i`` differs from row ``i - 1`` (always True for row 0)."""
    starts = xp.ones(lines.shape[0], dtype=bool)
    if lines.shape[0] > 1 and lines.shape[1] == 1:  # single values: one comparison each
        starts[1:] = lines[1:, 0] != lines[:-1, 0]
    elif lines.shape[0] > 1:
        starts[1:] = (lines[1:] != lines[:-1]).any(axis=1)
    return starts


def _as_lines(xp, a, dim):
    """``a`` with ``dim`` first and the rest flattened: one row per slice."""
    moved = xp.moveaxis(a, dim, 0)
    width = 1
    for size in moved.shape[1:]:
        width *= size
    return moved.reshape(moved.shape[0], width), moved.shape[1:]


def _unique_kernel(xp, a, dim, consecutive):
    if dim is None:
        lines, rest, inverse_shape = a.reshape(-1, 1), (), a.shape
    else:
        (lines, rest), inverse_shape = _as_lines(xp, a, dim), (a.shape[dim],)
    order = None
    if not consecutive and lines.shape[0]:
        # lexsort's last key is its primary one: the columns, first column last
        order = xp.lexsort(lines.T[::-1]) if lines.shape[1] > 1 else xp.argsort(lines[:, 0], kind="stable")
        lines = lines[order]
    values, group, counts = _groups(xp, lines, _differs_from_previous(xp, lines))
    inverse = group
    if order is not None:
        inverse = xp.empty_like(group)
        inverse[order] = group
    if dim is None:
        return values.reshape(-1), inverse.reshape(inverse_shape), counts
    values = xp.moveaxis(values.reshape((values.shape[0],) + rest), 0, dim)
    return xp.ascontiguousarray(values), inverse.reshape(inverse_shape), counts


UNIQUE = Op("aten::_unique2", lambda xp, a, dim: _unique_kernel(xp, a, dim, False), None, num_outputs=3)
UNIQUE_CONSECUTIVE = Op("aten::unique_consecutive", lambda xp, a, dim: _unique_kernel(xp, a, dim, True), None,
                        num_outputs=3)


def _checked_dim(input, dim):
    if dim is None:
        return None
    dim = _wrap_dim(dim, input.ndim)
    if input.numel() == 0 and input.shape[dim] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    return dim


def _results(values, inverse, counts, return_inverse, return_counts):
    if not (return_inverse or return_counts):
        return values
    return (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` (or its distinct slices along ``dim``),
    sorted; optionally ``inverse`` (each element's position in the result) and
    ``counts`` (how often each distinct value occurs).

    >>> import ember
    >>> ember.unique(ember.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    (tensor([1, 2, 3]), tensor([2, 0, 2, 1]), tensor([1, 1, 2]))
    """
    values, inverse, counts = UNIQUE(input, dim=_checked_dim(input, dim))
    return _results(values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse each run of equal neighbours (or equal slices along ``dim``) to one.

    >>> import ember
    >>> ember.unique_consecutive(ember.tensor([1, 1, 2, 2, 1]), return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 2, 1]))
    """
    values, inverse, counts = UNIQUE_CONSECUTIVE(input, dim=_checked_dim(input, dim))
    return _results(values, inverse, counts, return_inverse, return_counts)
