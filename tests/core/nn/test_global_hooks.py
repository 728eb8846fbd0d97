"""Global module hooks (torch.nn.modules.module.register_module_*): the same calls, in the
same order, with the same arguments' shapes, as torch; removing them ends them."""

import numpy as np
import pytest
import torch

import ember


def _calls(lib):
    from importlib import import_module

    module_mod = import_module(f"{lib.__name__}.nn.modules.module")
    log = []
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    model[0].register_forward_hook(lambda m, a, out: log.append(("own forward", type(m).__name__)))
    handles = [
        module_mod.register_module_forward_pre_hook(lambda m, a: log.append(("pre", type(m).__name__))),
        module_mod.register_module_forward_hook(lambda m, a, out: log.append(("forward", type(m).__name__,
                                                                              tuple(out.shape)))),
        module_mod.register_module_forward_hook(lambda m, a, k, out: log.append(("kwargs", sorted(k))),
                                                with_kwargs=True),
        module_mod.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("backward", type(m).__name__, tuple(go[0].shape)))),
        module_mod.register_module_full_backward_pre_hook(lambda m, go: log.append(("backward pre",
                                                                                    type(m).__name__))),
    ]
    x = lib.tensor(np.ones((5, 3), dtype=np.float32), requires_grad=True)
    model(x).sum().backward()
    for handle in handles:
        handle.remove()
    model(x)  # only the module's own hook now
    return log


def test_global_hooks_run_as_torchs():
    assert _calls(ember) == _calls(torch)


def test_a_global_forward_hook_may_replace_the_output():
    handle = ember.nn.modules.module.register_module_forward_hook(
        lambda m, a, out: out * 0 if isinstance(m, ember.nn.Linear) else None)
    try:
        assert ember.nn.Linear(2, 2)(ember.ones(1, 2)).abs().sum().item() == 0
    finally:
        handle.remove()
    assert not ember.nn.modules.global_hooks.STATE.any


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_global_pre_hooks_see_modules_built_before_them(lib):
    seen = []
    layer = lib.nn.Tanh()
    handle = lib.nn.modules.module.register_module_forward_pre_hook(lambda m, a: seen.append(m))
    layer(lib.ones(1))
    handle.remove()
    layer(lib.ones(1))
    assert seen == [layer]
