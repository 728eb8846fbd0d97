"""The lazy modules (LazyLinear, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d) and
UninitializedParameter against torch: shapes from the first input, the class they become,
their repr before and after, outputs once torch's parameters are copied in, loading a
state dict into an uninitialized module, and the errors."""

import numpy as np
import pytest
import torch

import ember
from ember.nn.parameter import UninitializedParameter, is_lazy
from ember.testing import assert_close

CASES = [
    ("LazyLinear", (3,), {}, (2, 5)),
    ("LazyConv1d", (4, 3), {"stride": 2}, (2, 3, 9)),
    ("LazyConv2d", (4, 3), {"groups": 2, "padding": 1}, (2, 6, 5, 5)),
    ("LazyConv3d", (2, 2), {}, (3, 4, 4, 4)),  # unbatched
    ("LazyConvTranspose1d", (4, 2), {"stride": 2}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2}, (2, 6, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), {"bias": False}, (1, 3, 3, 3, 3)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", CASES)
def test_lazy_module_becomes_its_eager_class(name, args, kwargs, shape):
    e_module, t_module = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(e_module) == repr(t_module)
    assert is_lazy(e_module.weight) and e_module.has_uninitialized_params()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    e_out, t_out = e_module(ember.tensor(x)), t_module(torch.tensor(x))
    assert type(e_module).__name__ == type(t_module).__name__
    assert repr(e_module) == repr(t_module)
    for (e_name, e_param), (t_name, t_param) in zip(e_module.named_parameters(), t_module.named_parameters()):
        assert e_name == t_name and tuple(e_param.shape) == tuple(t_param.shape)
        assert type(e_param) is ember.nn.Parameter
    assert tuple(e_out.shape) == tuple(t_out.shape)
    e_module.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t_module.state_dict().items()})
    assert_close(e_module(ember.tensor(x)), t_module(torch.tensor(x)), atol=1e-5, rtol=1e-4)


def test_loading_a_state_dict_materializes_the_parameters():
    source = torch.nn.Conv2d(3, 4, 3)
    e_module = ember.nn.LazyConv2d(4, 3)
    e_module.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in source.state_dict().items()})
    assert not e_module.has_uninitialized_params()
    x = np.random.default_rng(1).standard_normal((1, 3, 5, 5)).astype(np.float32)
    assert_close(e_module(ember.tensor(x)), source(torch.tensor(x)), atol=1e-5, rtol=1e-4)
    assert type(e_module) is ember.nn.Conv2d


def test_uninitialized_parameter():
    p = UninitializedParameter(dtype=ember.float64)
    assert repr(p) == "<UninitializedParameter>" and is_lazy(p)
    p.materialize((2, 3))
    assert type(p) is ember.nn.Parameter and p.dtype == ember.float64 and tuple(p.shape) == (2, 3)
    assert p.requires_grad


def test_errors_like_torch():
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            lib.nn.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 5, 5))
    with pytest.raises(RuntimeError) as expected:
        torch.nn.LazyConv2d(4, 3)(torch.ones(5, 5))
    with pytest.raises(RuntimeError) as actual:
        ember.nn.LazyConv2d(4, 3)(ember.ones(5, 5))
    assert str(actual.value) == str(expected.value).replace("torch.Size(", "").replace("])", "]")
