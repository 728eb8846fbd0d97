"""aten::max_pool2d_with_indices_backward called as torch's schema (grad_output, self,
kernel_size, stride, padding, dilation, ceil_mode, indices) against torch.ops.aten: values,
the gradient through it (double backward), the input's zero gradient, float32/float64,
channels_last and overlapping windows."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close, make_tensor

CASES = [  # (shape, kernel_size, stride, padding, dilation, ceil_mode)
    ((2, 3, 6, 7), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((1, 2, 7, 8), (3, 2), (1, 1), (1, 0), (1, 1), True),  # overlapping windows share pixels
    ((2, 2, 9, 9), (3, 3), (2, 1), (1, 1), (2, 1), False),
    ((3, 6, 5), (2, 2), (1, 2), (0, 1), (1, 1), True),  # unbatched
]


def _call(lib, x, g, args, channels_last):
    if channels_last:
        x = x.contiguous(memory_format=lib.channels_last)
    out, indices = lib.nn.functional.max_pool2d_with_indices(x, *args[:4], ceil_mode=args[4])
    grad_out = g.reshape(tuple(out.shape)).requires_grad_()
    if lib is torch:
        return torch.ops.aten.max_pool2d_with_indices_backward.default(grad_out, x, *args, indices), grad_out
    names = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")  # ember's ops take attributes by name
    return ember.ops.aten.max_pool2d_with_indices_backward(grad_out, x, indices, **dict(zip(names, args))), grad_out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("case", CASES)
def test_max_pool2d_with_indices_backward(case, channels_last, dtype):
    shape, *args = case
    if channels_last and len(shape) < 4:
        return
    x_np = make_tensor(shape, dtype)
    out_shape = torch.nn.functional.max_pool2d(torch.from_numpy(x_np), *args[:4], ceil_mode=args[4]).shape
    g_np = make_tensor(tuple(out_shape), dtype, seed=1)
    results = {}
    for lib in (torch, ember):
        x = lib.tensor(x_np, requires_grad=True)
        result, grad_out = _call(lib, x, lib.tensor(g_np), args, channels_last)
        cotangent = lib.tensor(make_tensor(shape, dtype, seed=2))
        grads = lib.autograd.grad(result, (grad_out, x), cotangent, allow_unused=True)
        results[lib] = result, grads
    (result, grads), (expected, expected_grads) = results[ember], results[torch]
    assert_close(result, expected)
    assert tuple(result.stride()) == tuple(expected.stride())
    assert_close(grads[0], expected_grads[0])  # the adjoint reads each gradient back at its argmax
    assert grads[1] is None and not expected_grads[1].any()  # the input gives only the shape


def test_max_pool2d_backward_after_the_input_changed():
    # max_pool2d's own backward keeps the indices only; it runs on a stand-in of the input's shape
    x = ember.tensor(np.asarray(make_tensor((1, 1, 4, 4), "float64")), requires_grad=True)
    t = torch.tensor(x.detach().numpy(), requires_grad=True)
    for lib, leaf in ((ember, x), (torch, t)):
        lib.nn.functional.max_pool2d(leaf * 1, 2, 1).sum().backward()
    assert_close(x.grad, t.grad)
