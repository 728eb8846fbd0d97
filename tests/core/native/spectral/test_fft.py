"""ember.fft against torch.fft: values and gradients of every transform in float32,
float64, complex64 and complex128, every ``norm``, ``n``/``s``/``dim``, round trips,
the helpers and the errors (ember/native/spectral/)."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

DTYPES = ["float32", "float64", "complex64", "complex128"]
NORMS = [None, "backward", "forward", "ortho"]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
TOLERANCE = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-10, "complex128": 1e-10}


def _parity(fn, array, dtype, noncontiguous=False):
    tol = TOLERANCE[dtype]
    assert_parity(fn, array, rtol=tol, atol=tol, noncontiguous=noncontiguous)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("n, dim", [(None, -1), (3, -1), (8, -1), (None, 0)])
def test_one_dimensional_transforms(name, norm, dtype, n, dim):
    # torch refuses a complex input to rfft/ihfft; assert_parity then wants ember to refuse it too
    _parity(lambda lib, x: getattr(lib.fft, name)(x, n=n, dim=dim, norm=norm), make_tensor((4, 5), dtype), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("s, dim", [(None, None), ((3, 6), None), ((5, -1), None), (None, (0, 2))])
def test_multi_dimensional_transforms(name, norm, dtype, s, dim):
    if dim is None and name.endswith("2"):
        dim = (-2, -1)
    _parity(lambda lib, x: getattr(lib.fft, name)(x, s=s, dim=dim, norm=norm), make_tensor((2, 4, 5), dtype), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["fft", "rfft", "hfft", "fftn", "irfftn"])
def test_non_contiguous_inputs(name, dtype):
    _parity(lambda lib, x: getattr(lib.fft, name)(x), make_tensor((3, 6), dtype), dtype, noncontiguous=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm", NORMS)
def test_round_trips_return_the_signal_and_its_gradient(dtype, norm):
    # values and gradients of each transform followed by its inverse, against torch
    x = make_tensor((3, 8), dtype)
    _parity(lambda lib, t: lib.fft.ifft(lib.fft.fft(t, norm=norm), norm=norm).real, x, dtype)
    _parity(lambda lib, t: lib.fft.irfft(lib.fft.rfft(t, norm=norm), n=8, norm=norm), x, dtype)
    _parity(lambda lib, t: lib.fft.irfftn(lib.fft.rfftn(t, norm=norm), s=(3, 8), norm=norm), x, dtype)
    _parity(lambda lib, t: lib.fft.hfft(lib.fft.ihfft(t, norm=norm), n=8, norm=norm), x, dtype)
    signal = ember.from_numpy(x)
    back = ember.fft.irfft(ember.fft.rfft(signal, norm=norm), n=8, norm=norm)
    np.testing.assert_allclose(back.numpy(), x, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_output_dtypes_keep_the_precision(dtype):
    x = ember.from_numpy(make_tensor((4,), dtype))
    assert ember.fft.fft(x).dtype is getattr(ember, dtype).to_complex()
    assert ember.fft.irfft(ember.fft.rfft(x)).dtype is getattr(ember, dtype)
    assert ember.fft.fft(ember.tensor([1, 2, 3])).dtype is ember.complex64  # integers: the default float


@pytest.mark.parametrize("shape", [(), (0,), (1,)])
def test_zero_dim_empty_and_single_element(shape):
    assert_parity(lambda lib, x: lib.fft.fft(x), make_tensor(shape, "float64"))
    assert_parity(lambda lib, x: lib.fft.fftn(x), make_tensor(shape, "complex128"))


@pytest.mark.parametrize("n", [1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.25])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_frequencies(n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        got = getattr(ember.fft, name)(n, d, dtype=dtype and getattr(ember, dtype))
        expected = getattr(torch.fft, name)(n, d, dtype=dtype and getattr(torch, dtype))
        assert got.dtype.name == str(expected.dtype).removeprefix("torch.")
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), ()])
def test_fftshift_and_ifftshift(dtype, dim):
    for name in ("fftshift", "ifftshift"):
        _parity(lambda lib, x: getattr(lib.fft, name)(x, dim=dim), make_tensor((4, 5), dtype), dtype)


@pytest.mark.parametrize("call", [
    lambda lib: lib.fft.fft(lib.ones(4), norm="bad"),
    lambda lib: lib.fft.fft(lib.ones(4), n=0),
    lambda lib: lib.fft.rfft(lib.ones(4, dtype=lib.complex64)),
    lambda lib: lib.fft.fft(lib.ones(4), dim=2),
    lambda lib: lib.fft.fftn(lib.ones(4, 4), dim=(0, 0)),
    lambda lib: lib.fft.fftn(lib.ones(4, 4), s=(2, 2), dim=(0,)),
    lambda lib: lib.fft.irfft(lib.ones(1)),
    lambda lib: lib.fft.fft(lib.ones(4, dtype=lib.float16)),
])
def test_errors_match_torch_s_types(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)):
        call(ember)
