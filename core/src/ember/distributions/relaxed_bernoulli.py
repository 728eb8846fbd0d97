"""The relaxed (Concrete / Gumbel-sigmoid) Bernoulli: a reparameterisable stand-in for a coin.

PyTorch counterpart: torch/distributions/relaxed_bernoulli.py (v2.13).

``LogitRelaxedBernoulli`` lives on the real line: ``(logit(u) + logit(p)) / temperature``
with ``u`` uniform (one ``ember.rand`` draw: torch's stream). ``RelaxedBernoulli`` is
its sigmoid, in (0, 1); as the temperature goes to 0 its samples approach 0 and 1.
"""

from numbers import Number

import ember
from ember.distributions import constraints
from ember.distributions.binary_parameters import BinaryParameters
from ember.distributions.categorical import _broadcast_one, _expand_probs_or_logits, _store_probs_or_logits
from ember.distributions.distribution import Distribution
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import SigmoidTransform
from ember.distributions.utils import broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryParameters, Distribution):
    """``LogitRelaxedBernoulli(temperature, probs=None, logits=None)``, on the real line."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        is_scalar = isinstance(probs if probs is not None else logits, Number)
        _store_probs_or_logits(self, probs, logits, normalise_probs=_broadcast_one,
                               normalise_logits=_broadcast_one, at_least_1d=False)
        batch_shape = ember.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = ember.Size(batch_shape)
        new.temperature = self.temperature
        _expand_probs_or_logits(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(ember.rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """``RelaxedBernoulli(temperature, probs=None, logits=None)``: the sigmoid of a LogitRelaxedBernoulli.

    ``temperature`` must be a tensor (its log is taken), as in torch.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(RelaxedBernoulli, _instance))

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
