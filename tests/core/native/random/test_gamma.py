"""ember._standard_gamma and ember._sample_dirichlet draw torch's numbers after
manual_seed (float32 and float64, alpha below and above 1, broadcast and transposed
inputs); their reparameterisation gradients agree with torch's to its approximation
error; ember.poisson and ember.binomial draw torch's numbers too."""

import numpy as np
import pytest
import torch

import ember

DTYPES = [(torch.float32, ember.float32), (torch.float64, ember.float64)]
ALPHAS = np.concatenate([np.linspace(0.01, 0.99, 40), np.linspace(1.0, 30.0, 60), [1e-4, 0.5, 1.0, 200.0]])


@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
def test_standard_gamma_draws_torchs_numbers(dtypes):
    t_dtype, e_dtype = dtypes
    torch.manual_seed(5)
    expected = torch._standard_gamma(torch.tensor(ALPHAS, dtype=t_dtype))
    ember.manual_seed(5)
    actual = ember._standard_gamma(ember.tensor(ALPHAS, dtype=e_dtype))
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    # The generator is left where torch leaves it: the next normal agrees too.
    np.testing.assert_array_equal(ember.randn(3).numpy(), torch.randn(3).numpy())


@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
def test_standard_gamma_broadcast_and_transposed_inputs(dtypes):
    t_dtype, e_dtype = dtypes
    alpha = np.linspace(0.3, 4.0, 6).reshape(2, 3)
    for make in (lambda lib, a: a.t(), lambda lib, a: a[:1].expand(4, 3)):
        torch.manual_seed(6)
        expected = torch._standard_gamma(make(torch, torch.tensor(alpha, dtype=t_dtype)))
        ember.manual_seed(6)
        actual = ember._standard_gamma(make(ember, ember.tensor(alpha, dtype=e_dtype)))
        np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_standard_gamma_gradient_is_the_implicit_reparameterisation_gradient():
    alpha = torch.tensor(ALPHAS, dtype=torch.float64, requires_grad=True)
    torch.manual_seed(7)
    torch._standard_gamma(alpha).sum().backward()
    e_alpha = ember.tensor(ALPHAS, dtype=ember.float64, requires_grad=True)
    ember.manual_seed(7)
    ember._standard_gamma(e_alpha).sum().backward()
    # torch's gradient is an approximation good to a few parts in 1e4.
    np.testing.assert_allclose(e_alpha.grad.numpy(), alpha.grad.numpy(), rtol=1e-3)


@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
def test_sample_dirichlet_draws_torchs_numbers(dtypes):
    t_dtype, e_dtype = dtypes
    alpha = ALPHAS[:99].reshape(33, 3)
    torch.manual_seed(8)
    expected = torch._sample_dirichlet(torch.tensor(alpha, dtype=t_dtype))
    ember.manual_seed(8)
    actual = ember._sample_dirichlet(ember.tensor(alpha, dtype=e_dtype))
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_dirichlet_grad_agrees_with_torch():
    alpha = torch.tensor(ALPHAS[:99].reshape(33, 3), dtype=torch.float64)
    torch.manual_seed(9)
    x = torch._sample_dirichlet(alpha)
    total = alpha.sum(-1, True).expand_as(alpha)
    expected = torch._dirichlet_grad(x, alpha, total)
    actual = ember._dirichlet_grad(ember.tensor(x.numpy()), ember.tensor(alpha.numpy()), ember.tensor(total.numpy()))
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=3e-3)


def test_integer_inputs_are_refused_as_torch():
    with pytest.raises(NotImplementedError, match="\"gamma_cpu\" not implemented for 'Long'"):
        ember._standard_gamma(ember.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="\"gamma_cpu\" not implemented for 'Long'"):
        torch._standard_gamma(torch.tensor([1, 2]))


@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
def test_poisson_draws_torchs_numbers(dtypes):
    t_dtype, e_dtype = dtypes
    # Rates below 10 (product of uniforms), above (transformed rejection), and 0.
    rates = np.concatenate([np.linspace(0.0, 30.0, 300), [100.0, 1000.0]]).reshape(2, -1)
    torch.manual_seed(10)
    expected = torch.poisson(torch.tensor(rates, dtype=t_dtype).t())
    ember.manual_seed(10)
    actual = ember.poisson(ember.tensor(rates, dtype=e_dtype).t())
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    assert str(actual.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]


@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
def test_binomial_draws_torchs_numbers(dtypes):
    t_dtype, e_dtype = dtypes
    # n p below and above 10 (inversion, BTRS), p on both sides of 1/2, and p of 0 and 1.
    count = np.repeat([0.0, 1.0, 5.0, 20.0, 50.0, 200.0, 1000.0], 52)
    prob = np.tile(np.concatenate([[0.0, 1.0], np.linspace(0.01, 0.99, 50)]), 7)
    torch.manual_seed(11)
    expected = torch.binomial(torch.tensor(count, dtype=t_dtype), torch.tensor(prob, dtype=t_dtype))
    ember.manual_seed(11)
    actual = ember.binomial(ember.tensor(count, dtype=e_dtype), ember.tensor(prob, dtype=e_dtype))
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_poisson_refuses_negative_rates():
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        ember.poisson(ember.tensor([-1.0]))
