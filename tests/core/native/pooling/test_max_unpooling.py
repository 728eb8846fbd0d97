"""max_unpool1d/2d/3d and nn.MaxUnpool1d/2d/3d against torch: values and gradients from
max pooling's indices, float32 and float64, batched and unbatched, output_size, errors."""

import re

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close

CASES = [  # (dims, input shape, pool kwargs, output_size)
    (1, (2, 3, 9), {"kernel_size": 2}, None),
    (1, (3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}, None),
    (2, (2, 3, 6, 7), {"kernel_size": 2}, (6, 7)),
    (2, (3, 7, 8), {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 0)}, None),
    (3, (2, 2, 4, 5, 6), {"kernel_size": 2}, (2, 2, 5, 5, 7)),
    (3, (2, 5, 6, 7), {"kernel_size": (2, 3, 2), "stride": 2}, (5, 6, 7)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dims,shape,kwargs,output_size", CASES)
def test_max_unpool(dims, shape, kwargs, output_size, dtype):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    t_pooled, t_indices = getattr(torch.nn.functional, f"max_pool{dims}d")(torch.tensor(x), return_indices=True,
                                                                             **kwargs)
    results = {}
    for lib in (ember, torch):
        leaf = lib.tensor(t_pooled.numpy(), requires_grad=True)
        out = getattr(lib.nn.functional, f"max_unpool{dims}d")(leaf, lib.tensor(t_indices.numpy()),
                                                               output_size=output_size, **kwargs)
        results[lib] = leaf, out
    (e_leaf, e_out), (t_leaf, t_out) = results[ember], results[torch]
    assert_close(e_out, t_out)
    cotangent = np.random.default_rng(1).standard_normal(tuple(t_out.shape)).astype(dtype)
    (e_out * ember.tensor(cotangent)).sum().backward()
    (t_out * torch.tensor(cotangent)).sum().backward()
    assert_close(e_leaf.grad, t_leaf.grad)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_modules_round_trip(dims):
    shape = (2, 3) + (6,) * dims
    x = np.random.default_rng(2).standard_normal(shape)
    outs = {}
    for lib in (ember, torch):
        pool = getattr(lib.nn, f"MaxPool{dims}d")(2, return_indices=True)
        unpool = getattr(lib.nn, f"MaxUnpool{dims}d")(2)
        outs[lib] = unpool(*pool(lib.tensor(x)))
        outs[lib, "repr"] = repr(unpool)
    assert outs[ember, "repr"] == outs[torch, "repr"]
    assert_close(outs[ember], outs[torch])


@pytest.mark.parametrize("exception,call", [
    (RuntimeError, lambda F, lib, y, i: F.max_unpool2d(y, i.int(), 2)),
    (RuntimeError, lambda F, lib, y, i: F.max_unpool2d(y, i[..., :1], 2)),
    (RuntimeError, lambda F, lib, y, i: F.max_unpool2d(y, i * 10, 2)),
    (ValueError, lambda F, lib, y, i: F.max_unpool2d(y, i, 2, output_size=(9, 9))),
    (ValueError, lambda F, lib, y, i: F.max_unpool2d(y, i, 2, output_size=(5, 5, 5))),
    (RuntimeError, lambda F, lib, y, i: F.max_unpool2d(y[0, 0], i[0, 0], 2)),
    (RuntimeError, lambda F, lib, y, i: F.max_unpool3d(y[0], i[0], 2)),
])
def test_errors_like_torch(exception, call):
    x = np.random.default_rng(3).standard_normal((1, 2, 4, 4))
    t_y, t_i = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    with pytest.raises(exception) as expected:
        call(torch.nn.functional, torch, t_y, t_i)
    with pytest.raises(exception) as actual:
        call(ember.nn.functional, ember, ember.tensor(t_y.numpy()), ember.tensor(t_i.numpy()))
    # which invalid index is named depends on torch's threads: compare the rest of the message
    assert re.sub(r"index: \d+", "", str(actual.value)) == re.sub(r"index: \d+", "", str(expected.value))
