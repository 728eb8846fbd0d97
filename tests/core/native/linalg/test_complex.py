"""The linalg functions on complex matrices (ember/native/linalg/*.py) against torch:
values and gradients in torch's convention (NOTE [ Complex gradients ] in
ember/autograd/graph.py), complex64 and complex128, batched, non-contiguous and empty
inputs; decompositions whose factors carry a phase per vector (qr's Q is LAPACK's
fixed one; svd's U and V are not) are compared through phase-free functions of them."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

COMPLEX = ["complex64", "complex128"]
TOLERANCE = {"complex64": dict(rtol=1e-3, atol=1e-4), "complex128": dict(rtol=1e-7, atol=1e-9)}


def general(shape, dtype, seed=0):
    """Well conditioned: a random complex matrix plus 4 I."""
    a = make_tensor(shape, dtype, seed=seed)
    return (a + 4 * np.eye(shape[-2], shape[-1])).astype(dtype) if min(shape[-2:]) else a


def hermitian_positive_definite(shape, dtype, seed=0):
    a = make_tensor(shape, "complex128", seed=seed)
    return (a @ np.swapaxes(a, -1, -2).conj() + shape[-1] * np.eye(shape[-1])).astype(dtype)


SQUARE = [(3, 3), (2, 4, 4), (0, 0)]


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", SQUARE)
def test_inverse_determinant_and_solve(dtype, shape):
    a, tol = general(shape, dtype), TOLERANCE[dtype]
    b = make_tensor(shape[:-1] + (2,), dtype, seed=1)
    assert_parity(lambda lib, x: lib.linalg.inv(x), a, noncontiguous=True, **tol)
    assert_parity(lambda lib, x: lib.linalg.det(x), a, **tol)
    assert_parity(lambda lib, x: tuple(lib.linalg.slogdet(x)), a, **tol)
    assert_parity(lambda lib, x: lib.logdet(x), a, **tol)
    assert_parity(lambda lib, x, y: lib.linalg.solve(x, y), a, b, **tol)
    assert_parity(lambda lib, x, y: lib.linalg.lu_solve(*lib.linalg.lu_factor(x), y, adjoint=True), a, b, **tol)
    assert_parity(lambda lib, x, y: lib.linalg.lu_solve(*lib.linalg.lu_factor(x), y.mT, left=False), a, b, **tol)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", SQUARE)
def test_cholesky_family(dtype, shape):
    a, tol = hermitian_positive_definite(shape, dtype), TOLERANCE[dtype]
    b = make_tensor(shape[:-1] + (2,), dtype, seed=1)
    assert_parity(lambda lib, x: lib.linalg.cholesky(x), a, **tol)
    assert_parity(lambda lib, x: lib.linalg.cholesky(x, upper=True), a, **tol)
    lower = np.linalg.cholesky(a) if shape[-1] else a
    assert_parity(lambda lib, x: lib.cholesky_inverse(x), lower, **tol)
    assert_parity(lambda lib, x, y: lib.cholesky_solve(y, x), lower, b, **tol)
    assert_parity(lambda lib, x, y: lib.cholesky_solve(y, x.mH, upper=True), lower, b, **tol)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 2), (0, 3)])
def test_svd_and_its_compositions(dtype, shape):
    a, tol = make_tensor(shape, dtype), TOLERANCE[dtype]
    assert_parity(lambda lib, x: lib.linalg.svdvals(x), a, noncontiguous=True, **tol)
    # U diag(S) Vh is A, |U| and |Vh| are free of the phases
    assert_parity(lambda lib, x: tuple(f(*lib.linalg.svd(x, full_matrices=False))
                                       for f in (lambda u, s, vh: (u * s.unsqueeze(-2)) @ vh,
                                                 lambda u, s, vh: u.abs(), lambda u, s, vh: vh.abs())), a, **tol)
    assert_parity(lambda lib, x: lib.linalg.svd(x).U.abs(), a, **tol)  # full: narrowed in the gradient
    assert_parity(lambda lib, x: lib.linalg.matrix_norm(x, "nuc"), a, **tol)
    assert_parity(lambda lib, x: lib.linalg.pinv(x), a, **tol)
    assert_parity(lambda lib, x: lib.linalg.matrix_rank(x), a, **tol)


def test_a_phase_dependent_svd_loss_is_refused_as_torch():
    a = make_tensor((3, 3), "complex128")
    messages = []
    for lib in (torch, ember):
        x = lib.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError) as error:
            lib.autograd.grad(lib.linalg.svd(x)[0].sum().abs(), [x])
        messages.append(str(error.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 2)])
def test_qr_and_householder(dtype, shape):
    a, tol = make_tensor(shape, dtype), TOLERANCE[dtype]
    assert_parity(lambda lib, x: tuple(lib.linalg.qr(x)), a, noncontiguous=True, **tol)
    square = make_tensor(shape[:-2] + (shape[-2], shape[-2]), dtype, seed=2)
    assert_parity(lambda lib, x: tuple(lib.geqrf(x)), a, grad=False, **tol)
    packed, tau = (t.numpy() for t in torch.geqrf(torch.tensor(a)))  # inputs of their own (geqrf has no gradient)
    if shape[-2] >= shape[-1]:
        assert_parity(lambda lib, x, t: lib.linalg.householder_product(x, t), packed, tau, **tol)
    for left, transpose in [(True, False), (True, True), (False, True)]:
        assert_parity(lambda lib, x, t, c: lib.ormqr(x, t, c, left=left, transpose=transpose), packed, tau, square,
                      **tol)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("driver", [None, "gelsd"])
def test_lstsq_and_vecdot(dtype, driver):
    a, b, tol = make_tensor((2, 5, 3), dtype), make_tensor((2, 5, 2), dtype, seed=1), TOLERANCE[dtype]
    assert_parity(lambda lib, x, y: tuple(lib.linalg.lstsq(x, y, driver=driver)), a, b, **tol)
    assert_parity(lambda lib, x, y: lib.linalg.vecdot(x, y, dim=-2), a, b[..., :1], **tol)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl(dtype, hermitian):
    a = hermitian_positive_definite((2, 4, 4), dtype) if hermitian else make_tensor((2, 4, 4), dtype)
    b = make_tensor((2, 4, 2), dtype, seed=1)
    tol = TOLERANCE[dtype]
    assert_parity(lambda lib, x: tuple(lib.linalg.ldl_factor(x, hermitian=hermitian)), a, grad=False, **tol)
    assert_parity(lambda lib, x, y: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(x, hermitian=hermitian), y,
                                                         hermitian=hermitian), a, b, grad=False, **tol)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 0)])
def test_matrix_exp(shape):
    assert_parity(lambda lib, x: lib.linalg.matrix_exp(x), make_tensor(shape, "complex128", low=-1, high=1),
                  **TOLERANCE["complex128"])


@pytest.mark.parametrize("name", ["inv", "cholesky"])
def test_singular_complex_input_errors_as_torch(name):
    singular = np.zeros((2, 3, 3), np.complex128)
    singular[0] = np.eye(3)
    messages = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as error:
            getattr(lib.linalg, name)(lib.tensor(singular))
        messages.append(str(error.value))
    assert messages[0] == messages[1]
