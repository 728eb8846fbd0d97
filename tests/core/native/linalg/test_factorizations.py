"""The linalg functions added for torch's missing entries, against torch: LU (linalg.lu,
lu_factor, lu_solve, lu_unpack, torch.lu), solve_triangular and triangular_solve, the _ex
variants, matrix_rank, cond, tensorinv/tensorsolve, householder_product/geqrf/ormqr,
cholesky_solve/cholesky_inverse, ldl_factor/ldl_solve, vecdot, multi_dot, matrix_power,
linalg.diagonal (ember/native/linalg/*.py): values, gradients, batches, empty inputs, errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]


def well_conditioned(shape, dtype, seed=0):
    a = make_tensor(shape, dtype, seed=seed)
    n = min(shape[-2:])
    return (a + 4 * np.eye(shape[-2], shape[-1])).astype(dtype) if n else a


def positive_definite(shape, dtype, seed=0):
    a = make_tensor(shape, "float64", seed=seed)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def tolerances(dtype):
    return {"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-8, "atol": 1e-8}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 3), (0, 0), (2, 0, 3)])
def test_lu_family(shape, dtype):
    a = well_conditioned(shape, dtype)
    tol = tolerances(dtype)
    assert_parity(lambda lib, x: tuple(lib.linalg.lu(x)), a, **tol)
    assert_parity(lambda lib, x: tuple(lib.linalg.lu_factor(x)), a, **tol)
    assert_parity(lambda lib, x: tuple(lib.linalg.lu_factor_ex(x)), a, **tol)
    assert_parity(lambda lib, x: tuple(lib.lu_unpack(*lib.linalg.lu_factor(x))), a, **tol)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False), (False, True)])
def test_lu_solve(dtype, left, adjoint):
    a, b = well_conditioned((2, 3, 3), dtype), make_tensor((2, 3, 2) if left else (2, 2, 3), dtype, seed=1)
    assert_parity(lambda lib, x, y: lib.linalg.lu_solve(*lib.linalg.lu_factor(x), y, left=left, adjoint=adjoint),
                  a, b, **tolerances(dtype))
    assert_parity(lambda lib, x, y: lib.lu_solve(y if left else y.mT, *lib.lu(x)), a, b, **tolerances(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("upper,left,unit", [(True, True, False), (False, True, True), (True, False, False),
                                             (False, False, True)])
def test_solve_triangular(dtype, upper, left, unit):
    a, b = well_conditioned((2, 3, 3), dtype), make_tensor((3, 4) if left else (4, 3), dtype, seed=2)
    assert_parity(lambda lib, x, y: lib.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unit),
                  a, b, noncontiguous=True, **tolerances(dtype))
    if left:
        assert_parity(lambda lib, x, y: tuple(lib.triangular_solve(y, x, upper, transpose=unit)), a, b,
                      **tolerances(dtype))


def test_ex_variants():
    a = well_conditioned((2, 3, 3), "float64")
    for name in ("inv_ex", "cholesky_ex"):
        x = positive_definite((2, 3, 3), "float64") if name == "cholesky_ex" else a
        assert_parity(lambda lib, t: tuple(getattr(lib.linalg, name)(t)), x)
    assert_parity(lambda lib, t, b: tuple(lib.linalg.solve_ex(t, b)), a, make_tensor((2, 3), "float64"))
    singular = np.stack([np.eye(2), np.zeros((2, 2))])
    for lib in (ember, torch):
        inverse, info = lib.linalg.inv_ex(lib.tensor(singular))
        assert info.tolist() == [0, 1]
        np.testing.assert_allclose(inverse[0].numpy(), np.eye(2))
        with pytest.raises(RuntimeError):
            lib.linalg.inv_ex(lib.tensor(singular), check_errors=True)
    assert ember.linalg.cholesky_ex(ember.tensor(-np.eye(2))).info.item() == 1


@pytest.mark.parametrize("kwargs", [{}, {"hermitian": True}, {"atol": 0.5}, {"rtol": 0.1}, {"tol": 1.0},
                                    {"atol": 0.0}])
def test_matrix_rank(kwargs):
    a = make_tensor((3, 4, 2), "float64") @ make_tensor((3, 2, 4), "float64", seed=1)
    if kwargs.get("hermitian"):
        a = a + np.swapaxes(a, -1, -2)
    assert_parity(lambda lib, x: lib.linalg.matrix_rank(x, **kwargs), a)
    assert_parity(lambda lib, x, t: lib.linalg.matrix_rank(x, atol=t), a, np.array([0.1, 1.0, 10.0]), grad=False)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, float("inf"), -float("inf")])
def test_cond(p):
    # torch's own backward fails for the orders that invert (inv_ex's output is reused in place)
    assert_parity(lambda lib, x: lib.linalg.cond(x, p), well_conditioned((2, 3, 3), "float64"), rtol=1e-7,
                  grad=p in (None, 2, -2))
    for lib in (ember, torch):  # singular: inf for the norms that invert, nan or inf for the 2-norm
        assert not np.isfinite(lib.linalg.cond(lib.zeros(2, 2), p).item())


def test_tensorinv_and_tensorsolve():
    a = well_conditioned((6, 6), "float64").reshape(6, 2, 3)
    assert_parity(lambda lib, x: lib.linalg.tensorinv(x, ind=1), a)
    b = make_tensor((2, 3), "float64")
    assert_parity(lambda lib, x, y: lib.linalg.tensorsolve(x.reshape(2, 3, 6), y), a, b)
    assert_parity(lambda lib, x, y: lib.linalg.tensorsolve(x.reshape(2, 3, 2, 3), y, dims=(0,)), a, b)
    for call in (lambda lib: lib.linalg.tensorinv(lib.ones(2, 3), ind=1), lambda lib: lib.linalg.tensorinv(
            lib.ones(2, 2), ind=0)):
        with pytest.raises(RuntimeError):
            call(torch)
        with pytest.raises(RuntimeError):
            call(ember)


@pytest.mark.parametrize("shape,k", [((4, 3), 3), ((4, 3), 2), ((2, 3, 3), 3), ((3, 2), 0)])
def test_householder_geqrf_ormqr(shape, k):
    a = make_tensor(shape, "float64")
    tau = make_tensor(shape[:-2] + (k,), "float64", low=0.1, high=1.5, seed=1)
    assert_parity(lambda lib, x, t: lib.linalg.householder_product(x, t), a, tau)
    assert_parity(lambda lib, x: tuple(lib.geqrf(x)), a)
    c = make_tensor(shape[:-2] + (shape[-2], 2), "float64", seed=3)
    for left, transpose in ((True, False), (True, True)):
        # (torch requires tau to have min(other.shape[-2], input.shape[-1]) entries: both raise otherwise)
        assert_parity(lambda lib, x, t, y: lib.ormqr(x, t, y, left=left, transpose=transpose), a, tau, c)
    assert_parity(lambda lib, x, t, y: lib.ormqr(x, t, y.mT, left=False), a, tau, make_tensor(
        shape[:-2] + (shape[-2], k), "float64", seed=3))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(dtype, upper):
    factor = np.linalg.cholesky(positive_definite((2, 3, 3), "float64")).astype(dtype)
    factor = np.swapaxes(factor, -1, -2).copy() if upper else factor
    b = make_tensor((2, 3, 2), dtype, seed=4)
    assert_parity(lambda lib, f, y: lib.cholesky_solve(y, f, upper), factor, b, **tolerances(dtype))
    assert_parity(lambda lib, f: lib.cholesky_inverse(f, upper), factor, **tolerances(dtype))


def test_ldl_factor_and_solve():
    a = make_tensor((2, 4, 4), "float64")
    a = a + np.swapaxes(a, -1, -2)  # symmetric, indefinite: 2 x 2 pivots appear
    b = make_tensor((2, 4, 3), "float64", seed=1)
    assert_parity(lambda lib, x: tuple(lib.linalg.ldl_factor_ex(x)), a)
    assert_parity(lambda lib, x, y: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(x), y), a, b, grad=False)


def test_compositions():
    x, y = make_tensor((3, 4), "float64"), make_tensor((4,), "float64", seed=1)
    assert_parity(lambda lib, a, b: lib.linalg.vecdot(a, b), x, y)
    assert_parity(lambda lib, a, b: lib.linalg.vecdot(a, b.unsqueeze(0), dim=1), x, y)
    mats = [make_tensor(s, "float64", seed=i) for i, s in enumerate([(3,), (3, 4), (4, 2), (2,)])]
    assert_parity(lambda lib, *ts: lib.linalg.multi_dot(ts), *mats)
    assert_parity(lambda lib, *ts: lib.linalg.multi_dot(ts[1:3]), *mats)
    a = well_conditioned((2, 3, 3), "float64")
    for n in (0, 1, 2, 5, -1, -3):
        assert_parity(lambda lib, t: lib.linalg.matrix_power(t, n), a, rtol=1e-7)
    assert_parity(lambda lib, t: lib.linalg.diagonal(t, offset=1), a)
    for call in (lambda lib: lib.linalg.multi_dot([lib.ones(2)]),
                 lambda lib: lib.linalg.matrix_power(lib.ones(2, 3), 2),
                 lambda lib: lib.linalg.vecdot(lib.ones(2), lib.ones(2, dtype=lib.float64))):
        with pytest.raises(RuntimeError):
            call(torch)
        with pytest.raises(RuntimeError):
            call(ember)
