"""``fractional_max_pool2d`` and ``fractional_max_pool3d`` (ember/native/pooling/
fractional_max_pool.py) and their layers against torch: values, indices and gradients
for float32 and float64 with given samples (the interval formula, float32 rounding
included), output_size and output_ratio, unbatched, non-contiguous and empty-batch
inputs, NaN windows, samples drawn from the generator (the same seed, the same windows
as torch), errors."""

import numpy as np
import pytest
import torch
from autograd_parity import assert_same_error

import ember
from ember.testing import assert_parity, make_tensor


def _samples(shape, dtype, seed=3):
    return np.random.default_rng(seed).random(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", [{"output_size": (4, 3)}, {"output_size": 5}, {"output_ratio": (0.5, 0.3)},
                                     {"output_size": (9, 2)}, {"output_size": 1}])
def test_fractional_max_pool2d_matches_torch(options, dtype):
    x, u = make_tensor((2, 3, 10, 7), dtype), _samples((2, 3, 2), dtype)
    kernel = (2, 3) if options.get("output_size") != (9, 2) else 2

    def pool(lib, t, s=u):
        return lib.nn.functional.fractional_max_pool2d(t, kernel, return_indices=True, _random_samples=lib.tensor(s),
                                                       **options)

    assert_parity(pool, x, grad_rtol=0, grad_atol=0)
    assert_parity(pool, x, noncontiguous=True)
    assert_parity(lambda lib, t: pool(lib, t, u[:1]), x[0])  # unbatched: (C, H, W)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", [{"output_size": (3, 4, 2)}, {"output_ratio": (0.5, 0.7, 0.6)}])
def test_fractional_max_pool3d_matches_torch(options, dtype):
    x, u = make_tensor((2, 2, 6, 7, 5), dtype), _samples((2, 2, 3), dtype)

    def pool(lib, t, s=u):
        return lib.nn.functional.fractional_max_pool3d(t, (2, 3, 2), return_indices=True,
                                                       _random_samples=lib.tensor(s), **options)

    assert_parity(pool, x)
    assert_parity(pool, x, noncontiguous=True)
    assert_parity(lambda lib, t: pool(lib, t, u[:1]), x[1])


def test_interval_rounding_in_float32_matches_torch():
    # many samples on a long dimension: the starts depend on float32 rounding of (i + u) * alpha
    x, u = make_tensor((4, 50, 97, 3), "float32"), _samples((4, 50, 2), "float32", seed=7)
    pool = lambda lib, t, s: lib.nn.functional.fractional_max_pool2d(t, (3, 1), output_size=(41, 3),  # noqa: E731
                                                                      return_indices=True, _random_samples=s)
    assert_parity(pool, x, u, grad=False)  # no grad: samples that require grad are refused


def test_samples_with_a_larger_batch_and_empty_batch_match_torch():
    x, u = make_tensor((2, 3, 8, 8), "float64"), _samples((5, 3, 2), "float64")
    assert_parity(lambda lib, t: lib.nn.functional.fractional_max_pool2d(t, 2, output_size=3,
                                                                         _random_samples=lib.tensor(u)), x)
    assert_parity(lambda lib, t: lib.nn.functional.fractional_max_pool2d(t, 2, output_size=3,
                                                                         _random_samples=lib.tensor(u[:0])),
                  np.zeros((0, 3, 8, 8)))
    assert_parity(lambda lib, t: lib.nn.functional.fractional_max_pool3d(t, 2, output_size=0,
                                                                         _random_samples=lib.zeros(1, 3, 3)),
                  np.zeros((1, 3, 4, 4, 4)))


def test_nan_wins_its_window_as_in_torch():
    x = make_tensor((1, 2, 6, 6), "float64")
    x[0, 0, 2, 3] = x[0, 1, 4, 4] = x[0, 1, 5, 5] = np.nan
    u = _samples((1, 2, 2), "float64")
    assert_parity(lambda lib, t: lib.nn.functional.fractional_max_pool2d(t, 3, output_size=3, return_indices=True,
                                                                         _random_samples=lib.tensor(u)), x)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_samples_drawn_from_the_generator_match_torch_for_one_seed(dtype):
    x = make_tensor((3, 4, 11, 9), dtype.name)
    torch.manual_seed(5)
    expected = torch.nn.functional.fractional_max_pool2d(torch.from_numpy(x), 3, output_ratio=(0.6, 0.6),
                                                         return_indices=True)
    ember.manual_seed(5)
    actual = ember.nn.functional.fractional_max_pool2d(ember.tensor(x), 3, output_ratio=(0.6, 0.6),
                                                       return_indices=True)
    np.testing.assert_array_equal(actual[0].numpy(), expected[0].numpy())
    np.testing.assert_array_equal(actual[1].numpy(), expected[1].numpy())
    torch.manual_seed(6)
    expected = torch.nn.FractionalMaxPool3d(2, output_size=(2, 4, 3))(torch.from_numpy(x))
    ember.manual_seed(6)
    np.testing.assert_array_equal(ember.nn.FractionalMaxPool3d(2, output_size=(2, 4, 3))(ember.tensor(x)).numpy(),
                                  expected.numpy())


def test_layers_match_torch():
    x, u = make_tensor((2, 3, 9, 8), "float32"), _samples((2, 3, 2), "float32")
    assert_parity(lambda lib, t: lib.nn.FractionalMaxPool2d((3, 2), output_size=(4, 5),
                                                            _random_samples=lib.tensor(u))(t), x)
    pool = ember.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)
    assert repr(pool) == repr(torch.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True))
    assert list(pool.state_dict()) == []


def test_errors_match_torch():
    def call(name, shape, *args, samples=None, **kwargs):
        def program(lib):
            s = None if samples is None else lib.zeros(*samples[0], dtype=samples[1] and getattr(lib, samples[1]))
            fn = getattr(lib.nn.functional, name)
            return fn(lib.ones(*shape), *args, _random_samples=s, **kwargs)
        return program

    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2, output_ratio=(0.5, 0.5, 0.5)))
    assert_same_error(call("fractional_max_pool2d", (7, 6), 2, output_size=3, samples=((1, 1, 2), "float32")))
    assert_same_error(call("fractional_max_pool2d", (2, 0, 7, 6), 2, output_size=3, samples=((2, 0, 2), None)))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2, output_size=7, samples=((2, 3, 2), None)))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2, output_size=(6, 6), samples=((2, 3, 2), None)))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), (2, 2, 2), output_size=3,
                           samples=((2, 3, 2), None)))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2, output_size=(3, 3, 3),
                           samples=((2, 3, 2), None)))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2, output_size=3, samples=((2, 3, 3), None)))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2, output_size=3, samples=((1, 3, 2), None)))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2, output_size=3, samples=((2, 2, 2), None)))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2, output_size=3, samples=((2, 3, 2, 1), None)))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2, output_size=3,
                           samples=((2, 3, 2), "float64")))
    assert_same_error(call("fractional_max_pool3d", (2, 3, 7, 6, 5), 2, output_size=(6, 5, 4),
                           samples=((2, 3, 3), None)))
    assert_same_error(call("fractional_max_pool3d", (2, 3, 7, 6, 5), 2, output_size=(3, 5, 3),
                           samples=((2, 3, 3), None)))
    assert_same_error(call("fractional_max_pool3d", (7, 6, 5), 2, output_size=3, samples=((1, 1, 3), None)))
    assert_same_error(call("fractional_max_pool3d", (2, 3, 0, 6, 5), 2, output_size=3, samples=((2, 3, 3), None)))
    assert_same_error(call("fractional_max_pool3d", (2, 3, 7, 6, 5), 2, output_size=3, samples=((2, 3, 2), None)))
    assert_same_error(call("fractional_max_pool2d", (2, 3, 7, 6), 2, output_ratio=0.5))
    assert_same_error(lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.ones(1, 1, 4, 4), 2, output_size=2, _random_samples=lib.zeros(1, 1, 2, requires_grad=True)))
    assert_same_error(lambda lib: lib.nn.FractionalMaxPool2d(2))
    assert_same_error(lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5))
    assert_same_error(lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5))
    assert_same_error(lambda lib: lib.nn.FractionalMaxPool3d((2, 0, 1), output_size=3))
    assert_same_error(lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 1.0)))
