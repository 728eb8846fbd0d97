"""The batch-norm kernels' fast paths against torch: per-channel values laid out like
the input (NOTE [ Per-channel values laid out like the input ]: batches of 4 or more,
NCHW and channels_last, 3-d images, and the broadcast kept for small batches and other
layouts), the one-pass batch statistics with channels far from zero (NOTE [ Batch
statistics in one pass, checked ]), in training and eval, float32 and float64.

Tests for plugins/norm/src/ember_norm/ops/batch_norm.py (PyTorch counterpart:
aten/src/ATen/native/Normalization.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from tests.plugins.norm.helpers import assert_close, make_pair, random_input, step

# Every test runs on the installed cpu kernels and on ember-norm's NumPy ones (conftest.py).
pytestmark = pytest.mark.usefixtures("cpu_kernels")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, shape", [("BatchNorm2d", (8, 5, 3, 4)), ("BatchNorm3d", (4, 3, 2, 3, 4)),
                                         ("BatchNorm1d", (6, 3, 7)), ("BatchNorm2d", (3, 5, 3, 4))])
@pytest.mark.parametrize("train", [True, False])
def test_batches_of_four_or_more_match_torch(dtype, name, shape, train):
    torch_bn, ember_bn = make_pair(name, shape[1], dtype=dtype)
    if not train:
        torch_bn.eval()
        ember_bn.eval()
    step(torch_bn, ember_bn, random_input(shape, dtype, seed=1), dtype, seed=1)
    step(torch_bn, ember_bn, random_input(shape, dtype, seed=2), dtype, seed=2, noncontiguous=True)


def channels_last_pair(x, grad):
    tx = torch.from_numpy(x).contiguous(memory_format=torch.channels_last).requires_grad_()
    ex = ember.tensor(x).contiguous(memory_format=ember.channels_last).requires_grad_()
    return (tx, torch.from_numpy(grad)), (ex, ember.tensor(grad))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("batch", [8, 2])
def test_channels_last_matches_torch_and_keeps_its_layout(dtype, train, batch):
    shape = (batch, 6, 3, 5)
    torch_bn, ember_bn = make_pair("BatchNorm2d", 6, dtype=dtype)
    torch_bn.train(train)
    ember_bn.train(train)
    x, grad = random_input(shape, dtype, seed=3), random_input(shape, dtype, seed=4)
    (tx, tgrad), (ex, egrad) = channels_last_pair(x, grad)
    tout, eout = torch_bn(tx), ember_bn(ex)
    assert eout.is_contiguous(memory_format=ember.channels_last)
    assert_close(eout, tout, dtype, "output")
    tout.backward(tgrad)
    eout.backward(egrad)
    assert_close(ex.grad, tx.grad, dtype, "input grad")
    assert_close(ember_bn.weight.grad, torch_bn.weight.grad, dtype, "weight grad")
    assert_close(ember_bn.bias.grad, torch_bn.bias.grad, dtype, "bias grad")
    assert_close(ember_bn.running_var, torch_bn.running_var, dtype, "running_var")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_channels_far_from_zero_match_torch(dtype):
    # Channel means 10 and 50 times their spread: the checked statistics take the second
    # pass there, and the other channels stay one-pass. (Further out, torch's output and
    # ember's differ by the mean's own rounding times invstd: both compute
    # x * scale + shift.)
    x = random_input((8, 4, 5, 5), "float64", seed=5, scale=1.0, shift=0.0)
    x[:, 1] += 10.0
    x[:, 2] += 50.0
    x[:, 3] += 0.9  # |mean| just under the spread: one pass
    torch_bn, ember_bn = make_pair("BatchNorm2d", 4, dtype=dtype)
    step(torch_bn, ember_bn, x.astype(dtype), dtype, seed=6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_statistics_of_channels_far_from_zero_are_accurate(dtype):
    x = random_input((8, 4, 5, 5), "float64", seed=7, scale=1.0, shift=0.0)
    x[:, 1] = x[:, 1] * 0.1 + 100.0
    x[:, 2] = x[:, 2] * 0.01 + 100.0
    x = x.astype(dtype)
    mean, invstd, unbiased = ember.ops.norm.batch_norm_stats(ember.tensor(x), eps=0.0)
    reference = x.astype(np.float64).transpose(1, 0, 2, 3).reshape(4, -1)
    np.testing.assert_allclose(mean.numpy(), reference.mean(axis=1), rtol=1e-7 if dtype == "float32" else 1e-14)
    np.testing.assert_allclose(unbiased.numpy(), reference.var(axis=1, ddof=1),
                               rtol=2e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, channels_last", [((4, 5, 3, 2), False), ((4, 5, 3, 2), True),
                                                  ((6, 3, 7), False), ((4, 3, 2, 3, 4), False)])
def test_patterns_filled_by_broadcast_equal_repeat_and_tile(dtype, shape, channels_last):
    # The expressions the broadcasting fill replaced, value for value and stride for stride.
    from ember_norm.ops.batch_norm import per_channel

    like = random_input(shape, dtype, seed=8)
    if channels_last:
        like = like.transpose(0, 2, 3, 1).copy().transpose(0, 3, 1, 2)
    values = random_input((shape[1],), dtype, seed=9)
    length = int(np.prod(shape[2:]))
    if channels_last:
        expected = np.tile(values, length).reshape(shape[2:] + (shape[1],)).transpose(2, 0, 1)
    else:
        expected = np.repeat(values, length).reshape(shape[1:])
    pattern = per_channel(np, values, like)
    assert pattern.dtype == values.dtype and pattern.strides == expected.strides
    np.testing.assert_array_equal(pattern, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("channels_last", [False, True])
def test_eval_forward_without_grad_equals_grad_mode_and_torch(dtype, affine, channels_last):
    # NOTE [ The eval batch norm's fixed cost ]: under no_grad the running statistics are
    # read without a second no_grad block; the output is the same bits as in grad mode.
    torch_bn, ember_bn = make_pair("BatchNorm2d", 6, dtype=dtype, affine=affine)
    torch_bn.eval()
    ember_bn.eval()
    x, grad = random_input((8, 6, 4, 5), dtype, seed=10), random_input((8, 6, 4, 5), dtype, seed=11)
    (tx, _), (ex, _) = channels_last_pair(x, grad) if channels_last else ((torch.tensor(x), 0), (ember.tensor(x), 0))
    with ember.no_grad():
        inferred = ember_bn(ex.detach())
    graphed = ember_bn(ex)
    np.testing.assert_array_equal(inferred.numpy(), graphed.detach().numpy())
    assert inferred.stride() == graphed.stride() and not inferred.requires_grad
    assert_close(inferred, torch_bn(tx), dtype, "output")
