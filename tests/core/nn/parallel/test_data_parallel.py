"""Tests for ember/nn/parallel/data_parallel.py, replicate.py, scatter_gather.py and
parallel_apply.py: two replicas on CPU threads against torch's module on the whole
batch (values and gradients, float64), nested inputs and outputs, errors."""

import numpy as np
import pytest
import torch

import ember
from ember.nn.parallel import DataParallel, data_parallel, gather, parallel_apply, replicate, scatter

CPUS = ["cpu", "cpu"]


def twins(with_norm=False):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)]
    if with_norm:
        layers.insert(1, torch.nn.BatchNorm1d(5))
    reference = torch.nn.Sequential(*layers).double()
    mine = [ember.nn.Linear(3, 5), ember.nn.Tanh(), ember.nn.Linear(5, 2)]
    if with_norm:
        mine.insert(1, ember.nn.BatchNorm1d(5))
    model = ember.nn.Sequential(*mine).double()
    model.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in
                           reference.state_dict().items()})
    return model, reference


def test_two_cpu_replicas_equal_torch_on_the_whole_batch():
    model, reference = twins()
    x = np.random.default_rng(0).standard_normal((7, 3))  # 7 rows: chunks of 4 and 3
    out = DataParallel(model, device_ids=CPUS)(ember.from_numpy(x))
    expected = reference(torch.from_numpy(x))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12)
    (out ** 2).sum().backward()
    (expected ** 2).sum().backward()
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)


def test_batch_norm_sees_each_replicas_slice_like_torch_replicas():
    model, reference = twins(with_norm=True)
    x = np.random.default_rng(1).standard_normal((8, 3))
    out = data_parallel(model, ember.from_numpy(x), device_ids=CPUS)
    halves = [reference(torch.from_numpy(x[:4])), reference(torch.from_numpy(x[4:]))]
    np.testing.assert_allclose(out.detach().numpy(), torch.cat(halves).detach().numpy(), rtol=1e-12, atol=1e-12)


def test_nested_inputs_keywords_and_outputs():
    class Pair(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = ember.nn.Linear(2, 2)

        def forward(self, inputs, scale=1.0, extra=None):
            a, b = inputs
            return {"sum": self.fc(a + b) * scale, "parts": (a, extra["k"])}

    model = Pair()
    a, b, k = ember.randn(4, 2), ember.randn(4, 2), ember.randn(4, 1)
    out = DataParallel(model, device_ids=CPUS)((a, b), scale=2.0, extra={"k": k})
    assert ember.allclose(out["sum"], model.fc(a + b) * 2.0)
    assert ember.equal(out["parts"][0], a) and ember.equal(out["parts"][1], k)


def test_scatter_gather_and_replicate():
    x = ember.arange(10.0).reshape(5, 2)
    pieces = scatter((x, "tag"), CPUS)
    assert [p[0].shape for p in pieces] == [(3, 2), (2, 2)] and pieces[1][1] == "tag"
    assert ember.equal(gather([p[0] for p in pieces], "cpu"), x)
    model = ember.nn.Linear(2, 2)
    copies = replicate(model, CPUS)
    assert copies[0] is not model and copies[0].weight is not model.weight
    assert not copies[0].weight.is_leaf and ember.equal(copies[0].weight, model.weight)
    assert list(model.parameters())[0] is model.weight  # the original is untouched


def test_an_error_in_a_replica_names_it():
    class Fails(ember.nn.Module):
        def forward(self, x):
            raise ValueError("bad batch")

    with pytest.raises(ValueError, match=r"Caught ValueError in replica 0 on device cpu.\nOriginal Traceback"):
        parallel_apply([Fails(), Fails()], [(ember.ones(1),), (ember.ones(1),)], devices=["cpu", "cpu"])


def test_without_device_ids_and_without_cuda_the_module_runs_unchanged():
    model = ember.nn.Linear(2, 3)
    dp = DataParallel(model, device_ids=[] if not ember.cuda.is_available() else None)
    x = ember.randn(4, 2)
    assert ember.equal(dp(x), model(x))
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
