"""``diagonal`` (a view), ``diag``, ``diag_embed``, ``tril``/``triu`` against torch
(ember/native/shape/diagonal.py, triangular.py): values, gradients, float32/64,
non-contiguous, empty and batched inputs, errors, view-ness."""

import numpy as np
import pytest
import torch
from autograd_parity import assert_same_error

import ember
from ember.testing import assert_parity, make_tensor

SHAPES = [(3, 3), (2, 5), (5, 2), (4, 3, 3), (2, 3, 4, 5), (0, 3), (3, 0)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("offset", [0, 1, -1, 2, -4, 7])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_diagonal_matches_torch(dtype, shape, offset, noncontiguous):
    x = make_tensor(shape, dtype)
    assert_parity(lambda lib, t: t.diagonal(offset), x, noncontiguous=noncontiguous)
    if len(shape) >= 3:
        assert_parity(lambda lib, t: lib.diagonal(t, offset, -1, 0), x, noncontiguous=noncontiguous)
        assert_parity(lambda lib, t: lib.diagonal(t, offset, 2, 1) * 2, x)


def test_diagonal_is_a_view_sharing_memory_and_version():
    x = ember.zeros(3, 3)
    d = x.diagonal()
    assert d._is_view() and d._base is x
    d.add_(1)
    assert x.tolist() == torch.eye(3).tolist() and x._version == d._version == 1
    assert d.stride() == torch.zeros(3, 3).diagonal().stride()
    assert ember.zeros(2, 3, 4).diagonal(1, 0, 2).stride() == torch.zeros(2, 3, 4).diagonal(1, 0, 2).stride()


def test_diagonal_double_backward_matches_torch():
    x = make_tensor((3, 4), "float64")
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad((t.diagonal(1) ** 3).sum(), t, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), t)
        if lib is ember:
            ours = (g.detach().numpy(), gg.numpy())
        else:
            np.testing.assert_allclose(ours[0], g.detach().numpy())
            np.testing.assert_allclose(ours[1], gg.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shape", [(3,), (1,), (0,), (3, 3), (2, 4), (0, 0)])
@pytest.mark.parametrize("offset", [0, 1, -2])
def test_diag_matches_torch(dtype, shape, offset):
    assert_parity(lambda lib, t: lib.diag(t, offset), make_tensor(shape, dtype))


@pytest.mark.parametrize("dims", [(-2, -1), (0, 1), (0, 2), (2, 0)])
@pytest.mark.parametrize("offset", [0, 1, -1])
def test_diag_embed_matches_torch(dims, offset):
    assert_parity(lambda lib, t: lib.diag_embed(t, offset, *dims), make_tensor((2, 3), "float64"))


@pytest.mark.parametrize("fn", ["tril", "triu"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [0, 1, -1, 3, -5])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_triangles_match_torch(fn, shape, k, dtype):
    x = make_tensor(shape, dtype)
    assert_parity(lambda lib, t: getattr(lib, fn)(t, k), x)
    assert_parity(lambda lib, t: getattr(t, fn)(diagonal=k), x, noncontiguous=True)
    assert_parity(lambda lib, t: getattr(t.clone(), fn + "_")(k) * 1, x)


ERRORS = {
    "diagonal_1d": lambda lib: lib.ones(3).diagonal(),
    "diagonal_same_dims": lambda lib: lib.ones(2, 2).diagonal(0, 1, 1),
    "diagonal_bad_dim": lambda lib: lib.ones(2, 2).diagonal(0, 0, 2),
    "diag_3d": lambda lib: lib.ones(2, 2, 2).diag(),
    "diag_embed_same_dims": lambda lib: lib.ones(3).diag_embed(0, 0, 0),
    "tril_1d": lambda lib: lib.ones(3).tril(),
    "triu_0d": lambda lib: lib.tensor(1.0).triu(),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])
