"""nn.Embedding against torch: copied weights, outputs and weight gradients (padding_idx
rows get none, scale_grad_by_freq divides by counts), max_norm renormalising in place,
initialisation, from_pretrained, repr and errors."""

import numpy as np
import pytest
import torch
from module_parity import check_module, copy_torch_state, same_error, same_structure

import ember

INDICES = np.array([[1, 1, 2, 0], [9, 1, 3, 9]])


def both(*args, **kwargs):
    return ember.nn.Embedding(*args, **kwargs), torch.nn.Embedding(*args, **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                    {"padding_idx": 9, "scale_grad_by_freq": True}])
def test_embedding_module(dtype, kwargs):
    check_module(*both(10, 3, **kwargs), INDICES, dtype=dtype)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_embedding_index_dtypes_and_shapes(index_dtype):
    for idx in (INDICES.astype(index_dtype), np.array(4, dtype=index_dtype), np.zeros((0, 2), dtype=index_dtype)):
        check_module(*both(10, 3), idx)


def test_padding_row_gets_no_gradient():
    m = ember.nn.Embedding(5, 2, padding_idx=2)
    out = m(ember.tensor([[2, 0], [2, 2]]))
    out.sum().backward()
    grad = m.weight.grad.numpy()
    np.testing.assert_array_equal(grad[2], [0, 0])
    np.testing.assert_array_equal(grad[0], [1, 1])
    np.testing.assert_array_equal(grad[[1, 3, 4]], 0)


def test_padding_row_initialised_to_zero():
    ember.manual_seed(0)
    m = ember.nn.Embedding(50, 4, padding_idx=-3)
    assert m.padding_idx == 47
    weight = m.weight.detach().numpy()
    np.testing.assert_array_equal(weight[47], 0)
    others = np.delete(weight, 47, axis=0)
    assert abs(others.mean()) < 0.3 and 0.7 < others.std() < 1.3  # N(0, 1), as torch


@pytest.mark.parametrize("max_norm, norm_type", [(1.0, 2.0), (0.5, 1.0)])
def test_max_norm_module(max_norm, norm_type):
    e, t = both(10, 3, max_norm=max_norm, norm_type=norm_type)
    check_module(e, t, INDICES)
    # the forward rescaled the looked-up rows of the weight itself, as torch's did
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-6)
    looked_up = np.unique(INDICES)
    norms = np.linalg.norm(e.weight.detach().numpy()[looked_up], ord=norm_type, axis=1)
    assert np.all(norms <= max_norm + 1e-5)


def test_max_norm_bumps_version():
    m = ember.nn.Embedding(4, 3, max_norm=0.1)
    before = m.weight._version
    m(ember.tensor([0, 1]))
    assert m.weight._version > before


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"max_norm": 1.0}, {"norm_type": 1.0},
                                    {"scale_grad_by_freq": True}, {"sparse": True},
                                    {"padding_idx": 0, "max_norm": 2.0, "norm_type": 3.0, "scale_grad_by_freq": True}])
def test_embedding_repr_and_structure(kwargs):
    same_structure(*both(10, 3, **kwargs))


def test_from_pretrained():
    table = np.arange(6, dtype=np.float32).reshape(3, 2)
    e = ember.nn.Embedding.from_pretrained(ember.tensor(table), padding_idx=1)
    t = torch.nn.Embedding.from_pretrained(torch.from_numpy(table), padding_idx=1)
    assert repr(e) == repr(t)
    assert not e.weight.requires_grad
    np.testing.assert_array_equal(e.weight.detach().numpy(), table)  # the padding row is kept as given
    np.testing.assert_array_equal(e(ember.tensor([1, 2])).numpy(), t(torch.tensor([1, 2])).numpy())
    trainable = ember.nn.Embedding.from_pretrained(ember.tensor(table), freeze=False)
    assert trainable.weight.requires_grad


def test_from_pretrained_shares_memory():
    table = ember.zeros(3, 2)
    m = ember.nn.Embedding.from_pretrained(table)
    table.add_(1)
    assert m.weight.detach().numpy().sum() == 6


def test_embedding_errors():
    same_error(lambda lib: lib.nn.Embedding(5, 2, padding_idx=5))
    same_error(lambda lib: lib.nn.Embedding(5, 2, padding_idx=-6))
    same_error(lambda lib: lib.nn.Embedding(5, 2, _weight=lib.ones(4, 2)))
    same_error(lambda lib: lib.nn.Embedding.from_pretrained(lib.ones(4)))
    same_error(lambda lib: lib.nn.Embedding(5, 2)(lib.tensor([5])))
    same_error(lambda lib: lib.nn.Embedding(5, 2)(lib.tensor([1.0])))


def test_embedding_loads_torch_state():
    e, t = both(7, 4, padding_idx=0)
    copy_torch_state(e, t)
    np.testing.assert_array_equal(e.weight.detach().numpy(), t.weight.detach().numpy())
    assert list(e.state_dict()) == ["weight"]
