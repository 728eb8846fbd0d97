"""rrelu / nn.RReLU and gumbel_softmax: random, so compared with torch by shape, dtype,
the eval-mode values, statistics and gradients of the drawn sample; reproducible under
ember.manual_seed."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rrelu_eval_is_leaky_relu_at_the_mean_slope(dtype):
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(dtype)
    for kwargs in ({}, {"lower": 0.1, "upper": 0.5}):
        assert_close(ember.nn.functional.rrelu(ember.tensor(x), **kwargs),
                     torch.nn.functional.rrelu(torch.tensor(x), **kwargs))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_rrelu_training_draws_a_slope_per_negative_element(dtype):
    ember.manual_seed(0)
    x = ember.randn(50000, dtype=dtype, requires_grad=True)
    y = ember.nn.functional.rrelu(x, 0.1, 0.4, training=True)
    assert y.dtype == dtype and y.shape == x.shape
    y.sum().backward()
    negative = x.detach() <= 0
    slopes = (y.detach() / x.detach())[negative]
    assert 0.1 <= float(slopes.min()) and float(slopes.max()) <= 0.4
    assert abs(float(slopes.mean()) - 0.25) < 0.01
    assert_close(x.grad[negative], torch.tensor(slopes.numpy()))  # the gradient is the drawn slope
    assert bool((x.grad[~negative] == 1).all())
    ember.manual_seed(0)
    again = ember.nn.functional.rrelu(ember.randn(50000, dtype=dtype), 0.1, 0.4, training=True)
    assert (again == y.detach()).all()


def test_rrelu_module_and_errors():
    assert repr(ember.nn.RReLU(0.1, 0.3, True)) == repr(torch.nn.RReLU(0.1, 0.3, True))
    x = ember.randn(3, 4)
    assert_close(ember.nn.RReLU().eval()(x), torch.nn.RReLU().eval()(torch.tensor(x.numpy())))
    with pytest.raises(RuntimeError) as expected:
        torch.nn.functional.rrelu(torch.ones(2), 0.5, 0.1, training=True)
    with pytest.raises(RuntimeError) as actual:
        ember.nn.functional.rrelu(ember.ones(2), 0.5, 0.1, training=True)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
def test_gumbel_softmax(hard, dim):
    ember.manual_seed(1)
    logits = ember.tensor(np.log([[0.1, 0.2, 0.7]] * 4000), requires_grad=True)
    sample = ember.nn.functional.gumbel_softmax(logits, tau=0.5, hard=hard, dim=dim)
    reference = torch.nn.functional.gumbel_softmax(torch.tensor(logits.detach().numpy()), tau=0.5, hard=hard,
                                                   dim=dim)
    assert sample.shape == tuple(reference.shape) and sample.dtype == ember.float64
    assert_close(sample.sum(dim), torch.ones(tuple(reference.sum(dim).shape), dtype=torch.float64))
    if dim == -1:  # categorical draws with softmax(logits)'s frequencies
        frequencies = (sample.argmax(-1).numpy()[:, None] == np.arange(3)).mean(0)
        assert np.allclose(frequencies, [0.1, 0.2, 0.7], atol=0.03)
    sample.sum().backward()  # each row sums to 1: the straight-through gradient is 0
    assert float(logits.grad.abs().max()) < 1e-6
    ember.manual_seed(1)
    assert (ember.nn.functional.gumbel_softmax(logits.detach(), tau=0.5, hard=hard, dim=dim) == sample).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bounds", [(), (0.1, 0.9), (0.25, 0.25)])
@pytest.mark.parametrize("inplace", [False, True])
def test_rrelu_training_draws_torchs_slopes(dtype, bounds, inplace):
    # one double-precision draw per element <= 0 (NaN draws none), in row-major order of a transposed input
    x = np.random.default_rng(1).standard_normal((6, 5)).astype(dtype).T
    x[0, 0], x[1, 1] = np.nan, 0.0
    results = []
    for lib in (ember, torch):
        lib.manual_seed(3)
        leaf = lib.tensor(x, requires_grad=True)
        base = leaf * 1
        y = lib.nn.functional.rrelu(base, *bounds, training=True, inplace=inplace)
        y.backward(lib.ones_like(y))
        results.append((y.detach().numpy(), leaf.grad.numpy(), lib.rand(2).numpy()))  # the generator moved alike
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


def test_rrelu_of_empty_and_0d_inputs_like_torch():
    for shape in [(0, 3), ()]:
        results = []
        for lib in (ember, torch):
            lib.manual_seed(0)
            results.append(lib.nn.functional.rrelu(-lib.ones(shape), training=True).numpy())
        np.testing.assert_array_equal(*results)
