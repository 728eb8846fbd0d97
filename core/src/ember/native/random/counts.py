"""Counting samplers: ``poisson`` and ``binomial``.

PyTorch counterpart: ``_s_poisson_cpu`` and ``_s_binomial_cpu`` in
aten/src/ATen/native/Distributions.cpp (v2.13).

# NOTE [ Counting samplers ]
# torch draws Poisson counts with Hormann's transformed rejection (rate >= 10) or a
# product of uniforms, and binomial counts with BTRS or geometric inversion, from its
# own generator word by word. ember draws them with NumPy's samplers fed by the same
# ember generator (``Generator.numpy``): the same distributions and a reproducible
# stream under ``manual_seed``, but not torch's numbers. The tests compare them with
# torch by their statistics (mean and variance over many draws, and a
# Kolmogorov-Smirnov-style distance between the two empirical CDFs).
"""

import numpy as np

from ember.random import generator_or_default


def _counts(template, values):
    from ember.native.factory import _finish

    return _finish(np.ascontiguousarray(values.astype(template.dtype.np, copy=False)), template.dtype,
                   template.device, False)


def poisson(input, generator=None):
    """Poisson counts with rates ``input`` (element-wise), of ``input``'s dtype.

    >>> import ember
    >>> ember.poisson(ember.zeros(3))
    tensor([0., 0., 0.])
    """
    rates = input._host().astype(np.float64)
    if rates.size and not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    draws = generator_or_default(generator).numpy.poisson(rates) if rates.size else rates
    return _counts(input, np.asarray(draws, dtype=np.float64))


def binomial(count, prob, generator=None):
    """Binomial counts of successes in ``count`` trials of probability ``prob`` (element-wise).

    >>> import ember
    >>> ember.binomial(ember.tensor([5.0, 5.0]), ember.tensor([0.0, 1.0]))
    tensor([0., 5.])
    """
    trials = np.broadcast_to(count._host(), np.broadcast_shapes(count.shape, prob.shape))
    probability = np.broadcast_to(prob._host().astype(np.float64), trials.shape)
    draws = (generator_or_default(generator).numpy.binomial(trials.astype(np.int64), probability)
             if trials.size else np.zeros(trials.shape))
    return _counts(count, np.asarray(draws, dtype=np.float64))
