"""The binomial distribution: successes in ``total_count`` trials of probability ``probs``.

PyTorch counterpart: torch/distributions/binomial.py (v2.13).

``sample`` is ``ember.binomial``, torch's sampler draw for draw: torch's numbers after
``manual_seed`` (NOTE [ Counting samplers ] in ember/native/random/counts.py).
"""

import ember
from ember.distributions import constraints
from ember.distributions.binary_parameters import BinaryParameters
from ember.distributions.categorical import _expand_probs_or_logits, _store_probs_or_logits
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """max(x, 0) whose gradient at 0 is 1/2, as torch's."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryParameters, Distribution):
    """``Binomial(total_count=1, probs=None, logits=None)``."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        holder = {}

        def with_count(value):
            count, value = broadcast_all(total_count, value)
            holder["total_count"] = count.type_as(value)
            return value

        _store_probs_or_logits(self, probs, logits, normalise_probs=with_count, normalise_logits=with_count,
                               at_least_1d=False)
        self.total_count = holder["total_count"]
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = ember.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = ember.lgamma(self.total_count + 1)
        log_factorial_k = ember.lgamma(value + 1)
        log_factorial_nmk = ember.lgamma(self.total_count - value + 1)
        # n * log(1 + exp(logits)), written so that neither sign of the logits overflows.
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * ember.log1p(ember.exp(-ember.abs(self.logits))) - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ember.exp(log_prob) * log_prob).sum(0)

    def _homogeneous_count(self, what):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total_count

    def enumerate_support(self, expand=True):
        total_count = self._homogeneous_count("enumerate_support")
        values = ember.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
