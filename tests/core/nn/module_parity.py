"""Layer parity against torch: the same module in both libraries, torch's random weights
copied into ember, then outputs, input gradients and parameter gradients compared.

    check_module(ember.nn.Linear(3, 4), torch.nn.Linear(3, 4), make_tensor((2, 3)))

Inputs are NumPy arrays (floating ones require grad in both libraries) or any other
value (passed to both unchanged); ``kwargs`` of the forward are converted the same way.
"""

import numpy as np
import torch

import ember
from ember.testing import assert_close


def copy_torch_state(ember_module, torch_module):
    """Load torch's parameters and buffers into ember (``ember.tensor(p.detach().numpy())``)."""
    state = {name: ember.tensor(value.detach().numpy()) for name, value in torch_module.state_dict().items()}
    result = ember_module.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys, result


def _convert(lib, value, requires_grad):
    if isinstance(value, np.ndarray):
        t = torch.from_numpy(value.copy()) if lib is torch else ember.tensor(value.copy())
        if requires_grad and value.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    return value


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


def check_module(ember_module, torch_module, *inputs, kwargs=None, dtype="float32", rtol=None, atol=None,
                 grad_rtol=None, grad_atol=None, same_inputs=None, seed=0):
    """Compare ``module(*inputs, **kwargs)`` in both libraries, forward and backward.

    ``dtype="float64"`` converts both modules with ``.double()``. ``same_inputs`` is a
    tuple of positions whose inputs must be the *same* tensor object as input 0 (e.g.
    self-attention's ``m(x, x, x)``). Returns the (ember, torch) outputs.
    """
    kwargs = kwargs or {}
    if dtype == "float64":
        torch_module.double()
        ember_module.double()
    copy_torch_state(ember_module, torch_module)
    results = {}
    for lib, module in ((ember, ember_module), (torch, torch_module)):
        args = [_convert(lib, x, True) for x in inputs]
        for position in same_inputs or ():
            args[position] = args[0]
        kw = {k: _convert(lib, v, False) for k, v in kwargs.items()}
        results[lib] = (args, module(*args, **kw))
    (e_args, e_out), (t_args, t_out) = results[ember], results[torch]
    e_flat, t_flat = _flat(e_out), _flat(t_out)
    assert len(e_flat) == len(t_flat)
    for i, (a, e) in enumerate(zip(e_flat, t_flat)):
        if e is None:
            assert a is None, f"output {i}: torch gives None, ember {a}"
            continue
        assert_close(a, e, rtol, atol, msg=f"output {i}: ")

    rng = np.random.default_rng(seed)
    pairs = [(a, e) for a, e in zip(e_flat, t_flat) if isinstance(e, torch.Tensor) and e.requires_grad]
    seeds = [rng.uniform(-1, 1, tuple(e.shape)).astype(str(e.dtype).split(".")[-1]) for _, e in pairs]
    if not pairs:
        return e_out, t_out
    torch.autograd.backward([e for _, e in pairs], [torch.from_numpy(s) for s in seeds])
    ember.autograd.backward([a for a, _ in pairs], [ember.tensor(s) for s in seeds])
    seen = set()  # an input passed in several positions is checked once
    for i, (a, e) in enumerate(zip(e_args, t_args)):
        if isinstance(e, torch.Tensor) and e.requires_grad and id(e) not in seen:
            seen.add(id(e))
            assert_close(a.grad, e.grad, grad_rtol or rtol, grad_atol or atol, msg=f"grad of input {i}: ")
    e_params = dict(ember_module.named_parameters())
    for name, p in torch_module.named_parameters():
        if p.grad is None:
            assert e_params[name].grad is None, f"parameter {name}: torch has no grad, ember has one"
            continue
        assert_close(e_params[name].grad, p.grad, grad_rtol or rtol, grad_atol or atol,
                     msg=f"grad of parameter {name}: ")
    return e_out, t_out


def same_structure(ember_module, torch_module):
    """Same repr, parameter names and shapes, and state-dict keys."""
    assert repr(ember_module) == repr(torch_module)
    e_params = [(n, tuple(p.shape)) for n, p in ember_module.named_parameters()]
    t_params = [(n, tuple(p.shape)) for n, p in torch_module.named_parameters()]
    assert e_params == t_params
    assert list(ember_module.state_dict()) == list(torch_module.state_dict())


def same_error(fn):
    """``fn(lib)`` raises the same exception type (and message) in ember and torch."""
    outcome = {}
    for lib in (ember, torch):
        try:
            fn(lib)
        except Exception as exc:  # comparing whatever each library raises
            outcome[lib] = (type(exc).__name__, str(exc).replace("torch", "ember"))
        else:
            outcome[lib] = None
    assert outcome[torch] is not None, "torch did not raise"
    assert outcome[ember] == outcome[torch], f"ember: {outcome[ember]}\ntorch: {outcome[torch]}"
