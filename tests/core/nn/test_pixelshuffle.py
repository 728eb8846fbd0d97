"""PixelShuffle / PixelUnshuffle against torch: values, gradients, batch dims, errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close


@pytest.mark.parametrize("shape,factor", [((1, 8, 3, 5), 2), ((2, 3, 18, 2, 2), 3), ((4, 1, 1), 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shuffle_and_unshuffle_match_torch(shape, factor, dtype):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    e_x, t_x = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    e_y, t_y = ember.nn.PixelShuffle(factor)(e_x), torch.nn.PixelShuffle(factor)(t_x)
    assert_close(e_y, t_y)
    back_e, back_t = ember.nn.PixelUnshuffle(factor)(e_y), torch.nn.PixelUnshuffle(factor)(t_y)
    assert_close(back_e, back_t)
    cotangent = np.random.default_rng(1).standard_normal(tuple(t_y.shape)).astype(dtype)
    (e_y * ember.tensor(cotangent)).sum().backward()
    (t_y * torch.tensor(cotangent)).sum().backward()
    assert_close(e_x.grad, t_x.grad)
    assert repr(ember.nn.PixelShuffle(factor)) == repr(torch.nn.PixelShuffle(factor))


def test_empty_inputs_forward_like_torch():
    # (torch's own backward fails on these, so only the forward is compared; torch's
    # pixel_unshuffle returns an empty input's shape unchanged, and ember follows.)
    for shape in ((0, 4, 2, 2), (1, 0, 4, 4)):
        for name in ("pixel_shuffle", "pixel_unshuffle"):
            e = getattr(ember.nn.functional, name)(ember.ones(shape), 2)
            t = getattr(torch.nn.functional, name)(torch.ones(shape), 2)
            assert tuple(e.shape) == tuple(t.shape), (name, shape)


def test_non_contiguous_input():
    x = np.random.default_rng(2).standard_normal((2, 4, 6, 4)).astype(np.float32)
    e = ember.nn.functional.pixel_unshuffle(ember.tensor(x).transpose(2, 3), 2)
    t = torch.nn.functional.pixel_unshuffle(torch.tensor(x).transpose(2, 3), 2)
    assert_close(e, t)


@pytest.mark.parametrize("name,shape,factor", [("pixel_shuffle", (2, 3), 2), ("pixel_shuffle", (5, 2, 2), 2),
                                               ("pixel_shuffle", (4, 2, 2), 0), ("pixel_unshuffle", (1, 3, 3), 2),
                                               ("pixel_unshuffle", (1, 4, 3), 2), ("pixel_unshuffle", (4, 4), 2)])
def test_errors_like_torch(name, shape, factor):
    with pytest.raises(RuntimeError) as expected:
        getattr(torch.nn.functional, name)(torch.ones(shape), factor)
    with pytest.raises(RuntimeError) as actual:
        getattr(ember.nn.functional, name)(ember.ones(shape), factor)
    assert str(actual.value) == str(expected.value)
