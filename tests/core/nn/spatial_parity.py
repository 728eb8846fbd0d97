"""Helpers of the convolution, pooling, padding, folding and upsampling tests: the
tolerances by dtype, and a layer check with torch's weights copied into ember."""

import numpy as np
import torch

import ember
from ember.testing import assert_close

# Sums over windows of up to a few hundred terms: float32 needs more than assert_close's default.
TOLERANCE = {"float32": dict(rtol=1e-4, atol=1e-4), "float64": dict(rtol=1e-7, atol=1e-9)}


def check_layer(ember_layer, torch_layer, x, dtype="float32", seed=0):
    """Copy ``torch_layer``'s parameters into ``ember_layer``, run both on ``x`` (a NumPy
    array), and compare outputs, input gradients and parameter gradients."""
    if dtype == "float64":
        torch_layer.double()
        ember_layer.double()
    state = {name: ember.tensor(value.detach().numpy()) for name, value in torch_layer.state_dict().items()}
    missing, unexpected = ember_layer.load_state_dict(state)
    assert not missing and not unexpected
    xe = ember.tensor(x.copy()).requires_grad_()
    xt = torch.from_numpy(x.copy()).requires_grad_()
    ye, yt = ember_layer(xe), torch_layer(xt)
    if isinstance(yt, tuple):  # (values, indices)
        assert_close(ye[1], yt[1])
        ye, yt = ye[0], yt[0]
    tol = TOLERANCE[dtype]
    assert_close(ye, yt, **tol)
    g = np.random.default_rng(seed).uniform(-1, 1, tuple(yt.shape)).astype(dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.from_numpy(g))
    assert_close(xe.grad, xt.grad, **tol, msg="input grad: ")
    ember_params = dict(ember_layer.named_parameters())
    for name, p in torch_layer.named_parameters():
        assert_close(ember_params[name].grad, p.grad, **tol, msg=f"grad of {name}: ")
    return ye, yt


def error_pair(fn):
    """``(type, message)`` raised by ``fn(ember)`` and by ``fn(torch)``."""
    outcome = []
    for lib in (ember, torch):
        try:
            fn(lib)
        except Exception as exc:  # comparing whatever each library raises
            outcome.append((type(exc), str(exc)))
        else:
            outcome.append(None)
    return outcome


def same_error(fn, message=True):
    ember_error, torch_error = error_pair(fn)
    assert torch_error is not None, "torch did not raise"
    assert ember_error is not None, f"ember did not raise; torch raised {torch_error}"
    assert ember_error[0] is torch_error[0], (ember_error, torch_error)
    if message:
        assert ember_error[1] == torch_error[1], (ember_error, torch_error)
