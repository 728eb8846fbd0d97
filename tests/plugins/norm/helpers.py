"""Shared helpers for the ember-norm tests: build a torch module and the ember module
of the same name with the same parameters and buffers, run both, compare everything.

Tests for plugins/norm (PyTorch counterpart: torch/nn/modules/batchnorm.py,
instancenorm.py, normalization.py, v2.13).
"""

import numpy as np
import torch

import ember

TOLERANCES = {"float32": dict(rtol=2e-5, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-10)}
TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}
EMBER_DTYPES = {"float32": ember.float32, "float64": ember.float64}


def to_ember(t):
    """An ember tensor with the values (and dtype) of a torch tensor."""
    return ember.tensor(t.detach().numpy())


def randomize(torch_module, seed=0):
    """Non-trivial parameters and running statistics (the defaults are ones and zeros)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in torch_module.parameters():
            p.copy_(torch.rand(p.shape, generator=gen, dtype=p.dtype) + 0.5)
        for name, b in torch_module.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(torch.rand(b.shape, generator=gen, dtype=b.dtype) - 0.5)
            elif name.endswith("running_var"):
                b.copy_(torch.rand(b.shape, generator=gen, dtype=b.dtype) + 0.5)
    return torch_module


def make_pair(name, *args, dtype="float32", seed=0, **kwargs):
    """``(torch module, ember module)`` of class ``name`` with copied parameters and buffers."""
    torch_module = getattr(torch.nn, name)(*args, dtype=TORCH_DTYPES[dtype], **kwargs) \
        if name != "LocalResponseNorm" else torch.nn.LocalResponseNorm(*args, **kwargs)
    ember_module = getattr(ember.nn, name)(*args, dtype=EMBER_DTYPES[dtype], **kwargs) \
        if name != "LocalResponseNorm" else ember.nn.LocalResponseNorm(*args, **kwargs)
    randomize(torch_module, seed)
    copy_state(torch_module, ember_module)
    return torch_module, ember_module


def copy_state(torch_module, ember_module):
    """Copy every parameter and buffer value from torch into ember (in place, no autograd)."""
    ember_state = dict(ember_module.named_parameters())
    ember_state.update(dict(ember_module.named_buffers()))
    torch_state = dict(torch_module.named_parameters())
    torch_state.update(dict(torch_module.named_buffers()))
    assert sorted(ember_state) == sorted(torch_state)
    with ember.no_grad():
        for name, t in torch_state.items():
            ember_state[name].copy_(to_ember(t))


def assert_close(ember_tensor, torch_tensor, dtype, what):
    assert ember_tensor is not None, f"{what}: ember gave None, torch {torch_tensor}"
    assert tuple(ember_tensor.shape) == tuple(torch_tensor.shape), f"{what}: shape"
    assert str(ember_tensor.dtype).split(".")[-1] == str(torch_tensor.dtype).split(".")[-1], f"{what}: dtype"
    np.testing.assert_allclose(ember_tensor.detach().numpy(), torch_tensor.detach().numpy(),
                               err_msg=what, **TOLERANCES[dtype])


def assert_same_state(torch_module, ember_module, dtype, what=""):
    """Parameters and buffers (running stats, num_batches_tracked) agree."""
    ember_buffers = dict(ember_module.named_buffers())
    for name, t in torch_module.named_buffers():
        e = ember_buffers[name]
        if t.dtype == torch.int64:
            assert e.dtype == ember.int64 and e.shape == () and e.item() == t.item(), f"{what}{name}"
        else:
            assert_close(e, t, dtype, f"{what}{name}")


def step(torch_module, ember_module, x, dtype, seed=0, noncontiguous=False):
    """One forward and backward on both; compare output, input and parameter gradients."""
    rng = np.random.default_rng(seed)
    grad = rng.standard_normal(x.shape).astype(dtype)
    tx = torch.from_numpy(x.copy())
    ex = ember.tensor(x.copy())
    if noncontiguous:  # the same values, laid out transposed
        tx = torch.from_numpy(np.ascontiguousarray(np.swapaxes(x, 0, -1))).transpose(0, -1)
        ex = ember.tensor(np.ascontiguousarray(np.swapaxes(x, 0, -1))).transpose(0, -1)
        assert not ex.is_contiguous()
    tx.requires_grad_(True)
    ex.requires_grad_(True)
    for p in ember_module.parameters():
        p.grad = None
    torch_module.zero_grad()
    tout = torch_module(tx)
    eout = ember_module(ex)
    assert_close(eout, tout, dtype, "output")
    tout.backward(torch.from_numpy(grad))
    eout.backward(ember.tensor(grad))
    assert_close(ex.grad, tx.grad, dtype, "input grad")
    ember_params = dict(ember_module.named_parameters())
    for name, p in torch_module.named_parameters():
        assert_close(ember_params[name].grad, p.grad, dtype, f"{name}.grad")
    assert_same_state(torch_module, ember_module, dtype)
    return eout, tout


def random_input(shape, dtype, seed=0, scale=2.0, shift=0.5):
    return (np.random.default_rng(seed).standard_normal(shape) * scale + shift).astype(dtype)
