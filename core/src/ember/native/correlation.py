"""Covariance and correlation matrices: ``cov`` and ``corrcoef``.

PyTorch counterpart: aten/src/ATen/native/Correlation.cpp (v2.13).

Rows are variables, columns observations (a 1-d input is one variable). ``cov``
weights each observation by its frequency (``fweights``, integers) times its
importance (``aweights``, floats), centres each variable at its weighted mean and
divides the weighted products by the degrees of freedom; ``corrcoef`` divides the
covariances by both standard deviations and clips to [-1, 1]. Both are compositions of
ember ops (mean, mm, sqrt), so autograd gives their gradients.
"""

import warnings

from ember import dtypes
from ember.native.support._inplace import _type_name


def _check_weights(name, w, observations, integral):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.ndim} "
                           "dimensions")
    if integral and (w.dtype.is_floating_point or w.dtype.is_complex or w.dtype.name == "bool"):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{_type_name(w.dtype)} dtype")
    if not integral and not w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} with "
                           f"{_type_name(w.dtype)} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {observations}")
    if observations and bool((w.detach() < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _weights(observations, fweights, aweights):
    """The product of the frequency and importance weights, or None (all ones)."""
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations, integral=True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations, integral=False)
        w = aweights if w is None else w * aweights
    return w


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the rows of ``input`` (a 0-d result for one variable).

    >>> import ember
    >>> ember.cov(ember.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    from ember.native.factory import scalar_tensor
    from ember.native.linalg.products import mm

    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {input.ndim} "
                           "dimensions")
    if input.dtype.name == "bool":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    observations = x.shape[1]
    w = _weights(observations, fweights, aweights)
    total = scalar_tensor(observations, dtype=dtypes.int64, device=x.device) if w is None else w.sum()
    if w is not None and not bool(total != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    mean = (x if w is None else x * w).sum(1) / total
    if w is not None and aweights is not None and correction != 0:
        dof = total - correction * (w * aweights).sum() / total
    else:
        dof = total - correction
    if bool(dof <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", stacklevel=2)
        dof = dof * 0
    centred = x - mean.unsqueeze(1)
    products = mm(centred, (centred if w is None else centred * w).t().conj())
    return (products / dof).squeeze()


def corrcoef(input):
    """The Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1]
    (NaN where a variable does not vary; a single variable gives 1, or NaN).

    >>> import ember
    >>> ember.corrcoef(ember.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    from ember.native.complex import complex as make_complex

    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:  # one variable: 1, or NaN where its variance is 0, inf or NaN
        return c / c
    variances = c.diagonal()
    deviations = (variances.real if variances.dtype.is_complex else variances).sqrt()
    c = c / deviations.view(-1, 1)
    c = c / deviations.view(1, -1)
    if c.dtype.is_complex:
        return make_complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)
