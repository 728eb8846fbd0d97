"""ember.signal.windows and the top-level ``*_window`` factories against torch's, for
every length from 0 up, both symmetries, float32 and float64, the window's parameters
and the errors (ember/signal/windows.py)."""

import numpy as np
import pytest
import torch

import ember

WINDOWS = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann", "kaiser", "nuttall"]
PARAMETERS = {"general_cosine": {"a": [0.46, 0.23, 0.31]}, "general_hamming": {"alpha": 0.6}, "kaiser": {"beta": 3.5},
              "gaussian": {"std": 0.7}, "exponential": {"tau": 2.5}}
FACTORIES = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def _close(got, expected):
    assert got.dtype.name == str(expected.dtype).removeprefix("torch.")
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", WINDOWS + ["general_cosine", "general_hamming"])
@pytest.mark.parametrize("M", [0, 1, 2, 7, 10])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_windows_match_torch(name, M, sym, dtype):
    for kwargs in ({}, PARAMETERS.get(name)):
        if kwargs is None or (name == "general_cosine" and not kwargs):
            continue
        got = getattr(ember.signal.windows, name)(M, sym=sym, dtype=dtype and getattr(ember, dtype), **kwargs)
        expected = getattr(torch.signal.windows, name)(M, sym=sym, dtype=dtype and getattr(torch, dtype), **kwargs)
        _close(got, expected)


def test_exponential_with_a_centre():
    _close(ember.signal.windows.exponential(6, sym=False, center=1.0),
           torch.signal.windows.exponential(6, sym=False, center=1.0))


@pytest.mark.parametrize("name", FACTORIES)
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_top_level_factories_match_torch(name, length, periodic, dtype):
    got = getattr(ember, name)(length, periodic, dtype=getattr(ember, dtype))
    _close(got, getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype)))


def test_factory_parameters():
    _close(ember.hamming_window(6, True, 0.3, 0.2), torch.hamming_window(6, True, 0.3, 0.2))
    _close(ember.kaiser_window(7, False, 4.0), torch.kaiser_window(7, False, 4.0))
    assert ember.hann_window(4, requires_grad=True).requires_grad


@pytest.mark.parametrize("call", [
    lambda lib: lib.signal.windows.hann(-1),
    lambda lib: lib.signal.windows.hann(4, dtype=lib.int64),
    lambda lib: lib.signal.windows.kaiser(4, beta=-1.0),
    lambda lib: lib.signal.windows.gaussian(4, std=0.0),
    lambda lib: lib.signal.windows.exponential(4, tau=0.0),
    lambda lib: lib.signal.windows.exponential(4, center=1.0),
    lambda lib: lib.signal.windows.general_cosine(4, a=[]),
])
def test_errors_match_torch(call):
    with pytest.raises(ValueError) as expected:
        call(torch)
    with pytest.raises(ValueError, match=str(expected.value).split(",")[0].split(":")[0][:30]):
        call(ember)
