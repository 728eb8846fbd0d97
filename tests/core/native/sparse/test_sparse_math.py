"""Sparse products, sums and softmax against torch: values and gradients (to the dense
operand and to the values), uncoalesced duplicates, hybrid tensors, float32 and
float64; embedding(sparse=True) and the optimizers that take sparse gradients.

PyTorch counterpart: test/test_sparse.py and test/test_optim.py (v2.13); torch is the oracle.
"""

import re
import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings("ignore", message="Sparse invariant checks")
warnings.filterwarnings("ignore", message="Sparse CSR tensor support")

INDICES = np.array([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]])  # (0, 2) twice
RNG = np.random.default_rng(0)


def _run(lib, fn, values, dense, dtype):
    v = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    d = lib.tensor(dense, dtype=getattr(lib, dtype), requires_grad=True)
    s = lib.sparse_coo_tensor(lib.tensor(INDICES), v, (3, 3))
    out = fn(lib, s, d)
    out = out.to_dense() if out.layout != lib.strided else out
    cotangent = lib.tensor(RNG.standard_normal(tuple(out.shape)), dtype=out.dtype)
    (out * cotangent).sum().backward()
    return out.detach().numpy(), v.grad.numpy(), d.grad.numpy()


PRODUCTS = {
    "sparse.mm": lambda lib, s, d: lib.sparse.mm(s, d),
    "mm": lambda lib, s, d: lib.mm(s, d),
    "matmul": lambda lib, s, d: s @ d,
    "spmm": lambda lib, s, d: lib.spmm(s, d),
    "addmm": lambda lib, s, d: lib.sparse.addmm(d[:, :2] * 1, s, d, beta=0.5, alpha=2.0),
    "sparse.softmax": lambda lib, s, d: lib.sparse.mm(lib.sparse.softmax(s, 1), d),
    "sparse.log_softmax": lambda lib, s, d: lib.sparse.mm(lib.sparse.log_softmax(s, 0), d),
    "sparse.sum": lambda lib, s, d: lib.sparse.sum(s, 1).to_dense().unsqueeze(1) * d[:, :1],
    "dense @ sparse": lambda lib, s, d: lib.mm(d.t(), s),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_ops_agree_with_torch_in_values_and_gradients(name, dtype):
    values, dense = RNG.standard_normal(5), RNG.standard_normal((3, 2))
    state = RNG.bit_generator.state
    ours = _run(ember, PRODUCTS[name], values, dense, dtype)
    RNG.bit_generator.state = state  # the same cotangent for both
    theirs = _run(torch, PRODUCTS[name], values, dense, dtype)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance)


def test_sparse_mm_gives_a_sparse_leaf_a_sparse_gradient_with_its_pattern():
    dense = RNG.standard_normal((3, 2))
    grads = []
    for lib in (ember, torch):
        s = lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(np.arange(5.0)), (3, 3), requires_grad=True)
        lib.sparse.mm(s.coalesce(), lib.tensor(dense)).sum().backward() if lib is torch else \
            lib.sparse.mm(s, lib.tensor(dense)).sum().backward()
        grads.append(s.grad)
    assert grads[0].layout is ember.sparse_coo and grads[1].layout == torch.sparse_coo
    # ember's pattern is the leaf's (a duplicate entry each gets the gradient at its position)
    np.testing.assert_allclose(grads[0].coalesce().to_dense().numpy() / np.array([[1, 1, 2], [1, 1, 1], [1, 1, 1]]),
                               grads[1].to_dense().numpy() * (grads[0].coalesce().to_dense().numpy() != 0))


def test_sparse_sparse_mm_and_hybrid_sum_agree():
    a = RNG.standard_normal(5)
    e = ember.sparse_coo_tensor(ember.tensor(INDICES), ember.tensor(a), (3, 3))
    t = torch.sparse_coo_tensor(torch.tensor(INDICES), torch.tensor(a), (3, 3))
    np.testing.assert_allclose(ember.sparse.mm(e, e.t()).to_dense().numpy(),
                               torch.sparse.mm(t, t.t()).to_dense().numpy())
    hybrid = RNG.standard_normal((5, 2))
    e = ember.sparse_coo_tensor(ember.tensor(INDICES), ember.tensor(hybrid), (3, 3, 2))
    t = torch.sparse_coo_tensor(torch.tensor(INDICES), torch.tensor(hybrid), (3, 3, 2))
    for dim in (0, 1, 2, (0, 2), (0, 1)):
        ours, theirs = ember.sparse.sum(e, dim), torch.sparse.sum(t, dim)
        ours = ours.to_dense() if ours.is_sparse else ours
        theirs = theirs.to_dense() if theirs.is_sparse else theirs
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    assert float(ember.sparse.sum(e)) == pytest.approx(float(torch.sparse.sum(t)))
    for dim in (1, 2):
        np.testing.assert_allclose(ember.sparse.softmax(e, dim).to_dense().numpy(),
                                   torch.sparse.softmax(t, dim).to_dense().numpy(), rtol=1e-12)


def test_sparse_plus_sparse_and_errors_as_torch():
    e = ember.sparse_coo_tensor(ember.tensor(INDICES), ember.ones(5), (3, 3))
    t = torch.sparse_coo_tensor(torch.tensor(INDICES), torch.ones(5), (3, 3))
    ours, theirs = e + e, t + t  # torch merges entries here, ember concatenates: the same tensor
    np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())
    ours, theirs = e.coalesce() + e.coalesce(), t.coalesce() + t.coalesce()
    assert ours._nnz() == theirs._nnz() and ours.is_coalesced() == theirs.is_coalesced()
    np.testing.assert_array_equal(ours._values().numpy(), theirs._values().numpy())
    calls = [(lambda: e + 1, lambda: t + 1),
             (lambda: ember.sparse.mm(e, ember.ones(2, 2)), lambda: torch.sparse.mm(t, torch.ones(2, 2))),
             (lambda: ember.sparse.mm(e, ember.ones(3, 2, dtype=ember.float64)),
              lambda: torch.sparse.mm(t, torch.ones(3, 2, dtype=torch.float64)))]
    for ember_call, torch_call in calls:
        with pytest.raises(RuntimeError) as expected:
            torch_call()
        with pytest.raises(RuntimeError, match=re.escape(str(expected.value).split("\n")[0])):
            ember_call()


def test_sampled_addmm_and_mm_reduce_agree_with_gradients():
    a = np.eye(4) + np.diag(np.ones(3), 1)
    m1, m2 = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 4))
    results = []
    for lib in (ember, torch):
        x, y = lib.tensor(m1, requires_grad=True), lib.tensor(m2, requires_grad=True)
        out = lib.sparse.sampled_addmm(lib.tensor(a).to_sparse_csr(), x, y, beta=0.2, alpha=0.6).to_dense()
        out.sum().backward()
        results.append([out.detach().numpy(), x.grad.numpy(), y.grad.numpy()])
        for reduce in ("sum", "mean", "amax", "amin"):
            z = lib.tensor(m1, requires_grad=True)
            out = lib.sparse.mm(lib.tensor(a * 2).to_sparse_csr(), z, reduce)
            (out * lib.tensor(np.arange(12.0).reshape(4, 3))).sum().backward()
            results[-1] += [out.detach().numpy(), z.grad.numpy()]
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_embedding_sparse_gradients_agree_and_accumulate():
    weight, idx = RNG.standard_normal((6, 3)), np.array([[1, 2, 1], [0, 5, 1]])
    for kwargs in ({}, {"padding_idx": 1}):
        grads = []
        for lib in (ember, torch):
            w = lib.tensor(weight, requires_grad=True)
            lib.nn.functional.embedding(lib.tensor(idx), w, sparse=True, **kwargs).sum().backward()
            first = (w.grad.is_coalesced(), w.grad._indices().numpy().copy(), w.grad._values().numpy().copy())
            lib.nn.functional.embedding(lib.tensor(idx), w, sparse=True, **kwargs).sum().backward()
            grads.append((first, w.grad))
        (ours, ours_total), (theirs, theirs_total) = grads
        assert ours_total.layout is ember.sparse_coo and ours[0] == theirs[0]
        np.testing.assert_array_equal(ours[1], theirs[1])
        np.testing.assert_allclose(ours[2], theirs[2])
        # a second backward: ember concatenates the entries, torch merges some; the same tensor
        np.testing.assert_allclose(ours_total.to_dense().numpy(), theirs_total.to_dense().numpy())
    w = ember.tensor(weight, requires_grad=True)
    with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
        ember.nn.functional.embedding(ember.tensor(idx), w, sparse=True, scale_grad_by_freq=True).sum().backward()


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
                                         ("SparseAdam", {"lr": 0.1, "betas": (0.8, 0.9)})])
def test_optimizers_take_sparse_gradients_as_torch(name, kwargs):
    weight, idx = RNG.standard_normal((6, 3)), np.array([[1, 2, 1], [0, 5, 1]])
    finals = []
    for lib in (ember, torch):
        table = lib.nn.Embedding(6, 3, sparse=True)
        with lib.no_grad():
            table.weight.copy_(lib.tensor(weight, dtype=lib.float32))
        optimizer = getattr(lib.optim, name)(table.parameters(), **kwargs)
        for step in range(3):
            optimizer.zero_grad()
            (table(lib.tensor(idx[:, :2 + step % 2])) ** 2).sum().backward()
            optimizer.step()
        finals.append(table.weight.detach().numpy())
    np.testing.assert_allclose(*finals, rtol=1e-6, atol=1e-6)


def test_sparse_adam_refuses_dense_gradients_as_torch():
    w = ember.nn.Parameter(ember.ones(2))
    optimizer = ember.optim.SparseAdam([w])
    w.grad = ember.ones(2)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        optimizer.step()


def test_zero_grad_without_none_empties_a_sparse_gradient_as_torch():
    results = []
    for lib in (ember, torch):
        table = lib.nn.Embedding(4, 2, sparse=True)
        optimizer = lib.optim.SGD(table.parameters(), lr=0.1)
        table(lib.tensor([1, 1])).sum().backward()
        optimizer.zero_grad(set_to_none=False)
        grad = table.weight.grad
        results.append((grad.layout is lib.sparse_coo, grad._nnz(), grad.is_coalesced(),
                        tuple(grad._values().shape)))
    assert results[0] == results[1]
