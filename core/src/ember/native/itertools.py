"""Products and combinations of 1-d tensors: ``cartesian_prod`` (every tuple taking one
element from each input) and ``combinations`` (the ``r``-element subsets of one
input, optionally with repeats), each row of the result one tuple.

PyTorch counterpart: aten/src/ATen/native/Itertools.cpp (v2.13), after Python's
``itertools.product`` and ``itertools.combinations``. Like PyTorch, ``combinations``
filters the ``r``-fold grid of positions, so it makes ``n ** r`` candidate rows.

Both are built from ops that have gradients (``meshgrid`` and ``stack``; an index
read), so a tuple's gradient flows back to the element it holds, and an element used
in several tuples collects the sum.
"""

from ember.native.shape.meshgrid import meshgrid
from ember.native.shape.shape import stack


def _check_vector(t):
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors):
    """The Cartesian product of 1-d tensors: one row per tuple, the last input varying
    fastest (a single input is returned as it is).

    >>> import ember
    >>> ember.cartesian_prod(ember.tensor([1, 2]), ember.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], dim=1)


def _combination_positions(n, r, with_replacement, device):
    """The position tuples of the combinations, one per row: every tuple of the
    r-fold grid over ``range(n)`` whose positions strictly increase (or never
    decrease, with replacement); the grid's order is already lexicographic."""
    from ember.native.factory import arange

    grid = cartesian_prod(*[arange(n, device=device)] * r) if r > 1 else arange(n, device=device).reshape(-1, 1)
    steps = grid[:, 1:] - grid[:, :-1]
    keep = (steps >= 0 if with_replacement else steps > 0).all(1)
    return grid[keep]


def combinations(input, r=2, with_replacement=False):
    """The ``r``-element combinations of a 1-d tensor's elements, in lexicographic order
    of position, one per row (``with_replacement`` lets a position repeat).

    >>> import ember
    >>> ember.combinations(ember.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    _check_vector(input)
    if r == 0:
        from ember.native.factory import empty

        return empty(0, dtype=input.dtype, device=input.device)
    return input[_combination_positions(input.shape[0], r, with_replacement, input.device)]
