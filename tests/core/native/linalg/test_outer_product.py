"""Products with an inner dimension of 1 (ember/native/linalg/outer_product.py): mm,
matmul, bmm, addmm and linear give torch's bits, the sign of a zero included (-0.0 from
mm, +0.0 from bmm), and the gradients of a batch-one linear layer (whose weight gradient
is such a product) equal torch's. The documented difference: float16 keeps -0.0."""

import numpy as np
import pytest
import torch

import ember


def _same_bits(ours, theirs, zero_signs=True):
    ours, theirs = ours.detach().numpy(), theirs.detach().numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert np.array_equal(ours, theirs, equal_nan=True)
    if ours.dtype.kind == "f" and zero_signs:
        assert np.array_equal(np.signbit(ours), np.signbit(theirs))


def _column_and_row(dtype, batch=()):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(batch + (5, 1)) * 3
    b = rng.standard_normal(batch + (1, 7)) * 3
    a[..., 0, 0], b[..., 0, 1] = -1.0, 0.0  # -1 * 0: the sign of zero is kept as torch keeps it
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_column_times_row_is_torchs(dtype):
    a, b = _column_and_row(dtype)
    for name in ("mm", "matmul"):
        _same_bits(getattr(ember, name)(ember.tensor(a), ember.tensor(b)),
                   getattr(torch, name)(torch.tensor(a), torch.tensor(b)), zero_signs=dtype != "float16")


def test_float16_keeps_the_sign_of_a_zero_product():
    """The documented difference: torch's float16 mm writes -1 * 0 as +0.0, ember as -0.0."""
    a, b = _column_and_row("float16")
    assert ember.mm(ember.tensor(a), ember.tensor(b)).signbit()[0, 1].item()
    assert not torch.mm(torch.tensor(a), torch.tensor(b)).signbit()[0, 1].item()


def test_batched_and_transposed_operands():
    a, b = _column_and_row("float32", batch=(3,))
    _same_bits(ember.bmm(ember.tensor(a), ember.tensor(b)), torch.bmm(torch.tensor(a), torch.tensor(b)))
    _same_bits(ember.tensor(a) @ ember.tensor(b[0]), torch.tensor(a) @ torch.tensor(b[0]))  # broadcast batch
    rows = np.ascontiguousarray(a[0].T)  # a (1, 5) row seen transposed, as a weight gradient's operand is
    _same_bits(ember.tensor(rows).t() @ ember.tensor(b[0]), torch.tensor(rows).t() @ torch.tensor(b[0]))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, -2.0), (0, 1)])
def test_addmm_with_one_summand(beta, alpha):
    a, b = _column_and_row("float64")
    bias = np.random.default_rng(1).standard_normal(7)
    _same_bits(ember.addmm(ember.tensor(bias), ember.tensor(a), ember.tensor(b), beta=beta, alpha=alpha),
               torch.addmm(torch.tensor(bias), torch.tensor(a), torch.tensor(b), beta=beta, alpha=alpha))


@pytest.mark.parametrize("in_features,batch", [(1, 4), (6, 1)])
def test_linear_layer_with_one_summand(in_features, batch):
    """in_features == 1: the forward is a column times a row; batch == 1: the weight gradient is."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((batch, in_features)).astype(np.float32)
    w = rng.standard_normal((3, in_features)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        inputs = [lib.tensor(v).requires_grad_() for v in (x, w, bias)]
        out = lib.nn.functional.linear(*inputs)
        (out * lib.arange(3.0)).sum().backward()
        grads.append([out] + [t.grad for t in inputs])
    for ours, theirs in zip(*grads):
        _same_bits(ours, theirs)
