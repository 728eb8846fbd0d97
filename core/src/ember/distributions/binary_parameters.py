"""The parameters of the two-outcome families (Bernoulli, Binomial,
LogitRelaxedBernoulli): ``probs`` or ``logits``, one given, the other computed from it
on first use.

PyTorch counterpart: torch/distributions/bernoulli.py (its ``logits``/``probs`` lazy
properties and ``param_shape``, which torch writes again in binomial.py and
relaxed_bernoulli.py) (v2.13).
"""

from ember.distributions.utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["BinaryParameters"]


class BinaryParameters:
    """Mixed into a family whose ``__init__`` stores ``probs`` or ``logits`` and ``_param``
    (the one given): the other one is the log-odds (or sigmoid) of it, computed once."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()
