"""channel_shuffle / nn.ChannelShuffle and lp_pool1d/2d/3d / nn.LPPool1d/2d/3d against
torch: values and gradients, float32 and float64, batched and unbatched, odd and
fractional powers, ceil_mode, the errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close


def _compare(call, shape, dtype, positive=False, transposed=False):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    x = np.abs(x) + 0.1 if positive else x
    results = {}
    for lib in (ember, torch):
        leaf = lib.tensor(x, requires_grad=True)
        out = call(lib, leaf.transpose(-1, -2) if transposed else leaf)
        results[lib] = leaf, out
    (e_leaf, e_out), (t_leaf, t_out) = results[ember], results[torch]
    tol = {"atol": 1e-5, "rtol": 1e-4} if dtype == np.float32 else {}
    assert_close(e_out, t_out, **tol)
    cotangent = np.random.default_rng(1).standard_normal(tuple(t_out.shape)).astype(dtype)
    (e_out * ember.tensor(cotangent)).sum().backward()
    (t_out * torch.tensor(cotangent)).sum().backward()
    assert_close(e_leaf.grad, t_leaf.grad, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,groups", [((2, 6, 3, 4), 3), ((2, 6, 3), 2), ((1, 8, 2, 2, 2), 4), ((3, 4, 5), 1)])
def test_channel_shuffle(shape, groups, dtype):
    _compare(lambda lib, x: lib.nn.functional.channel_shuffle(x, groups), shape, dtype, transposed=len(shape) > 3)
    _compare(lambda lib, x: lib.nn.ChannelShuffle(groups)(x), shape, dtype)
    assert repr(ember.nn.ChannelShuffle(groups)) == repr(torch.nn.ChannelShuffle(groups))


@pytest.mark.parametrize("call", [
    lambda F, lib: F.channel_shuffle(lib.ones(2, 6, 3, 3), 4),
    lambda F, lib: F.channel_shuffle(lib.ones(2, 6, 3, 3), 0),
    lambda F, lib: F.channel_shuffle(lib.ones(2, 6), 3),
])
def test_channel_shuffle_errors_like_torch(call):
    with pytest.raises(RuntimeError) as expected:
        call(torch.nn.functional, torch)
    with pytest.raises(RuntimeError) as actual:
        call(ember.nn.functional, ember)
    assert str(actual.value) == str(expected.value)


LP_CASES = [
    ("lp_pool1d", (2, 3, 9), {"kernel_size": 3}),
    ("lp_pool1d", (3, 8), {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    ("lp_pool2d", (2, 3, 6, 7), {"kernel_size": 2}),
    ("lp_pool2d", (3, 7, 8), {"kernel_size": (3, 2), "stride": (2, 1), "ceil_mode": True}),
    ("lp_pool3d", (2, 2, 4, 5, 6), {"kernel_size": 2}),
    ("lp_pool3d", (2, 5, 6, 7), {"kernel_size": (2, 3, 2), "stride": 1}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("norm_type", [1, 2, 3, 1.5])
@pytest.mark.parametrize("name,shape,kwargs", LP_CASES)
def test_lp_pool(name, shape, kwargs, norm_type, dtype):
    # fractional powers of negative values are NaN in both: positive inputs there
    _compare(lambda lib, x: getattr(lib.nn.functional, name)(x, norm_type, **kwargs), shape, dtype,
             positive=norm_type == 1.5)


@pytest.mark.parametrize("name,shape", [("LPPool1d", (2, 3, 9)), ("LPPool2d", (2, 3, 6, 7)),
                                        ("LPPool3d", (1, 2, 4, 5, 6))])
def test_lp_pool_modules(name, shape):
    e_module, t_module = getattr(ember.nn, name)(2, 2, stride=1), getattr(torch.nn, name)(2, 2, stride=1)
    assert repr(e_module) == repr(t_module)
    _compare(lambda lib, x: (e_module if lib is ember else t_module)(x), shape, np.float64)
