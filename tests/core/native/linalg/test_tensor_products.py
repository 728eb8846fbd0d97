"""``kron``, ``tensordot``, ``chain_matmul`` (ember/native/linalg/tensor_products.py) and
``addbmm``, ``addr`` (products.py) against torch: values and gradients, shapes of
different ranks, size-1 contracted dims, beta/alpha (0, integers, bool), dtypes, the
in-place forms, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_kron_matches_torch(dtype):
    assert_parity(lambda lib, a, b: lib.kron(a, b), make_tensor((2, 3), dtype), make_tensor((3, 2), dtype, seed=1))
    assert_parity(lambda lib, a, b: a.kron(b), make_tensor((2, 1, 3), dtype), make_tensor((4,), dtype, seed=1))
    assert_parity(lambda lib, a, b: lib.kron(a, b), np.asarray(make_tensor((), dtype)), make_tensor((2, 2), dtype),
                  noncontiguous=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_tensordot_matches_torch(dtype):
    a, b = make_tensor((2, 3, 4), dtype), make_tensor((4, 3, 5), dtype, seed=1)
    assert_parity(lambda lib, x, y: lib.tensordot(x, y, dims=([1, 2], [1, 0])), a, b, rtol=1e-5)
    assert_parity(lambda lib, x, y: lib.tensordot(x, y, dims=1), a, b, rtol=1e-5)
    assert_parity(lambda lib, x, y: lib.tensordot(x, y, dims=0), a[:, :1], b[:2], rtol=1e-5)
    assert_parity(lambda lib, x, y: lib.tensordot(x, y, dims=([0, 1], [2, 0])), make_tensor((1, 1, 1), dtype),
                  make_tensor((2, 1, 2), dtype, seed=1))  # size-1 dims contract with longer ones


def test_chain_matmul_matches_torch():
    mats = [make_tensor((2, 3), "float64"), make_tensor((3, 4), "float64", seed=1), make_tensor((4, 1), "float64")]
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        assert_parity(lambda lib, *ms: lib.chain_matmul(*ms), *mats)
        assert_parity(lambda lib, m: lib.chain_matmul(m), mats[0])


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1), (2, 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_addbmm_and_addr_match_torch(beta, alpha, dtype):
    bias = make_tensor((3, 4), dtype)
    bias[0, 0] = np.nan  # ignored when beta == 0
    b1, b2 = make_tensor((5, 3, 2), dtype, seed=1), make_tensor((5, 2, 4), dtype, seed=2)
    assert_parity(lambda lib, m, x, y: lib.addbmm(m, x, y, beta=beta, alpha=alpha), bias, b1, b2, rtol=1e-5)
    assert_parity(lambda lib, m, x, y: m.addbmm(x, y, beta=beta, alpha=alpha), bias[0], b1, b2, rtol=1e-5)
    assert_parity(lambda lib, m, x, y: (m * 1).addbmm_(x, y, beta=beta, alpha=alpha), bias, b1, b2, rtol=1e-5)
    v1, v2 = make_tensor((3,), dtype, seed=3), make_tensor((4,), dtype, seed=4)
    assert_parity(lambda lib, m, x, y: lib.addr(m, x, y, beta=beta, alpha=alpha), bias, v1, v2)
    assert_parity(lambda lib, m, x, y: (m * 1).addr_(x, y, beta=beta, alpha=alpha), bias[:, :1], v1, v2[:1])


def test_integer_bool_and_mixed_addr_match_torch():
    a, b = make_tensor((3,), "int64"), make_tensor((4,), "int64", seed=1)
    assert_parity(lambda lib, m, x, y: lib.addr(m, x, y, beta=2, alpha=3), make_tensor((3, 4), "int64"), a, b)
    assert_parity(lambda lib, m, x, y: lib.addr(m, x, y, beta=3, alpha=2), make_tensor((3, 4), "bool"),
                  make_tensor((3,), "bool", seed=1), make_tensor((4,), "bool", seed=2))
    assert_parity(lambda lib, m, x, y: lib.addr(m, x, y), make_tensor((3, 4), "float32"), a,
                  make_tensor((4,), "float32"), grad=False)  # torch's backward refuses mixed dtypes
    assert_parity(lambda lib, m, x, y: lib.addbmm(m, x, y, beta=2, alpha=3), make_tensor((2, 2), "int64"),
                  make_tensor((3, 2, 4), "int64"), make_tensor((3, 4, 2), "int64", seed=1))


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(3, 2, dtype=lib.float64), 1))
    assert_same_error(lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(2, 2), 1))
    assert_same_error(lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(3, 2), -1))
    assert_same_error(lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(3, 2), ([1], [0, 1])))
    assert_same_error(lambda lib: lib.chain_matmul())
    assert_same_error(lambda lib: lib.chain_matmul(lib.ones(2, 3, 3), lib.ones(3, 3)))
    assert_same_error(lambda lib: lib.chain_matmul(lib.ones(2, 3), lib.ones(2, 3)))
    assert_same_error(lambda lib: lib.addbmm(lib.ones(3, 2), lib.ones(2, 3, 4), lib.ones(2, 4, 2, dtype=lib.float64)))
    assert_same_error(lambda lib: lib.addbmm(lib.ones(3, 2), lib.ones(2, 3, 4), lib.ones(3, 4, 2)))
    assert_same_error(lambda lib: lib.addr(lib.ones(2, 2), lib.ones(2, 1), lib.ones(2)))
    assert_same_error(lambda lib: lib.addr(lib.ones(3, 2), lib.ones(2), lib.ones(2)))
    assert_same_error(lambda lib: lib.addr(lib.ones(2, 2, dtype=lib.int64), lib.ones(2, dtype=lib.int64),
                                           lib.ones(2, dtype=lib.int64), beta=0.5))
