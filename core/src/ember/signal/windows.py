"""Window functions: ``bartlett blackman cosine exponential gaussian general_cosine
general_hamming hamming hann kaiser nuttall``, and the older top-level
``hann_window hamming_window blackman_window bartlett_window kaiser_window``.

PyTorch counterpart: torch/signal/windows/windows.py and the ``*_window`` factories of
aten/src/ATen/native/TensorFactories.cpp (v2.13).

Each window is its textbook formula over the sample positions ``n = 0 .. M-1``,
computed in NumPy float64 and rounded once to the requested dtype (torch computes in
that dtype, so float32 windows may differ from torch's in the last bit).

NOTE [ Symmetric and periodic windows ]
A symmetric window (``sym=True``, the filter-design kind) of length M reaches both ends:
its positions are spread over M - 1 intervals. A periodic one (``sym=False``, or
``periodic=True`` for the ``*_window`` factories, the kind ``stft`` wants) is the
symmetric window of length M + 1 with its last sample dropped, so that repeating it
tiles without a doubled endpoint.
"""

import math

import numpy as np

from ember import dtypes
from ember.native.factory import tensor


def _checks(name, M, dtype):
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if dtype not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: ember.{dtype.name}")
    return dtype


def _finish(values, dtype, device, requires_grad):
    return tensor(np.asarray(values, dtype=np.float64).astype(dtype.np), device=device, requires_grad=requires_grad)


def _intervals(M, sym):
    """How many intervals the positions span (NOTE [ Symmetric and periodic windows ])."""
    return M - 1 if sym or M == 1 else M


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """``w[n] = sum_i (-1)^i a[i] cos(2 pi i n / (M - 1))``: a sum of cosines.

    >>> import ember
    >>> ember.signal.windows.general_cosine(3, a=[0.5, 0.5])
    tensor([0., 1., 0.])
    """
    dtype = _checks("general_cosine", M, dtype)
    if M <= 1:
        return _finish(np.ones(M), dtype, device, requires_grad)
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    phase = 2 * math.pi * np.arange(M) / _intervals(M, sym)
    values = sum((-1) ** i * w * np.cos(i * phase) for i, w in enumerate(a))
    return _finish(values, dtype, device, requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hamming window, ``general_hamming`` with ``alpha = 0.54``."""
    return general_hamming(M, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window, ``0.5 - 0.5 cos(2 pi n / (M - 1))``.

    >>> import ember
    >>> ember.signal.windows.hann(5)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window, ``general_cosine`` with ``a = [0.42, 0.5, 0.08]``."""
    _checks("blackman", M, dtype)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular window ``1 - |2n / (M - 1) - 1|``."""
    dtype = _checks("bartlett", M, dtype)
    if M <= 1:
        return _finish(np.ones(M), dtype, device, requires_grad)
    values = 1 - np.abs(-1 + 2 * np.arange(M) / _intervals(M, sym))
    return _finish(values, dtype, device, requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The sine window ``sin(pi (n + 0.5) / M)`` (SciPy's ``cosine``)."""
    dtype = _checks("cosine", M, dtype)
    width = M + 1 if not sym and M > 1 else M
    values = np.sin(math.pi * (np.arange(M) + 0.5) / max(width, 1))
    return _finish(values, dtype, device, requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Poisson window ``exp(-|n - center| / tau)``, centred by default."""
    dtype = _checks("exponential", M, dtype)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if center is None:
        center = _intervals(M, sym) / 2.0
    values = np.exp(-np.abs(np.arange(M) - center) / tau)
    return _finish(values, dtype, device, requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """``exp(-(n - (M - 1) / 2)^2 / (2 std^2))``."""
    dtype = _checks("gaussian", M, dtype)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    offset = np.arange(M) - _intervals(M, sym) / 2.0
    values = np.exp(-(offset / (std * math.sqrt(2))) ** 2)
    return _finish(values, dtype, device, requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """``I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``, I0 the modified Bessel
    function of order 0."""
    dtype = _checks("kaiser", M, dtype)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _finish(np.ones(M), dtype, device, requires_grad)
    ratio = np.minimum(-1 + 2 * np.arange(M) / _intervals(M, sym), 1.0)
    values = np.i0(beta * np.sqrt(np.maximum(1 - ratio ** 2, 0.0))) / np.i0(beta)
    return _finish(values, dtype, device, requires_grad)


# --- the top-level factories (periodic by default) -------------------------------------


def _factory_checks(name, window_length, dtype):
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: ember.{dtype.name}")
    return dtype


def _periodic(window, window_length, periodic):
    """The symmetric window of one more sample, its last dropped, when ``periodic``."""
    if window_length <= 1:
        return np.ones(window_length)
    return window(window_length + 1)[:-1] if periodic else window(window_length)


def _cosines(coefficients):
    def window(M):
        phase = 2 * math.pi * np.arange(M) / (M - 1)
        return sum((-1) ** i * w * np.cos(i * phase) for i, w in enumerate(coefficients))
    return window


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window, periodic by default (NOTE [ Symmetric and periodic windows ]).

    >>> import ember
    >>> ember.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    dtype = _factory_checks("hann_window", window_length, dtype)
    return _finish(_periodic(_cosines([0.5, 0.5]), window_length, periodic), dtype, device, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """``alpha - beta cos(2 pi n / (N - 1))``, periodic by default."""
    dtype = _factory_checks("hamming_window", window_length, dtype)
    return _finish(_periodic(_cosines([alpha, beta]), window_length, periodic), dtype, device, requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window, periodic by default."""
    dtype = _factory_checks("blackman_window", window_length, dtype)
    return _finish(_periodic(_cosines([0.42, 0.5, 0.08]), window_length, periodic), dtype, device, requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular window, periodic by default."""
    dtype = _factory_checks("bartlett_window", window_length, dtype)
    triangle = lambda M: 1 - np.abs(-1 + 2 * np.arange(M) / (M - 1))  # noqa: E731
    return _finish(_periodic(triangle, window_length, periodic), dtype, device, requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """The Kaiser window, periodic by default."""
    dtype = _factory_checks("kaiser_window", window_length, dtype)
    shape = lambda M: np.i0(beta * np.sqrt(np.maximum(1 - (-1 + 2 * np.arange(M) / (M - 1)) ** 2, 0.0))) / np.i0(beta)  # noqa: E731,E501
    return _finish(_periodic(shape, window_length, periodic), dtype, device, requires_grad)
