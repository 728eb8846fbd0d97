"""Probability distributions at torch's path: ``ember.distributions``.

PyTorch counterpart: torch/distributions/__init__.py (v2.13).

One file per family, as torch: ``distribution.py`` (the base class), ``constraints.py``
(parameter and support regions), ``transforms.py`` and ``transformed_distribution.py``
(distributions pushed through invertible maps), ``kl.py`` (``kl_divergence`` and its
registry), ``utils.py``. Sampling draws from ember's random functions, which follow
torch's streams after ``manual_seed``; docs/chapters/03-autograd.md's section on
distributions says which families draw torch's exact numbers.
"""

from ember.distributions import constraints, transforms
from ember.distributions.bernoulli import Bernoulli
from ember.distributions.beta import Beta
from ember.distributions.binomial import Binomial
from ember.distributions.categorical import Categorical
from ember.distributions.chi2 import Chi2
from ember.distributions.dirichlet import Dirichlet
from ember.distributions.distribution import Distribution
from ember.distributions.exponential import Exponential
from ember.distributions.gamma import Gamma
from ember.distributions.independent import Independent
from ember.distributions.kl import kl_divergence, register_kl
from ember.distributions.laplace import Laplace
from ember.distributions.log_normal import LogNormal
from ember.distributions.mixture_same_family import MixtureSameFamily
from ember.distributions.multivariate_normal import MultivariateNormal
from ember.distributions.normal import Normal
from ember.distributions.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from ember.distributions.poisson import Poisson
from ember.distributions.relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from ember.distributions.studentT import StudentT
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    IndependentTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
)
from ember.distributions.uniform import Uniform

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Chi2", "ComposeTransform",
    "Dirichlet", "Distribution", "ExpTransform", "Exponential", "Gamma", "Independent", "IndependentTransform",
    "Laplace", "LogNormal", "LogitRelaxedBernoulli", "MixtureSameFamily", "MultivariateNormal", "Normal",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson", "PowerTransform", "RelaxedBernoulli",
    "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StudentT", "TanhTransform",
    "Transform", "TransformedDistribution", "Uniform", "constraints", "kl_divergence", "register_kl", "transforms",
]
