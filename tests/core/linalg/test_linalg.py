"""``ember.linalg`` against ``torch.linalg`` (ember/linalg/__init__.py and
ember/native/linalg_*.py): values, gradients (parity with torch's, and gradcheck in
float64), batches, empty matrices, and torch's errors for singular, indefinite and
non-square input. Decompositions whose factors are defined up to signs (qr, svd,
eigh) are compared through sign-free functions of the factors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity

RNG = np.random.default_rng(0)


def matrices(shape, dtype="float64", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def spd(shape, dtype="float64", seed=0):
    """Symmetric positive definite, well conditioned."""
    a = matrices(shape, "float64", seed)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def symmetric(shape, dtype="float64", seed=0):
    a = matrices(shape, "float64", seed)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)


TOLERANCE = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-9, atol=1e-10)}
SQUARE = [(3, 3), (2, 4, 4), (1, 1), (2, 0, 0)]


def gradcheck(fn, *arrays):
    inputs = [ember.tensor(a, requires_grad=True) for a in arrays]
    assert ember.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SQUARE)
def test_inv_det_slogdet_match_torch(dtype, shape):
    a = spd(shape, dtype) if shape[-1] else matrices(shape, dtype)
    tol = TOLERANCE[dtype]
    assert_parity(lambda lib, x: lib.linalg.inv(x), a, **tol)
    assert_parity(lambda lib, x: lib.linalg.det(x), a, **tol)
    assert_parity(lambda lib, x: tuple(lib.linalg.slogdet(x)), a, **tol)
    if shape[-1] > 1:
        assert_parity(lambda lib, x: lib.linalg.inv(x.mT), a, noncontiguous=True, **tol)


def test_det_gradient_at_singular_matrices_is_torchs():
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 2.0]]])
    assert_parity(lambda lib, x: lib.linalg.det(x), singular)
    assert_parity(lambda lib, x: lib.linalg.det(x), np.arange(9.0).reshape(3, 3))


def test_determinant_gradients_pass_gradcheck():
    a = matrices((2, 3, 3), seed=1)
    gradcheck(ember.linalg.inv, a)
    gradcheck(ember.linalg.det, a)
    gradcheck(lambda x: ember.linalg.slogdet(x).logabsdet, a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("a_shape, b_shape", [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3)),
                                              ((2, 3, 3), (3, 4)), ((3, 3), (2, 3, 1)), ((0, 0), (0,))])
def test_solve_matches_torch(dtype, a_shape, b_shape):
    a, b = spd(a_shape, dtype) if a_shape[-1] else matrices(a_shape, dtype), matrices(b_shape, dtype, seed=2)
    assert_parity(lambda lib, x, y: lib.linalg.solve(x, y), a, b, **TOLERANCE[dtype])


def test_solve_from_the_right_and_gradcheck():
    a, b = spd((3, 3)), matrices((2, 3), seed=3)
    assert_parity(lambda lib, x, y: lib.linalg.solve(x, y, left=False), a, b)
    gradcheck(ember.linalg.solve, matrices((3, 3), seed=4), matrices((3, 2), seed=5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1)])
def test_cholesky_matches_torch(dtype, shape):
    a = spd(shape, dtype)
    assert_parity(lambda lib, x: lib.linalg.cholesky(x), a, **TOLERANCE[dtype])
    assert_parity(lambda lib, x: lib.linalg.cholesky(x, upper=True), a, **TOLERANCE[dtype])
    gradcheck(lambda x: ember.linalg.cholesky(x @ x.mT + 3 * ember.eye(shape[-1], dtype=x.dtype)),
              matrices(shape, seed=6)) if dtype == "float64" else None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 5, 2), (3, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_torch(dtype, shape, mode):
    a = matrices(shape, dtype)
    tol = TOLERANCE[dtype]
    # LAPACK's Householder QR in both: the signs agree, so Q and R compare directly.
    assert_parity(lambda lib, x: tuple(lib.linalg.qr(x, mode)), a, grad=False, **tol)
    if mode == "reduced" or shape[-2] <= shape[-1]:
        assert_parity(lambda lib, x: tuple(lib.linalg.qr(x, mode)), a, **tol)
        if dtype == "float64" and mode != "r":  # mode "r" has no gradient (torch's backward raises too)
            gradcheck(lambda x: ember.linalg.qr(x, mode), a)


def test_complete_qr_of_a_tall_matrix_is_not_differentiable_like_torch():
    for lib in (ember, torch):
        q, r = lib.linalg.qr(lib.eye(3, 2, dtype=lib.float64, requires_grad=True), mode="complete")
        with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
            (q.sum() + r.sum()).backward()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 3, 5), (0, 3)])
def test_svd_matches_torch(dtype, shape):
    a = matrices(shape, dtype)
    tol = TOLERANCE[dtype]
    assert_parity(lambda lib, x: lib.linalg.svdvals(x), a, **tol)

    def sign_free(lib, x):  # U diag(S) Vh and the projectors U U^T, Vh^T Vh do not depend on signs
        u, s, vh = lib.linalg.svd(x, full_matrices=False)
        return (u * s.unsqueeze(-2)) @ vh, u @ u.mT, vh.mT @ vh, s
    assert_parity(sign_free, a, **tol)
    assert_parity(lambda lib, x: tuple(t.shape for t in lib.linalg.svd(x)), a, grad=False)


def test_svd_gradients_pass_gradcheck():
    a = matrices((2, 4, 3), seed=7)
    gradcheck(lambda x: ember.linalg.svdvals(x), a)
    gradcheck(lambda x: [t.abs() for t in ember.linalg.svd(x, full_matrices=False)], a)
    gradcheck(lambda x: [t.abs() for t in ember.linalg.svd(x.mT, full_matrices=False)], a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_torch(dtype, shape, uplo):
    a = symmetric(shape, dtype)
    tol = TOLERANCE[dtype]
    assert_parity(lambda lib, x: lib.linalg.eigvalsh(x, uplo), a, **tol)

    def sign_free(lib, x):
        values, vectors = lib.linalg.eigh(x, uplo)
        return values, (vectors * values.unsqueeze(-2)) @ vectors.mT, (vectors[..., :1] * vectors[..., :1]).sum(-1)
    assert_parity(sign_free, a, **tol)
    if dtype == "float64" and shape[-1]:
        gradcheck(lambda x: [t.abs() for t in ember.linalg.eigh(x + x.mT)], matrices(shape, seed=8))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 5, 2)])
def test_pinv_and_lstsq_match_torch(dtype, shape):
    a = matrices(shape, dtype)
    b = matrices(shape[:-1] + (2,), dtype, seed=9)
    tol = TOLERANCE[dtype]
    assert_parity(lambda lib, x: lib.linalg.pinv(x), a, **tol)
    assert_parity(lambda lib, x, y: lib.linalg.lstsq(x, y).solution, a, b, **tol)
    assert_parity(lambda lib, x, y: lib.linalg.lstsq(x, y).rank, a, b, grad=False)
    if dtype == "float64":
        gradcheck(ember.linalg.pinv, a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0)])
@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0])
def test_matrix_exp_matches_torch(dtype, shape, scale):
    a = (matrices(shape, "float64") * scale).astype(dtype)
    assert_parity(lambda lib, x: lib.linalg.matrix_exp(x), a, rtol=1e-5 if dtype == "float32" else 1e-10,
                  atol=1e-5 if dtype == "float32" else 1e-10)


def test_matrix_exp_gradcheck_and_double_backward():
    a = matrices((3, 3), seed=10) * 0.5
    gradcheck(ember.linalg.matrix_exp, a)
    x = ember.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    (gx,) = ember.autograd.grad(ember.linalg.matrix_exp(x).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad(torch.linalg.matrix_exp(t).sum(), t, create_graph=True)
    np.testing.assert_allclose(ember.autograd.grad((gx ** 2).sum(), x)[0].numpy(),
                               torch.autograd.grad((gt ** 2).sum(), t)[0].numpy(), rtol=1e-8)


NORM_CASES = [
    (lambda lib, x: lib.linalg.vector_norm(x), (3, 4)),
    (lambda lib, x: lib.linalg.vector_norm(x, 1, dim=1, keepdim=True), (3, 4)),
    (lambda lib, x: lib.linalg.vector_norm(x, float("inf"), dim=(0, 1)), (2, 3, 4)),
    (lambda lib, x: lib.linalg.vector_norm(x, 3.5, dim=-1), (3, 4)),
    (lambda lib, x: lib.linalg.norm(x), (2, 3, 4)),
    (lambda lib, x: lib.linalg.norm(x), (3, 4)),
    (lambda lib, x: lib.linalg.norm(x, 1), (4,)),
    (lambda lib, x: lib.linalg.norm(x, dim=1), (3, 4)),
    (lambda lib, x: lib.linalg.norm(x, "fro", dim=(0, 2)), (2, 3, 4)),
    (lambda lib, x: lib.linalg.norm(x, 2), (3, 4)),
    (lambda lib, x: lib.linalg.norm(x, -2, dim=(1, 0), keepdim=True), (3, 4)),
] + [(lambda lib, x, o=o: lib.linalg.matrix_norm(x, o), (2, 3, 4)) for o in
     ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf"))] + [
    (lambda lib, x, o=o: lib.linalg.matrix_norm(x, o, dim=(2, 0), keepdim=True), (2, 3, 4)) for o in
    ("fro", "nuc", 1, -1, float("inf"))]


@pytest.mark.parametrize("case", range(len(NORM_CASES)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_norms_match_torch(case, dtype):
    fn, shape = NORM_CASES[case]
    assert_parity(fn, matrices(shape, dtype, seed=case), **TOLERANCE[dtype])


ERRORS = {
    "inv_singular": lambda lib: lib.linalg.inv(lib.tensor([[1.0, 2.0], [2.0, 4.0]])),
    "inv_singular_batch": lambda lib: lib.linalg.inv(lib.tensor([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 1.0]]])),
    "inv_not_square": lambda lib: lib.linalg.inv(lib.ones(2, 3)),
    "inv_integer": lambda lib: lib.linalg.inv(lib.ones(2, 2, dtype=lib.int64)),
    "inv_1d": lambda lib: lib.linalg.inv(lib.ones(3)),
    "det_not_square": lambda lib: lib.linalg.det(lib.ones(2, 3)),
    "solve_singular": lambda lib: lib.linalg.solve(lib.tensor([[1.0, 2.0], [2.0, 4.0]]), lib.ones(2)),
    "solve_dtypes": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2, dtype=lib.float64)),
    "cholesky_indefinite": lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 0.0], [0.0, -1.0]])),
    "cholesky_indefinite_batch": lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(2), -lib.eye(2)])),
    "cholesky_not_square": lambda lib: lib.linalg.cholesky(lib.ones(2, 3)),
    "eigh_not_square": lambda lib: lib.linalg.eigh(lib.ones(2, 3)),
    "eigh_bad_uplo": lambda lib: lib.linalg.eigh(lib.eye(2), "X"),
    "qr_1d": lambda lib: lib.linalg.qr(lib.ones(3)),
    "qr_bad_mode": lambda lib: lib.linalg.qr(lib.eye(2), "full"),
    "matrix_exp_not_square": lambda lib: lib.linalg.matrix_exp(lib.ones(2, 3)),
    "matrix_norm_same_dims": lambda lib: lib.linalg.matrix_norm(lib.ones(2, 3), dim=(0, 0)),
    "norm_3d_with_ord": lambda lib: lib.linalg.norm(lib.ones(2, 3, 4), 2),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    expected = ember.linalg.LinAlgError if theirs.type is torch.linalg.LinAlgError else theirs.type
    with pytest.raises(expected) as ours:
        ERRORS[name](ember)
    assert str(ours.value) == str(theirs.value).replace("torch", "ember")


def test_linalg_error_is_a_runtime_error_like_torchs():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError) and issubclass(torch.linalg.LinAlgError, RuntimeError)


ALIASES = [
    (lambda lib, x: lib.inverse(x), "spd"),
    (lambda lib, x: x.inverse(), "spd"),
    (lambda lib, x: lib.det(x), "plain"),
    (lambda lib, x: x.det(), "plain"),
    (lambda lib, x: lib.logdet(x), "plain"),
    (lambda lib, x: x.logdet(), "spd"),
    (lambda lib, x: tuple(x.slogdet()), "plain"),
    (lambda lib, x: x.matrix_exp(), "plain"),
    (lambda lib, x: lib.pinverse(x), "plain"),
    (lambda lib, x: x.pinverse(rcond=1e-3), "plain"),
    (lambda lib, x: x.cholesky(), "spd"),
    (lambda lib, x: lib.cholesky(x, True), "spd"),
    (lambda lib, x: tuple(lib.svd(x, compute_uv=False)), "plain"),
    (lambda lib, x: (lambda u, s, v: ((u * s.unsqueeze(-2)) @ v.mT, s))(*x.svd()), "plain"),
    (lambda lib, x: tuple(t.shape for t in lib.svd(x, some=False)), "plain"),
]


@pytest.mark.parametrize("case", range(len(ALIASES)))
def test_torch_level_aliases_match_torch(case):
    fn, kind = ALIASES[case]
    a = spd((2, 3, 3)) if kind == "spd" else matrices((2, 3, 3), seed=case)
    assert_parity(fn, a)


def test_logdet_of_negative_and_zero_determinants_matches_torch():
    assert_parity(lambda lib, x: lib.logdet(x), np.array([[[1.0, 2.0], [3.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]]]))
    assert_parity(lambda lib, x: lib.logdet(x), np.zeros((2, 2)), grad=False)
    with pytest.raises(RuntimeError) as theirs:
        torch.logdet(torch.ones(2, 3))
    with pytest.raises(RuntimeError) as ours:
        ember.logdet(ember.ones(2, 3))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("ord", [1, -1, float("inf"), float("-inf"), 2, -2, "nuc", "fro"])
@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 0)])
def test_matrix_norm_of_an_empty_matrix(shape, ord):
    # The largest of no values is 0, as in PyTorch; the smallest of none raises.
    assert_parity(lambda lib, x: lib.linalg.matrix_norm(x, ord), np.ones(shape, dtype="float32"))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_pinv_hermitian_reads_the_lower_triangle(shape):
    # hermitian=True takes eigh of the lower triangle: a non-symmetric input shows it.
    a = np.random.default_rng(0).standard_normal(shape)
    assert_parity(lambda lib, x: lib.linalg.pinv(x, hermitian=True), a, grad=False, atol=1e-10)
    symmetric = a + np.swapaxes(a, -1, -2)
    assert_parity(lambda lib, x: lib.linalg.pinv(x, hermitian=True), symmetric, atol=1e-10)


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss", None])
@pytest.mark.parametrize("shape_a, shape_b", [((2, 3), (2, 3)), ((4, 3), (4, 2)), ((2, 4, 3), (2, 4, 2)),
                                              ((4, 3), (4,))])
def test_lstsq_returns_what_each_driver_does(driver, shape_a, shape_b):
    # NOTE [ lstsq's drivers ]: rank, residuals and singular values depend on the driver.
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    assert_parity(lambda lib, x, y: tuple(lib.linalg.lstsq(x, y, driver=driver)), a, b, grad=False, atol=1e-10)
