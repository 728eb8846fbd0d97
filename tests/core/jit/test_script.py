"""Model code written for torch.jit.script runs on ember, eagerly (NOTE [ ember.jit.script
runs eagerly ]): the same numbers as torch's scripted module."""

import warnings

import numpy as np
import pytest
import torch

import ember


def _model(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = lib.nn.Linear(3, 2)

        @lib.jit.ignore
        def debug(self, x):
            return x

        @lib.jit.unused
        def unused_path(self, x):
            raise RuntimeError("never called")

        @lib.jit.export
        def scaled(self, x):
            return self.forward(x) * 2

        def forward(self, x):
            if lib.jit.is_scripting():
                return lib.relu(self.linear(x))
            return lib.relu(self.linear(x))

    return Block()


def test_a_scripted_module_gives_torchs_numbers():
    data = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    t_model, e_model = _model(torch), _model(ember)
    e_model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t_model.state_dict().items()})
    for lib in (torch, ember):
        with pytest.warns(DeprecationWarning, match="jit.script` is deprecated"):
            lib.jit.script(lib.nn.Identity())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        t_scripted, e_scripted = torch.jit.script(t_model), ember.jit.script(e_model)
    assert e_scripted is e_model
    np.testing.assert_allclose(e_scripted(ember.tensor(data)).detach().numpy(),
                               t_scripted(torch.tensor(data)).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(e_scripted.scaled(ember.tensor(data)).detach().numpy(),
                               t_scripted.scaled(torch.tensor(data)).detach().numpy(), rtol=1e-6)


def test_scripted_functions_and_the_helpers():
    with pytest.warns(DeprecationWarning):
        @ember.jit.script
        def double(x):
            return x * 2

    assert double(ember.ones(2)).tolist() == [2.0, 2.0]
    assert ember.jit.ignore(drop=True)(len) is len and ember.jit.annotate(list, [1]) == [1]
    assert not ember.jit.is_scripting() and not torch.jit.is_scripting()


def test_is_tracing_is_true_only_inside_a_trace():
    seen = []

    def f(x):
        seen.append(ember.jit.is_tracing())
        return x + 1

    ember.jit.trace(f, ember.ones(2), check_trace=False)
    f(ember.ones(2))
    assert seen == [True, False]
