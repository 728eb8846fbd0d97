"""The Laplace (double exponential) distribution with location ``loc`` and scale ``scale``.

PyTorch counterpart: torch/distributions/laplace.py (v2.13).

``rsample`` inverts the CDF at one ``uniform_(eps - 1, 1)`` fill: torch's stream.
"""


import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.loc_scale import LocScale

__all__ = ["Laplace"]


class Laplace(LocScale, Distribution):
    """``Laplace(loc, scale)``: density ``exp(-|x - loc| / scale) / (2 scale)``.

    >>> import ember
    >>> from ember.distributions import Laplace
    >>> Laplace(0.0, 1.0).entropy()
    tensor(1.6931)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Laplace, batch_shape, ("loc", "scale"), _instance)

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # u in (-1, 1): its sign picks the side, -log1p(-|u|) the exponential distance.
        u = self.loc.new_empty(shape).uniform_(ember.finfo(self.loc.dtype).eps - 1, 1)
        return self.loc - self.scale * u.sign() * ember.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -ember.log(2 * self.scale) - ember.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        centred = value - self.loc
        return 0.5 - 0.5 * centred.sign() * ember.expm1(-centred.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ember.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + ember.log(2 * self.scale)
