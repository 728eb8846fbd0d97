"""Shared helpers of the ember.nn tests: the same module tree built with ember and with
torch, and conversions between their state dicts.

Only the Module system is used here (no Linear, no activation), so these tests do not
depend on the layers other files test.
"""

import numpy as np
import torch

import ember


def define_classes(lib):
    """The test's module classes, defined for ``lib`` (ember or torch), same names in both."""
    nn = lib.nn

    class Affine(nn.Module):
        """y = x @ weight.T + bias, with a persistent and a non-persistent buffer."""

        def __init__(self, n_in, n_out, bias=True):
            super().__init__()
            self.n_in, self.n_out = n_in, n_out
            self.weight = nn.Parameter(lib.zeros(n_out, n_in))
            self.bias = nn.Parameter(lib.zeros(n_out)) if bias else None
            self.register_buffer("steps", lib.zeros((), dtype=lib.int64))
            self.register_buffer("scratch", lib.zeros(n_out), persistent=False)

        def forward(self, x):
            y = x @ self.weight.T
            return y if self.bias is None else y + self.bias

        def extra_repr(self):
            return f"in_features={self.n_in}, out_features={self.n_out}, bias={self.bias is not None}"

    class Square(nn.Module):
        def forward(self, x):
            return x * x

    class Net(nn.Module):
        """A tree with nesting, a tied submodule, a ModuleDict and a ParameterList."""

        def __init__(self):
            super().__init__()
            self.stem = Affine(4, 3)
            self.body = nn.Sequential(Affine(3, 3), Square(), nn.Sequential(Affine(3, 2, bias=False)))
            self.heads = nn.ModuleDict({"main": Affine(2, 2), "aux": Square()})
            self.tied = self.stem
            self.extra = nn.ParameterList([nn.Parameter(lib.zeros(2))])
            self.scale = nn.Parameter(lib.ones(()))

        def forward(self, x):
            return self.heads["main"](self.body(self.stem(x))) * self.scale + self.extra[0]

    for cls in (Affine, Square, Net):
        cls.__qualname__ = cls.__name__  # ember's are importable from here (pickling tests)
    return Affine, Square, Net


def seed_parameters(torch_module, seed=0):
    """Fill every torch parameter and floating buffer with reproducible random values."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for t in list(torch_module.parameters()) + list(torch_module.buffers()):
            if t.is_floating_point():
                t.copy_(torch.from_numpy(rng.standard_normal(tuple(t.shape)).astype(np.float32)))


def to_ember_state(torch_state):
    """A torch state dict as ember tensors (same keys, same order)."""
    out = type(torch_state)((k, ember.tensor(v.detach().numpy())) for k, v in torch_state.items())
    if hasattr(torch_state, "_metadata"):
        out._metadata = torch_state._metadata
    return out


def both(fn):
    """``fn(lib)`` for ember and for torch."""
    return fn(ember), fn(torch)


def error_of(fn):
    """(exception type name, message with 'torch' spelled 'ember') raised by ``fn()``."""
    try:
        fn()
    except Exception as exc:  # the point is to compare whatever each library raises
        message = str(exc.args[0]) if exc.args else ""
        return type(exc).__name__, message.replace("torch", "ember")
    raise AssertionError("no exception raised")


def same_error(fn):
    """Assert ``fn(lib)`` raises the same exception type and message in both libraries."""
    ours, theirs = error_of(lambda: fn(ember)), error_of(lambda: fn(torch))
    assert ours == theirs
    return ours


def numpy_of(t):
    return None if t is None else t.detach().numpy()


Affine, Square, Net = define_classes(ember)
