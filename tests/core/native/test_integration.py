"""``trapezoid``, ``trapz`` and ``cumulative_trapezoid`` against torch
(ember/native/integration.py): even spacing (``dx``), sample points ``x`` (1-d along
``dim``, or broadcast), every dim, values and gradients of ``y`` and ``x``, integers,
non-contiguous, empty and 0-d inputs, errors."""

import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor

FUNCTIONS = ["trapezoid", "trapz", "cumulative_trapezoid"]


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_even_spacing_matches_torch(name, dtype, dim):
    y = make_tensor((3, 4, 5), dtype)
    assert_parity(lambda lib, t: getattr(lib, name)(t, dim=dim), y)
    assert_parity(lambda lib, t: getattr(lib, name)(t, dx=0.3, dim=dim), y, noncontiguous=True)


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sample_points_match_torch_with_gradients(name, dtype):
    y = make_tensor((3, 4, 5), dtype)
    assert_parity(lambda lib, t, x: getattr(lib, name)(t, x, dim=1), y, make_tensor((4,), dtype, seed=2))
    assert_parity(lambda lib, t, x: getattr(lib, name)(t, x), y, make_tensor((4, 5), dtype, seed=3),
                  noncontiguous=True)
    assert_parity(lambda lib, t, x: getattr(lib, name)(t, x, dim=0), y, make_tensor((3, 4, 5), dtype, seed=4))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_integers_empty_and_short_inputs_match_torch(name):
    assert_parity(lambda lib, t: getattr(lib, name)(t), make_tensor((2, 6), "int64"), grad=False)
    assert_parity(lambda lib, t: getattr(lib, name)(t), make_tensor((2, 0), "float64"))
    assert_parity(lambda lib, t: getattr(lib, name)(t, dim=0), make_tensor((1, 3), "float64"))
    assert_parity(lambda lib, t: getattr(lib, name)(t, dim=0), make_tensor((0, 3), "float64"))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_errors_match_torch(name):
    assert_same_error(lambda lib: getattr(lib, name)(lib.ones(3, dtype=lib.bool)))
    assert_same_error(lambda lib: getattr(lib, name)(lib.ones(3), lib.ones(2)))
    assert_same_error(lambda lib: getattr(lib, name)(lib.ones(3), dim=2))
    assert_same_error(lambda lib: getattr(lib, name)(lib.tensor(1.0)))
