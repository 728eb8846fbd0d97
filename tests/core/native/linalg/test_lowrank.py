"""svd_lowrank and pca_lowrank (ember/native/linalg/lowrank.py) against torch after the
same seed: ember's generator draws torch's Gaussian stream, so the factors agree; they
are compared through sign- and phase-free functions of them (U V^H, U diag(S) V^H, S),
as torch's own op_db entry does, with gradients, batches, complex inputs, the mean M,
centering, and the errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

DTYPES = ["float32", "float64", "complex64", "complex128"]
# single precision: the gradients pass through three QRs and an SVD (torch's own entry
# widens float32 to 1e-3 and complex64 to 1e-2)
SINGLE = dict(rtol=1e-3, atol=1e-4, grad_rtol=1e-2, grad_atol=1e-3)
TOLERANCE = {"float32": SINGLE, "complex64": SINGLE,
             "float64": dict(rtol=1e-7, atol=1e-9), "complex128": dict(rtol=1e-7, atol=1e-9)}


def low_rank(shape, rank, dtype, seed=0):
    *batch, m, n = shape
    return (make_tensor((*batch, m, rank), dtype, seed=seed) @ make_tensor((*batch, n, rank), dtype, seed=seed + 1)
            .swapaxes(-1, -2)).astype(dtype)


def seeded(fn):
    def call(lib, *args):
        lib.manual_seed(42)
        U, S, V = fn(lib, *args)
        return U @ V.mH, S, (U * S.unsqueeze(-2).to(U.dtype)) @ V.mH
    return call


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5), (2, 7, 3)])
def test_svd_lowrank_matches_torch(dtype, shape):
    a = low_rank(shape, 2, dtype)
    tol = TOLERANCE[dtype]
    assert_parity(seeded(lambda lib, x: lib.svd_lowrank(x, q=2)), a, **tol)
    assert_parity(seeded(lambda lib, x: lib.svd_lowrank(x, q=2, niter=0)), a, noncontiguous=True, **tol)
    mean = make_tensor(shape[-2:], dtype, seed=5)  # broadcast over the batch
    assert_parity(seeded(lambda lib, x, m: lib.svd_lowrank(x + m, q=2, M=m)), a, mean, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("shape", [(8, 4), (3, 6), (2, 6, 5)])
def test_pca_lowrank_matches_torch(dtype, shape, center):
    a = low_rank(shape, 2, dtype, seed=3)
    # centering projects the columns, so the rank stays 2: q = 2 leaves no zero singular
    # value, whose vectors would be arbitrary
    assert_parity(seeded(lambda lib, x: lib.pca_lowrank(x, q=2, center=center)), a, **TOLERANCE[dtype])


def test_the_factors_themselves_are_torchs_after_the_same_seed():
    a = low_rank((7, 5), 3, "float64")
    ember.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = ember.svd_lowrank(ember.tensor(a), q=3), torch.svd_lowrank(torch.tensor(a), q=3)
    np.testing.assert_allclose(ours[1].numpy(), theirs[1].numpy(), rtol=1e-10)
    for mine, reference in ((ours[0], theirs[0]), (ours[2], theirs[2])):  # up to LAPACK's sign per column
        signs = np.sign((mine.numpy() * reference.numpy()).sum(0))
        np.testing.assert_allclose(mine.numpy() * signs, reference.numpy(), atol=1e-10)


@pytest.mark.parametrize("kwargs", [dict(q=5), dict(q=-1), dict(niter=-1)])
def test_pca_lowrank_errors_match_torch(kwargs):
    messages = []
    for lib in (torch, ember):
        with pytest.raises(ValueError) as error:
            lib.pca_lowrank(lib.tensor(low_rank((4, 3), 2, "float64")), **kwargs)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
