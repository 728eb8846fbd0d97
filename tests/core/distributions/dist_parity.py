"""Shared helper of the ember.distributions tests: one program run on torch and on ember
from the same parameters and the same seed, its values and its parameters' gradients
compared.
"""

import numpy as np
import torch

import ember

DTYPES = {"float32": (torch.float32, ember.float32), "float64": (torch.float64, ember.float64)}
TOLERANCE = {"float32": 2e-5, "float64": 1e-11}


def tensors(arrays, lib, dtype, requires_grad):
    """Each numpy array as a ``lib`` tensor of ``dtype`` (integer arrays keep their dtype)."""
    out = {}
    for name, array in arrays.items():
        floating = np.asarray(array).dtype.kind == "f"
        value = lib.tensor(np.asarray(array), dtype=dtype if floating else None)
        if floating and requires_grad:
            value.requires_grad_(True)
        out[name] = value
    return out


def _cotangent(shape):
    """A fixed, uneven weighting of an output's elements, so each gradient entry is tested."""
    n = int(np.prod(shape))
    return np.linspace(0.5, 1.5, max(n, 1))[:n].reshape(shape)


def run_both(program, arrays, dtype="float64", seed=0, requires_grad=True):
    """``program(lib, distributions, **params)`` on torch and on ember: (torch result, ember
    result, torch grads, ember grads); grads are of the output weighted by ``_cotangent``."""
    results = []
    for index, lib in enumerate((torch, ember)):
        params = tensors(arrays, lib, DTYPES[dtype][index], requires_grad)
        lib.manual_seed(seed)
        out = program(lib, lib.distributions, **params)
        grads = {}
        if requires_grad and out.requires_grad:
            weight = lib.tensor(_cotangent(tuple(out.shape)), dtype=out.dtype)
            leaves = [p for p in params.values() if p.requires_grad]
            found = lib.autograd.grad((out * weight).sum(), leaves, allow_unused=True)
            grads = {name: g for name, g in zip([n for n, p in params.items() if p.requires_grad], found)}
        results.append((out, grads))
    (t_out, t_grads), (e_out, e_grads) = results
    return t_out, e_out, t_grads, e_grads


def assert_close(ember_value, torch_value, dtype="float64", scale=1.0):
    """Same shape, dtype and values (NaN where torch has NaN, inf where it has inf)."""
    tol = TOLERANCE[dtype] * scale
    assert tuple(ember_value.shape) == tuple(torch_value.shape)
    assert str(ember_value.dtype).split(".")[-1] == str(torch_value.dtype).split(".")[-1]
    np.testing.assert_allclose(ember_value.detach().numpy(), torch_value.detach().numpy(), rtol=tol, atol=tol)


def assert_parity(program, arrays, dtype="float64", seed=0, requires_grad=True, scale=1.0):
    """Values and gradients of ``program`` agree between torch and ember."""
    t_out, e_out, t_grads, e_grads = run_both(program, arrays, dtype, seed, requires_grad)
    assert_close(e_out, t_out, dtype, scale)
    assert t_grads.keys() == e_grads.keys()
    for name in t_grads:
        if t_grads[name] is None:
            assert e_grads[name] is None or not bool(e_grads[name].abs().sum()), name
        else:
            assert e_grads[name] is not None, name
            assert_close(e_grads[name], t_grads[name], dtype, scale)
