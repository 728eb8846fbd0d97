"""ember.stft and ember.istft against torch's: values and gradients (of the signal and
the window) in float32 and float64, for ``center``, ``pad_mode``, ``hop_length``,
``win_length``, ``normalized``, ``onesided``, ``return_complex``, batches, and the round
trip (ember/native/spectral/stft.py)."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

TOLERANCE = {"float32": 1e-4, "float64": 1e-10}
SETTINGS = [dict(n_fft=8), dict(n_fft=8, hop_length=3, center=False), dict(n_fft=8, win_length=6),
            dict(n_fft=10, normalized=True, onesided=False), dict(n_fft=8, pad_mode="constant"),
            dict(n_fft=7, hop_length=2)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(40,), (2, 37)])
@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("windowed", [False, True])
def test_stft_values_and_gradients(dtype, shape, settings, windowed):
    window = make_tensor((settings.get("win_length", settings["n_fft"]),), dtype, low=0.1, high=1.0, seed=3)
    tol = TOLERANCE[dtype]

    def fn(lib, x, w):
        return lib.stft(x, window=w if windowed else None, return_complex=True, **settings)
    assert_parity(fn, make_tensor(shape, dtype), window, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("length", [None, 40])
def test_istft_values_and_gradients(dtype, settings, length):
    settings = {k: v for k, v in settings.items() if k != "pad_mode"}
    n_fft = settings["n_fft"]
    window = torch.hann_window(settings.get("win_length", n_fft), dtype=getattr(torch, dtype)).numpy()
    if not settings.get("center", True):
        window = window + 0.5  # a Hann window's zero end would leave the first sample uncovered (NOLA)
    spectrum = torch.stft(torch.from_numpy(make_tensor((40,), dtype)), window=torch.from_numpy(window),
                          return_complex=True, **settings).numpy()
    tol = TOLERANCE[dtype]
    assert_parity(lambda lib, s, w: lib.istft(s, window=w, length=length, **settings), spectrum, window,
                  rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_round_trip_returns_the_signal(dtype):
    x = ember.from_numpy(make_tensor((2, 64), dtype))
    window = ember.hann_window(16, dtype=getattr(ember, dtype))
    spectrum = ember.stft(x, 16, hop_length=4, window=window, return_complex=True)
    back = ember.istft(spectrum, 16, hop_length=4, window=window, length=64)
    np.testing.assert_allclose(back.numpy(), x.numpy(), rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


def test_return_complex_false_gives_real_pairs_with_torch_s_warning():
    x = make_tensor((20,), "float64")
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        got = ember.stft(ember.from_numpy(x), 8, return_complex=False)
    with pytest.warns(UserWarning):
        expected = torch.stft(torch.from_numpy(x), 8, return_complex=False)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


def test_complex_signal_is_two_sided():
    assert_parity(lambda lib, x: lib.stft(x, 8, hop_length=2), make_tensor((24,), "complex128"))


@pytest.mark.parametrize("call", [
    lambda lib: lib.stft(lib.ones(20), 8),
    lambda lib: lib.stft(lib.ones(20), 8, hop_length=0, return_complex=True),
    lambda lib: lib.stft(lib.ones(20), 8, window=lib.ones(5), return_complex=True),
    lambda lib: lib.stft(lib.ones(2, 2, 20), 8, return_complex=True),
    lambda lib: lib.istft(lib.ones(5, 4), 8),
    lambda lib: lib.istft(lib.zeros(5, 4, dtype=lib.complex64), 8, window=lib.zeros(8)),
])
def test_errors_match_torch(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError):
        call(ember)
