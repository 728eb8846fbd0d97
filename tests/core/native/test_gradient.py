"""``gradient`` against torch (ember/native/gradient.py): even spacing (one number, one
per dim), coordinates, edge orders 1 and 2, chosen dims, values and gradients,
integers, non-contiguous inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("edge_order", [1, 2])
def test_even_spacing_matches_torch(dtype, edge_order):
    x = make_tensor((4, 5, 3), dtype)
    assert_parity(lambda lib, t: lib.gradient(t, edge_order=edge_order), x)
    assert_parity(lambda lib, t: lib.gradient(t, spacing=0.5, dim=1, edge_order=edge_order), x, noncontiguous=True)
    assert_parity(lambda lib, t: lib.gradient(t, spacing=[2.0, 0.3], dim=(0, -1), edge_order=edge_order), x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("edge_order", [1, 2])
def test_coordinates_match_torch(dtype, edge_order):
    x = make_tensor((4, 5), dtype)
    points = [np.array([0.0, 0.5, 1.7, 2.0], dtype), np.array([-1.0, 0.0, 0.1, 2.0, 3.5], dtype)]
    assert_parity(lambda lib, t: lib.gradient(t, spacing=[lib.tensor(p) for p in points], edge_order=edge_order), x)
    assert_parity(lambda lib, t: lib.gradient(t, spacing=[lib.tensor(points[1])], dim=1, edge_order=edge_order), x,
                  noncontiguous=True)


def test_integers_and_one_dim_match_torch():
    assert_parity(lambda lib, t: lib.gradient(t), make_tensor((6,), "int64"), grad=False)
    assert_parity(lambda lib, t: lib.gradient(t, edge_order=2), make_tensor((3,), "float64"))


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.gradient(lib.ones(1)))
    assert_same_error(lambda lib: lib.gradient(lib.ones(2), edge_order=2))
    assert_same_error(lambda lib: lib.gradient(lib.ones(3), edge_order=3))
    assert_same_error(lambda lib: lib.gradient(lib.ones(3), spacing=[1.0, 2.0]))
    assert_same_error(lambda lib: lib.gradient(lib.ones(3, 3), spacing=[1.0, 2.0, 3.0], dim=(0, 1)))
