"""The Bernoulli distribution: 1 with probability ``probs`` (or ``sigmoid(logits)``), else 0.

PyTorch counterpart: torch/distributions/bernoulli.py (v2.13).

``sample`` is one ``ember.bernoulli`` call on the expanded probabilities (torch's
stream); ``log_prob`` and ``entropy`` are binary cross-entropies with logits, which
stay finite for probabilities of exactly 0 and 1.
"""

import math
from numbers import Number

import ember
from ember.distributions import constraints
from ember.distributions.binary_parameters import BinaryParameters
from ember.distributions.categorical import _broadcast_one, _expand_probs_or_logits, _store_probs_or_logits
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(BinaryParameters, Distribution):
    """``Bernoulli(probs=p)`` or ``Bernoulli(logits=l)``.

    >>> import ember
    >>> from ember.distributions import Bernoulli
    >>> Bernoulli(probs=ember.tensor(0.25)).entropy()
    tensor(0.5623)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        is_scalar = isinstance(probs if probs is not None else logits, Number)
        _store_probs_or_logits(self, probs, logits, normalise_probs=_broadcast_one,
                               normalise_logits=_broadcast_one, at_least_1d=False)
        batch_shape = ember.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = ember.Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -ember.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return ember.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = ember.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
