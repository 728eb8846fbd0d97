"""``ember.autograd.Variable``, the pre-0.4 wrapper, as torch 2.13 keeps it."""

import pytest
import torch

import ember


def test_variable_is_a_detached_alias_with_requires_grad():
    for lib in (torch, ember):
        leaf = lib.ones(2, requires_grad=True)
        result = leaf * 2
        for source in (leaf, result):
            v = lib.autograd.Variable(source)
            assert not v.requires_grad and v.grad_fn is None and v.data_ptr() == source.data_ptr()
        v = lib.autograd.Variable(lib.ones(2), requires_grad=True)
        assert v.is_leaf and v.requires_grad
        (v * 3).sum().backward()
        assert v.grad.tolist() == [3.0, 3.0]
        assert isinstance(leaf, lib.autograd.Variable) and not isinstance(2.0, lib.autograd.Variable)
        assert tuple(lib.autograd.Variable().shape) == (0,)


def test_volatile_warns_and_non_tensors_are_refused():
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            lib.autograd.Variable(lib.ones(1), volatile=True)
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            lib.autograd.Variable([1, 2])
