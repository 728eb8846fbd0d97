"""The location-scale families' parameters (Normal, Laplace): ``loc`` and ``scale``
broadcast together, a batch shape of ``()`` when both are Python numbers, and the
location as mean and mode.

PyTorch counterpart: torch/distributions/normal.py (its ``__init__``, ``mean`` and
``mode``, which torch writes again in laplace.py) (v2.13).
"""

from numbers import Number

import ember
from ember.distributions.utils import broadcast_all

__all__ = ["LocScale"]


class LocScale:
    """Mixed in before ``Distribution``: stores ``loc`` and ``scale`` and sets the batch shape."""

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, Number) and isinstance(scale, Number)
        batch_shape = ember.Size() if both_numbers else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc
