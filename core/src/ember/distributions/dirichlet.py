"""The Dirichlet distribution over the probability simplex, with ``concentration`` alpha.

PyTorch counterpart: torch/distributions/dirichlet.py (v2.13).

``rsample`` is ``ember._sample_dirichlet`` (gamma draws in float64, normalised: torch's
numbers after ``manual_seed``) wrapped in a Function whose backward is torch's: each
marginal is Beta(alpha_i, total - alpha_i), and ``_dirichlet_grad`` gives its implicit
reparameterisation gradient (NOTE [ Implicit reparameterisation ]).
"""

import ember
from ember.autograd.function import Function, once_differentiable
from ember.distributions import constraints
from ember.distributions.distribution import Distribution

__all__ = ["Dirichlet"]


class _Dirichlet(Function):
    """A Dirichlet sample with torch's reparameterisation gradient."""

    @staticmethod
    def forward(ctx, concentration):
        x = ember._sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        total = concentration.sum(-1, True).expand_as(concentration)
        grad = ember._dirichlet_grad(x, concentration, total)
        # The sample stays on the simplex: raising alpha_i moves mass from every x_j to x_i.
        return grad * (grad_output - (x * grad_output).sum(-1, True))


class Dirichlet(Distribution):
    """``Dirichlet(concentration)``: density ``prod x_i^(a_i - 1) / B(a)`` on the simplex."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = ember.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        return _Dirichlet.apply(self.concentration.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (ember.xlogy(self.concentration - 1.0, value).sum(-1) + ember.lgamma(self.concentration.sum(-1))
                - ember.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # With every alpha_i < 1 the density peaks at a corner: the largest alpha's vertex.
        all_below_one = (self.concentration < 1).all(dim=-1, keepdim=True)
        corner = ember.nn.functional.one_hot(mode.argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        return ember.where(all_below_one, corner, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (ember.lgamma(self.concentration).sum(-1) - ember.lgamma(a0) - (k - a0) * ember.digamma(a0)
                - ((self.concentration - 1.0) * ember.digamma(self.concentration)).sum(-1))
