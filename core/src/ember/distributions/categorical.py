"""The categorical distribution over ``{0, ..., K - 1}``, given ``probs`` or ``logits``.

PyTorch counterpart: torch/distributions/categorical.py (v2.13).

Exactly one of ``probs`` (normalised over the last dimension) and ``logits``
(normalised by subtracting their logsumexp) is stored; the other is computed on first
use (``lazy_property``). ``sample`` is one ``ember.multinomial(..., replacement=True)``
call over the flattened batch, transposed, so after ``manual_seed`` it draws torch's
indices.
"""

import math

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


def _broadcast_one(value):
    """A number or tensor parameter as a tensor (Bernoulli's single parameter)."""
    (tensor,) = broadcast_all(value)
    return tensor


def _store_probs_or_logits(dist, probs, logits, normalise_probs, normalise_logits, at_least_1d):
    """Store the one parameter given (``dist.probs`` or ``dist.logits``) and ``dist._param``;
    Bernoulli and the relaxed distributions share this with Categorical."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    if at_least_1d and value.dim() < 1:
        raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
    normalise = normalise_probs if probs is not None else normalise_logits
    setattr(dist, name, normalise(value))
    dist._param = getattr(dist, name)


def _expand_probs_or_logits(self, new, param_shape):
    """Expand whichever of probs and logits ``self`` holds onto ``new``."""
    for name in ("probs", "logits"):
        if name in self.__dict__:
            setattr(new, name, getattr(self, name).expand(param_shape))
            new._param = getattr(new, name)


class Categorical(Distribution):
    """``Categorical(probs=p)`` or ``Categorical(logits=l)``: ``P(k) = p[..., k]``.

    >>> import ember
    >>> from ember.distributions import Categorical
    >>> Categorical(probs=ember.tensor([0.25, 0.75])).log_prob(ember.tensor(1))
    tensor(-0.2877)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _store_probs_or_logits(self, probs, logits,
                               normalise_probs=lambda p: p / p.sum(-1, keepdim=True),
                               normalise_logits=lambda lg: lg - lg.logsumexp(dim=-1, keepdim=True),
                               at_least_1d=True)
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else ember.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = ember.Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape + ember.Size((self._num_events,)))
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return ember.full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return ember.full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape=()):
        sample_shape = ember.Size(sample_shape)
        # One row of probabilities per batch element, sample_shape.numel() draws per row;
        # the transpose puts the draws first, as sample_shape + batch_shape wants.
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = ember.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ember.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        # A zero probability has logit -inf; clamping it to the dtype's lowest finite
        # value makes 0 * logit 0 instead of NaN.
        logits = ember.clamp(self.logits, min=ember.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = ember.arange(self._num_events, dtype=ember.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
