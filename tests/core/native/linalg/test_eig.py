"""linalg.eig and linalg.eigvals (ember/native/linalg/eig.py), and eigh's complex
support (eigh.py), against torch: values (eigenvectors compared through |V|, free of
their phase, and as LAPACK's vectors themselves), gradients of phase-invariant losses,
the gauge check's error, batches, non-contiguous and empty inputs, errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

DTYPES = ["float32", "float64", "complex64", "complex128"]
TOLERANCE = {"float32": dict(rtol=1e-3, atol=1e-4), "complex64": dict(rtol=1e-3, atol=1e-4),
             "float64": dict(rtol=1e-7, atol=1e-9), "complex128": dict(rtol=1e-7, atol=1e-9)}


def _matrix(shape, dtype, seed=0):
    return make_tensor(shape, dtype, seed=seed)


def _phase_free(lib, x):
    values, vectors = lib.linalg.eig(x)
    return values, vectors.abs()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0)])
def test_eig_matches_torch(dtype, shape):
    a = _matrix(shape, dtype)
    tol = TOLERANCE[dtype]
    assert_parity(_phase_free, a, **tol)
    assert_parity(lambda lib, x: lib.linalg.eigvals(x), a, **tol)
    if shape[-1] > 1:
        assert_parity(_phase_free, a, noncontiguous=True, **tol)
        assert_parity(lambda lib, x: lib.linalg.eigvals(x.mT), a, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_is_complex_as_torchs(dtype):
    a = _matrix((3, 3), dtype)
    values, vectors = ember.linalg.eig(ember.tensor(a))
    expected = torch.linalg.eig(torch.tensor(a))
    assert str(values.dtype) == str(expected.eigenvalues.dtype).replace("torch", "ember")
    assert str(vectors.dtype) == str(expected.eigenvectors.dtype).replace("torch", "ember")
    # geev in both: the same unit vectors up to one phase each (LAPACK builds may differ by a sign)
    overlaps = (vectors.numpy().conj() * expected.eigenvectors.numpy()).sum(0)
    np.testing.assert_allclose(np.abs(overlaps), np.ones(3), **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eig_gradient_of_phase_free_losses(dtype):
    a = _matrix((2, 4, 4), dtype, seed=3)
    assert_parity(lambda lib, x: (lib.linalg.eig(x).eigenvalues, lib.linalg.eig(x).eigenvectors.abs()), a,
                  **TOLERANCE[dtype])
    assert_parity(lambda lib, x: lib.linalg.eigvals(x), a, **TOLERANCE[dtype])
    assert_parity(lambda lib, x: lib.linalg.eig(x).eigenvectors.abs(), a, **TOLERANCE[dtype])
    # V diag(L) V^-1 is A again: its gradient is the identity's, whatever the phases
    assert_parity(lambda lib, x: lib.linalg.eig(x)[1] @ lib.linalg.eig(x)[0].diag_embed()
                  @ lib.linalg.inv(lib.linalg.eig(x)[1]), a, **TOLERANCE[dtype])


def test_eig_gradcheck():
    a = ember.tensor(_matrix((3, 3), "float64", seed=5), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: ember.linalg.eigvals(x).real, [a], eps=1e-6, atol=1e-5)
    assert ember.autograd.gradcheck(lambda x: ember.linalg.eig(x).eigenvectors.abs(), [a], eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name", ["eig", "eigh"])
def test_phase_dependent_loss_is_refused_as_torch(name):
    a = _matrix((3, 3), "complex128", seed=2)
    messages = []
    for lib in (torch, ember):
        x = lib.tensor(a, requires_grad=True)
        vectors = getattr(lib.linalg, name)(x)[1]
        with pytest.raises(RuntimeError) as error:
            lib.autograd.grad(vectors.sum().abs(), [x])
        messages.append(str(error.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 0)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_complex_eigh_matches_torch(dtype, shape, uplo):
    a = _matrix(shape, dtype, seed=1)
    tol = TOLERANCE[dtype]
    assert_parity(lambda lib, x: (lib.linalg.eigh(x, UPLO=uplo)[0], lib.linalg.eigh(x, UPLO=uplo)[1].abs()), a,
                  **tol)
    assert_parity(lambda lib, x: lib.linalg.eigvalsh(x, UPLO=uplo), a, noncontiguous=True, **tol)


@pytest.mark.parametrize("matrix, error", [
    (np.ones((2, 3)), "square matrices"), (np.ones(3), "at least 2 dimensions"),
    (np.array([[np.nan, 1.0], [1.0, 1.0]]), "should not contain infs or NaNs"),
    (np.array([[np.inf, 1.0], [1.0, 1.0]]), "should not contain infs or NaNs")])
def test_errors_match_torch(matrix, error):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=error):
            lib.linalg.eig(lib.tensor(matrix))
    # torch's eigvals skips eig's finiteness check (and crashes in MKL on a NaN); ember's
    # runs the same kernel as eig, so it raises eig's error
    with pytest.raises(RuntimeError, match=error):
        ember.linalg.eigvals(ember.tensor(matrix))
    with pytest.raises(RuntimeError):
        torch.linalg.eig(torch.ones(2, 2, dtype=torch.int64))
    with pytest.raises(RuntimeError):
        ember.linalg.eig(ember.ones(2, 2, dtype=ember.int64))
