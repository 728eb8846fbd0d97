"""Counting samplers: ``poisson`` and ``binomial``, draw for draw as torch's CPU kernels.

PyTorch counterpart: ``_s_poisson_cpu``/``sample_poisson`` and ``_s_binomial_cpu`` in
aten/src/ATen/native/Distributions.cpp; ``sample_binomial``, ``btrs`` and
``binomial_inversion`` in aten/src/ATen/native/Distributions.h (v2.13).

# NOTE [ Counting samplers ]
# Both walk the elements in row-major order and take each uniform from 53 bits of one
# 64-bit word (ember's `_unit_interval`), so after `manual_seed` they give torch's
# counts. Poisson: for a rate of 10 or more, Hormann's transformed rejection (PTRS:
# a pair of uniforms per try, a quick box test, then a log-density comparison);
# below 10, the count of uniforms whose running product stays above exp(-rate).
# Binomial: with p folded to at most 1/2 (counting failures instead), BTRS (the
# binomial version of the same transformed rejection, with Stirling tails) when
# n p >= 10, else inversion by summing geometric waiting times. torch computes a few
# binomial quantities in the input's type (n p, sqrt(n p q), p / q, log1p(-p) for
# float32 inputs); ember rounds them the same way.
"""

import math

import numpy as np

from ember.native.random.transformations import _unit_interval
from ember.random import generator_or_default


def _uniform(generator):
    return float(_unit_interval(generator, 1, np.float64)[0])


def _poisson_one(rate, generator):
    """One Poisson(rate) count, torch's sample_poisson."""
    if rate >= 10:
        slam, loglam = math.sqrt(rate), math.log(rate)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = _uniform(generator) - 0.5
            v = _uniform(generator)
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + rate + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            log_ratio = math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
            if log_ratio <= -rate + k * loglam - math.lgamma(k + 1.0):
                return k
    if rate == 0:
        return 0
    count, product, threshold = 0, 1.0, math.exp(-rate)
    while True:
        product *= _uniform(generator)
        if product <= threshold:
            return count
        count += 1


_STIRLING_TAILS = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                   0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                   0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    """log(k!) minus Stirling's approximation of it."""
    if k < len(_STIRLING_TAILS):
        return _STIRLING_TAILS[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs(count, prob, t, generator):
    """Binomial(count, prob) for count * prob >= 10, prob <= 1/2 (``t``: the input's type)."""
    stddev = float(np.sqrt(t(count * prob * (t(1) - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
    c = float(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(prob / (t(1) - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(np.floor((count + t(1)) * prob))
    n = float(count)
    while True:
        u = _uniform(generator) - 0.5
        v = _uniform(generator)
        us = 0.5 - abs(u)
        k = float(t(math.floor((2 * a / us + b) * u + c)))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        upperbound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                      + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                      + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1))
                      + _stirling_tail(m) + _stirling_tail(n - m) - _stirling_tail(k) - _stirling_tail(n - k))
        if v <= upperbound:
            return k


def _binomial_inversion(count, prob, t, generator):
    """Binomial(count, prob) by counting geometric waiting times that fit in ``count`` trials."""
    log_q = float(np.log1p(-prob))
    total, successes = 0.0, 0
    while True:
        total += math.ceil(math.log(_uniform(generator)) / log_q)
        if total > count:
            return float(successes)
        successes += 1


def _binomial_one(count, prob, t, generator):
    """One Binomial(count, prob) count, torch's sample_binomial (p folded to at most 1/2)."""
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return float(count)
    if prob <= 0.5:
        sampler = _btrs if count * prob >= 10.0 else _binomial_inversion
        return sampler(count, prob, t, generator)
    if prob > 0.5:
        q = t(1.0 - float(prob))
        sampler = _btrs if count * q >= 10.0 else _binomial_inversion
        return float(count - t(sampler(count, q, t, generator)))
    return math.nan


def _counts(template, values):
    from ember.native.factory import _finish

    return _finish(np.ascontiguousarray(np.asarray(values).astype(template.dtype.np, copy=False)), template.dtype,
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
    g = generator_or_default(generator)
    draws = [_poisson_one(float(rate), g) for rate in rates.reshape(-1)]
    return _counts(input, np.array(draws, dtype=np.float64).reshape(rates.shape))


def binomial(count, prob, generator=None):
    """Binomial counts of successes in ``count`` trials of probability ``prob`` (element-wise).

    >>> import ember
    >>> ember.binomial(ember.tensor([5.0, 5.0]), ember.tensor([0.0, 1.0]))
    tensor([0., 5.])
    """
    t = count.dtype.np.type
    trials = count._host()
    probability = np.broadcast_to(prob._host().astype(t), trials.shape)
    g = generator_or_default(generator)
    draws = [_binomial_one(t(n), t(p), t, g) for n, p in zip(trials.reshape(-1), probability.reshape(-1))]
    return _counts(count, np.array(draws, dtype=np.float64).reshape(trials.shape))
