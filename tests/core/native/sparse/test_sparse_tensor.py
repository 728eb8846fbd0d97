"""Sparse COO tensors against torch on the same inputs: construction, conversions,
coalescing (duplicates, empty nnz, hybrid dense dims), printing and errors.

PyTorch counterpart: test/test_sparse.py (v2.13); torch is the oracle.
"""

import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings("ignore", message="Sparse invariant checks")

INDICES = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # (0, 2) twice: an uncoalesced tensor
DTYPES = [(np.float32, ember.float32, torch.float32), (np.float64, ember.float64, torch.float64)]


def _pair(indices, values, size, **kwargs):
    sized = () if size is None else (size,)
    e = ember.sparse_coo_tensor(ember.tensor(indices), ember.tensor(values), *sized, **kwargs)
    t = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), *sized, **kwargs)
    return e, t


def _same_sparse(e, t):
    assert e.layout is ember.sparse_coo and t.layout == torch.sparse_coo
    assert tuple(e.shape) == tuple(t.shape)
    assert e.is_coalesced() == t.is_coalesced()
    assert (e.sparse_dim(), e.dense_dim(), e._nnz()) == (t.sparse_dim(), t.dense_dim(), t._nnz())
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    np.testing.assert_allclose(e._values().detach().numpy(), t._values().detach().numpy(), rtol=1e-6)


def _raises_as_torch(ember_call, torch_call):
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as actual:
        ember_call()
    assert str(actual.value).split("\n")[0] == str(expected.value).split("\n")[0]


@pytest.mark.parametrize("np_dtype,ember_dtype,torch_dtype", DTYPES)
def test_construction_coalesce_and_to_dense_agree(np_dtype, ember_dtype, torch_dtype):
    values = np.arange(1, 6, dtype=np_dtype)
    e, t = _pair(INDICES, values, (3, 3))
    _same_sparse(e, t)
    assert e.dtype is ember_dtype and t.dtype == torch_dtype
    _same_sparse(e.coalesce(), t.coalesce())
    np.testing.assert_array_equal(e.to_dense().numpy(), t.to_dense().numpy())
    assert e.is_sparse and not ember.ones(1).is_sparse and ember.ones(1).layout is ember.strided


def test_size_is_inferred_and_hybrid_values_are_blocks():
    values = np.arange(10.0).reshape(5, 2)
    e, t = _pair(INDICES, values, None)
    _same_sparse(e, t)
    np.testing.assert_array_equal(e.to_dense().numpy(), t.to_dense().numpy())
    _same_sparse(e.coalesce(), t.coalesce())


def test_empty_nnz():
    e, t = _pair(np.zeros((2, 0), dtype=np.int64), np.zeros(0), (2, 3))
    _same_sparse(e, t)
    np.testing.assert_array_equal(e.to_dense().numpy(), t.to_dense().numpy())
    assert repr(e).replace("ember", "torch") == repr(t)


@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
def test_to_sparse_agrees(sparse_dim):
    x = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [3.0, 0.0, 4.0]])
    args = () if sparse_dim is None else (sparse_dim,)
    _same_sparse(ember.tensor(x).to_sparse(*args), torch.tensor(x).to_sparse(*args))


def test_repr_as_torch_prints():
    e, t = _pair(INDICES, np.arange(10.0).reshape(5, 2), (3, 3, 2))
    assert repr(e).replace("ember", "torch") == repr(t)
    e, t = _pair(INDICES, np.arange(5.0), (3, 3))
    assert repr(e.double()).replace("ember", "torch") == repr(t.double())
    e, t = _pair(INDICES, np.arange(5.0), (3, 3), requires_grad=True)
    assert repr(e).replace("ember", "torch") == repr(t)


def test_accessors_of_an_uncoalesced_tensor_and_of_a_dense_one_raise_as_torch():
    e, t = _pair(INDICES, np.arange(5.0), (3, 3))
    _raises_as_torch(e.indices, t.indices)
    _raises_as_torch(e.values, t.values)
    _raises_as_torch(ember.ones(2).coalesce, torch.ones(2).coalesce)
    _raises_as_torch(ember.ones(2).is_coalesced, torch.ones(2).is_coalesced)
    _raises_as_torch(ember.ones(2).indices, torch.ones(2).indices)
    assert (ember.ones(2, 3).sparse_dim(), ember.ones(2, 3).dense_dim()) == (0, 2)
    _raises_as_torch(lambda: ember.ones(2, 3).to_sparse(3), lambda: torch.ones(2, 3).to_sparse(3))
    _raises_as_torch(lambda: ember.ones(2, 3).to_sparse(0), lambda: torch.ones(2, 3).to_sparse(0))
    _raises_as_torch(lambda: e.to_sparse(1), lambda: t.to_sparse(1))
    _same_sparse(ember.tensor(3.0).to_sparse(), torch.tensor(3.0).to_sparse())
    _raises_as_torch(e.numpy, t.numpy)
    with pytest.raises(NotImplementedError):  # torch: no 'aten::exp' kernel for 'SparseCPU'
        e.exp()


@pytest.mark.parametrize("indices,values,size", [
    ([0, 1], [1.0, 2.0], None),                      # indices not 2-D
    ([[0, 1], [2, 0]], [1.0], None),                 # nnz differs
    ([[0, 1], [2, 0]], [1.0, 2.0], (2,)),            # too few dims
    ([[0, 1], [2, 0]], [[1.0, 2.0, 3.0]] * 2, (2, 3, 4)),  # dense dims differ
])
def test_construction_errors_as_torch(indices, values, size):
    sized = () if size is None else (size,)
    _raises_as_torch(lambda: ember.sparse_coo_tensor(ember.tensor(indices), ember.tensor(values), *sized),
                     lambda: torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), *sized))


def test_check_invariants_finds_an_index_out_of_bounds_as_torch():
    _raises_as_torch(
        lambda: ember.sparse_coo_tensor(ember.tensor([[0, 2]]), ember.ones(2), (2,), check_invariants=True),
        lambda: torch.sparse_coo_tensor(torch.tensor([[0, 2]]), torch.ones(2), (2,), check_invariants=True))


def test_to_dense_and_coalesce_give_the_values_their_gradients():
    values = np.arange(1.0, 6.0)
    cotangent = np.random.default_rng(0).standard_normal((3, 3))
    grads = []
    for lib in (ember, torch):
        v = lib.tensor(values, requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(INDICES), v, (3, 3))
        (s.coalesce().to_dense() * lib.tensor(cotangent)).sum().backward()
        grads.append(v.grad.numpy())
    np.testing.assert_allclose(*grads)


def test_to_sparse_gives_the_dense_input_its_gradient_at_the_entries():
    x = np.array([[0.0, 2.0], [3.0, -1.0]])
    grads = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        (t.to_sparse().to_dense() * lib.tensor([[5.0, 6.0], [7.0, 8.0]])).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1] * (x != 0))  # torch's is dense: NOTE in native/sparse


def test_transpose_swaps_the_index_rows():
    e, t = _pair(INDICES, np.arange(5.0), (3, 3))
    _same_sparse(e.t(), t.t())


def test_pickle_and_deepcopy_keep_the_parts():
    import copy
    import pickle

    e, _ = _pair(INDICES, np.arange(5.0), (3, 3))
    for other in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        np.testing.assert_array_equal(other.to_dense().numpy(), e.to_dense().numpy())
        assert other.is_coalesced() == e.is_coalesced()
