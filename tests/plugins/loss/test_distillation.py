"""Tests for ember_loss/distillation.py: Hinton et al.'s loss, checked against the same formula in torch."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember


def torch_distillation(student, teacher, target, temperature, alpha, reduction):
    """The formula written with torch's kl_div and cross_entropy: the oracle."""
    soft = TF.kl_div(TF.log_softmax(student / temperature, dim=1), TF.log_softmax(teacher / temperature, dim=1),
                     reduction="batchmean" if reduction == "mean" else "sum", log_target=True)
    return alpha * temperature ** 2 * soft + (1 - alpha) * TF.cross_entropy(student, target, reduction=reduction)


def logits(seed, dtype):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((6, 5)).astype(dtype) * 3, rng.integers(0, 5, 6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("temperature, alpha", [(1.0, 0.5), (4.0, 0.9), (2.5, 0.0), (8.0, 1.0)])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_value_and_student_gradient_match_torch(dtype, temperature, alpha, reduction):
    (student, target), (teacher, _) = logits(0, dtype), logits(1, dtype)
    ours_s, ours_t = ember.tensor(student, requires_grad=True), ember.tensor(teacher, requires_grad=True)
    theirs_s = torch.tensor(student, requires_grad=True)
    loss = ember.nn.DistillationLoss(temperature, alpha, reduction)(ours_s, ours_t, ember.tensor(target))
    expected = torch_distillation(theirs_s, torch.tensor(teacher), torch.tensor(target), temperature, alpha,
                                  reduction)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=tol, atol=tol)
    loss.backward()
    expected.backward()
    np.testing.assert_allclose(ours_s.grad.numpy(), theirs_s.grad.numpy(), rtol=tol, atol=tol)
    assert ours_t.grad is None  # the teacher does not learn


def test_the_temperature_squared_factor_keeps_the_soft_gradient_scale():
    """Hinton et al. section 2: for large T the KL gradient is about (z - v) / (N C T^2); times T^2 it
    no longer depends on T (without the factor it would shrink 16-fold from T = 10 to T = 40)."""
    (student, _), (teacher, _) = logits(2, "float64"), logits(3, "float64")
    student, teacher = student * 0.05, teacher * 0.05  # small logits: the high-temperature regime
    norms = []
    for temperature in (10.0, 40.0):
        s = ember.tensor(student, requires_grad=True)
        ember.nn.functional.distillation_loss(s, ember.tensor(teacher), ember.tensor([0] * 6), temperature,
                                              alpha=1.0).backward()
        norms.append(np.linalg.norm(s.grad.numpy()))
    assert norms[1] == pytest.approx(norms[0], rel=0.02)


@pytest.mark.parametrize("kwargs, message", [({"temperature": 0}, "temperature must be positive"),
                                             ({"alpha": 1.5}, "alpha must be in"),
                                             ({"reduction": "none"}, "reduction must be")])
def test_bad_arguments_are_named(kwargs, message):
    (student, target), (teacher, _) = logits(0, "float32"), logits(1, "float32")
    with pytest.raises(ValueError, match=message):
        ember.nn.functional.distillation_loss(ember.tensor(student), ember.tensor(teacher), ember.tensor(target),
                                              **kwargs)
