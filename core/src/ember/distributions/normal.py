"""The normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``.

PyTorch counterpart: torch/distributions/normal.py (v2.13).

``sample`` is one ``ember.normal(loc, scale)`` call and ``rsample`` one standard-normal
fill scaled and shifted, so after ``manual_seed`` both draw torch's numbers. ember's
Normal derives from ``Distribution`` directly (torch's from ``ExponentialFamily``, whose
Bregman-divergence entropy ember leaves out).
"""

import math

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.loc_scale import LocScale
from ember.distributions.utils import _standard_normal

__all__ = ["Normal"]


class Normal(LocScale, Distribution):
    """``Normal(loc, scale)``: density ``exp(-(x - loc)**2 / (2 scale**2)) / (scale sqrt(2 pi))``.

    >>> import ember
    >>> from ember.distributions import Normal
    >>> Normal(ember.tensor([0.0]), ember.tensor([1.0])).log_prob(ember.tensor([0.0]))
    tensor([-0.9189])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Normal, batch_shape, ("loc", "scale"), _instance)

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ember.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * ember.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + ember.log(self.scale)
