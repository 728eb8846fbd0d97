"""``Flatten`` and ``Unflatten``: reshape a range of dims into one, and one dim into many.

PyTorch counterpart: torch/nn/modules/flatten.py (v2.13). ember leaves out named
dims (``Unflatten`` with a dim name and a ``NamedShape``).
"""

from ember.nn.modules.module import Module


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` into one (``input.flatten(start_dim, end_dim)``).

    >>> import ember
    >>> ember.nn.Flatten()(ember.ones(32, 1, 5, 5)).shape
    ember.Size([32, 25])
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (``input.unflatten(dim, unflattened_size)``).

    >>> import ember
    >>> ember.nn.Unflatten(1, (2, 5, 5))(ember.ones(2, 50)).shape
    ember.Size([2, 2, 5, 5])
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        _check_int_sizes(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _check_int_sizes(sizes):
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(sizes).__name__}")
    for position, size in enumerate(sizes):
        if not isinstance(size, int):
            raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                            f"{type(size).__name__} at pos {position}")
