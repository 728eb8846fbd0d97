"""The legacy typed classes (``ember.FloatTensor`` ...) and ``Tensor.new``, against torch's."""

import numpy as np
import pytest
import torch

import ember

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]


def same_dtype(e, t):
    return str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]


@pytest.mark.parametrize("name", NAMES)
def test_each_typed_class_builds_as_torchs(name):
    E, T = getattr(ember, name), getattr(torch, name)
    assert str(E.dtype).split(".")[1] == str(T.dtype).split(".")[1]
    for args in [(), (2, 3), ([1, 0, 3],), ([[1.7, 2.2]],), (np.array([1.0, 2.0]),)]:
        e, t = E(*args), T(*args)
        assert tuple(e.shape) == tuple(t.shape) and same_dtype(e, t), (name, args)
        if args and not isinstance(args[0], int):
            np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())
    assert tuple(E(ember.Size([2, 4])).shape) == tuple(T(torch.Size([2, 4])).shape)


@pytest.mark.parametrize("name", NAMES)
def test_isinstance_compares_the_dtype(name):
    for dtype_name in ["float32", "float64", "int64", "bool", "uint8"]:
        e, t = ember.zeros(2, dtype=getattr(ember, dtype_name)), torch.zeros(2, dtype=getattr(torch, dtype_name))
        assert isinstance(e, getattr(ember, name)) == isinstance(t, getattr(torch, name)), (name, dtype_name)
        assert isinstance(e, ember.Tensor)
    assert not isinstance(np.zeros(2), getattr(ember, name))


def test_a_tensor_of_the_same_type_is_aliased_another_refused():
    e = ember.ones(3)
    alias = ember.FloatTensor(e)
    alias[0] = 5.0
    assert e[0].item() == 5.0  # the same storage, as torch.FloatTensor(t)
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.ones(2, dtype=torch.int64))
    with pytest.raises(TypeError, match=r"expected ember\.float32 \(got ember\.int64\)"):
        ember.FloatTensor(ember.ones(2, dtype=ember.int64))


def test_type_converts_to_a_typed_class_or_its_name():
    e, t = ember.ones(2), torch.ones(2)
    assert e.type() == "ember.FloatTensor" and t.type() == "torch.FloatTensor"
    for target in ["LongTensor", "DoubleTensor", "ByteTensor"]:
        assert same_dtype(e.type(getattr(ember, target)), t.type(getattr(torch, target)))
        assert same_dtype(e.type("torch." + target), t.type("torch." + target))


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_new_keeps_the_tensors_dtype(dtype):
    e, t = ember.ones(2, dtype=getattr(ember, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
    for args in [(), (2, 3), ([1, 2],), (ember.Size([4]),)]:
        targs = tuple(torch.Size(a) if isinstance(a, ember.Size) else a for a in args)
        got, want = e.new(*args), t.new(*targs)
        assert tuple(got.shape) == tuple(want.shape) and same_dtype(got, want)


def test_the_math_constants_are_torchs():
    assert (ember.pi, ember.e, ember.inf) == (torch.pi, torch.e, torch.inf)
    assert np.isnan(ember.nan) and ember.newaxis is None and torch.newaxis is None
