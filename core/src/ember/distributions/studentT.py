"""Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

PyTorch counterpart: torch/distributions/studentT.py (v2.13).

``rsample`` is ``loc + scale * X / sqrt(Z / df)`` with X a standard-normal fill and Z
a Chi2(df) (gamma) draw, in torch's order: torch's numbers after ``manual_seed``.
"""

import math

import ember
from ember.distributions import constraints
from ember.distributions.chi2 import Chi2
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """``StudentT(df, loc=0.0, scale=1.0)``."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_parameters(StudentT, batch_shape, ("df", "loc", "scale"), _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        # Undefined (NaN) for df <= 1.
        return ember.where(self.df <= 1, ember.full_like(self.loc, math.nan), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # scale^2 df / (df - 2) for df > 2, inf for 1 < df <= 2, NaN for df <= 1.
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        result = ember.where(self.df > 2, finite, ember.full_like(self.df, math.inf))
        return ember.where(self.df <= 1, ember.full_like(self.df, math.nan), result)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * ember.rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_normaliser = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                          + ember.lgamma(0.5 * self.df) - ember.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * ember.log1p(y ** 2.0 / self.df) - log_normaliser

    def entropy(self):
        lbeta = ember.lgamma(0.5 * self.df) + math.lgamma(0.5) - ember.lgamma(0.5 * (self.df + 1))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (ember.digamma(0.5 * (self.df + 1)) - ember.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
