"""atleast_1d/2d/3d, dstack, column_stack, hsplit/vsplit/dsplit (ember/native/shape/shape.py,
splitting.py), vander and einsum's sublist form against torch."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (0,)])
def test_atleast_matches_torch(shape):
    x = make_tensor(shape, "float64")
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        assert_parity(lambda lib, t: getattr(lib, name)(t), x)
        assert_parity(lambda lib, t: getattr(lib, name)(t, t * 2), x)
        assert_parity(lambda lib, t: getattr(lib, name)([t]), x)


@pytest.mark.parametrize("shapes", [[(3,), (3,)], [(2, 3), (2, 3)], [(), ()], [(3,), (3, 2)]])
def test_dstack_and_column_stack(shapes):
    xs = [make_tensor(s, "float32", seed=i) for i, s in enumerate(shapes)]
    assert_parity(lambda lib, *ts: lib.column_stack(ts), *xs, noncontiguous=True)
    if len({len(s) for s in shapes}) == 1:
        assert_parity(lambda lib, *ts: lib.dstack(ts), *xs)


@pytest.mark.parametrize("split", [2, [1, 3], 3])
def test_directional_splits(split):
    x = make_tensor((4, 6, 2), "float64")
    assert_parity(lambda lib, t: lib.hsplit(t, split), x)
    assert_parity(lambda lib, t: t.vsplit(split), x)
    assert_parity(lambda lib, t: lib.dsplit(t, 2 if split == 3 else split), x)
    assert_parity(lambda lib, t: lib.hsplit(t, split if split != 3 else 2), make_tensor((6,), "float64"))


def test_errors_match_torch():
    calls = [lambda lib: lib.hsplit(lib.tensor(1.0), 2), lambda lib: lib.vsplit(lib.ones(3), 3),
             lambda lib: lib.hsplit(lib.ones(3, 4), 3), lambda lib: lib.dstack([]),
             lambda lib: lib.column_stack([]), lambda lib: lib.vander(lib.ones(2, 2)),
             lambda lib: lib.vander(lib.ones(2), N=-1), lambda lib: lib.linalg.vander(lib.ones(2), N=1)]
    for call in calls:
        with pytest.raises(RuntimeError) as expected:
            call(torch)
        with pytest.raises(RuntimeError, match=str(expected.value)[:20]):
            call(ember)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_vander_matches_torch(dtype):
    x = make_tensor((4,), dtype, seed=2)
    assert_parity(lambda lib, t: lib.vander(t), x, grad=False)
    # torch's own vander backward fails (its cumprod is written in place): ember's
    # gradient is checked against finite differences instead.
    if dtype == "float64":
        assert ember.autograd.gradcheck(lambda t: ember.vander(t, N=4), (ember.tensor(x, requires_grad=True),))
    # torch's own backward fails for these (its cumprod is written in place): values only
    assert_parity(lambda lib, t: lib.vander(t, N=3, increasing=True), x, grad=False)
    assert_parity(lambda lib, t: lib.vander(t, N=0), x, grad=False)
    assert_parity(lambda lib, t: lib.linalg.vander(t, N=5), make_tensor((2, 3), dtype, seed=3), grad=False)


def test_einsum_sublist_form():
    a, b = make_tensor((2, 3), "float64", seed=1), make_tensor((3, 4), "float64", seed=2)
    assert_parity(lambda lib, x, y: lib.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b)
    assert_parity(lambda lib, x, y: lib.einsum(x, [30, 1], y, [1, 2]), a, b)
    assert_parity(lambda lib, x, y: lib.einsum(x, [Ellipsis, 1], y, [1, 2], [Ellipsis, 2]), a, b)
    with pytest.raises(RuntimeError):
        ember.einsum(ember.ones(2), [60])
    np.testing.assert_allclose(ember.einsum(ember.tensor(a), [0, 0 + 1]).numpy(), a)
