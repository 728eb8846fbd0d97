"""Every optimizer of ember-optim step for step against torch.optim.

The same parameters and the same random gradients go to both for ten steps, for several
hyper-parameter sets each, in float64 (tight tolerance) and float32, with parameter
groups of different learning rates and a parameter that sometimes has no gradient; the
state dicts are compared entry by entry.
"""

import numpy as np
import pytest
import torch

import ember
from tests.plugins.optim.helpers import assert_params_equal, assert_state_dicts_match, make_params, set_grads

CASES = {
    "SGD": [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
            dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1), dict(lr=0.1, momentum=0.5, maximize=True)],
    "Adam": [dict(), dict(lr=0.01, amsgrad=True), dict(lr=0.01, weight_decay=0.1, maximize=True),
             dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, amsgrad=True, weight_decay=0.05),
             dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1)],
    "AdamW": [dict(), dict(lr=0.01, amsgrad=True, weight_decay=0.1), dict(lr=0.01, maximize=True)],
    "RMSprop": [dict(), dict(centered=True), dict(momentum=0.9),
                dict(centered=True, momentum=0.5, weight_decay=0.1, alpha=0.9), dict(maximize=True, eps=1e-4)],
    "Adagrad": [dict(), dict(lr_decay=0.01, initial_accumulator_value=0.1),
                dict(lr=0.1, weight_decay=0.1, maximize=True, eps=1e-5)],
    "Adadelta": [dict(), dict(lr=0.5, rho=0.8, weight_decay=0.1), dict(maximize=True, eps=1e-4)],
    "Adamax": [dict(), dict(weight_decay=0.1, betas=(0.8, 0.9)), dict(lr=0.01, maximize=True)],
    "NAdam": [dict(), dict(momentum_decay=0.01, weight_decay=0.1), dict(decoupled_weight_decay=True, weight_decay=0.1),
              dict(lr=0.01, maximize=True)],
    "RAdam": [dict(), dict(weight_decay=0.1), dict(decoupled_weight_decay=True, weight_decay=0.1),
              dict(lr=0.01, betas=(0.9, 0.9), maximize=True)],
}
ALL = [(name, kwargs) for name, settings in CASES.items() for kwargs in settings]
IDS = [f"{name}-{i}" for name, settings in CASES.items() for i in range(len(settings))]


def run_both(name, kwargs, dtype="float64", steps=10, groups=None, seed=0):
    """Step an ember and a torch optimizer side by side; compare parameters after each step."""
    mine, theirs = make_params(dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed + 100)
    if groups is None:
        opt_mine = getattr(ember.optim, name)(mine, **kwargs)
        opt_theirs = getattr(torch.optim, name)(theirs, **kwargs)
    else:
        opt_mine = getattr(ember.optim, name)(groups(mine), **kwargs)
        opt_theirs = getattr(torch.optim, name)(groups(theirs), **kwargs)
    for step in range(steps):
        set_grads(mine, theirs, rng, skip=(1,) if step % 4 == 3 else ())
        opt_mine.step()
        opt_theirs.step()
        assert_params_equal(mine, theirs, dtype, msg=f"{name} {kwargs} step {step}")
    return opt_mine, opt_theirs, mine, theirs


@pytest.mark.parametrize("name, kwargs", ALL, ids=IDS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_steps_match_torch(name, kwargs, dtype):
    opt_mine, opt_theirs, _, _ = run_both(name, kwargs, dtype)
    assert_state_dicts_match(opt_mine.state_dict(), opt_theirs.state_dict(), dtype)


def _two_groups(params):
    return [{"params": params[:1], "lr": 0.03}, {"params": params[1:]}]


@pytest.mark.parametrize("name", list(CASES))
def test_param_groups_with_their_own_lr(name):
    opt_mine, opt_theirs, _, _ = run_both(name, dict(lr=0.01), groups=_two_groups)
    assert [g["lr"] for g in opt_mine.param_groups] == [0.03, 0.01]
    assert_state_dicts_match(opt_mine.state_dict(), opt_theirs.state_dict())


@pytest.mark.parametrize("name", list(CASES))
def test_closure_is_evaluated_with_grad_enabled(name):
    """``step(closure)`` returns the closure's loss; the closure runs backward even
    though the update itself runs under no_grad."""
    mine, theirs = make_params()

    def closure_for(lib, params, opt):
        def closure():
            opt.zero_grad()
            loss = sum((p * p * p).sum() for p in params)
            loss.backward()
            return loss
        return closure

    opt_mine = getattr(ember.optim, name)(mine, lr=0.01)
    opt_theirs = getattr(torch.optim, name)(theirs, lr=0.01)
    for _ in range(3):
        with ember.no_grad():
            loss_mine = opt_mine.step(closure_for(ember, mine, opt_mine))
        loss_theirs = opt_theirs.step(closure_for(torch, theirs, opt_theirs))
        np.testing.assert_allclose(loss_mine.item(), loss_theirs.item(), rtol=1e-10)
    assert_params_equal(mine, theirs)


def test_optimizer_defaults_and_group_options_match_torch():
    for name in CASES:
        mine, theirs = make_params()
        opt_mine = getattr(ember.optim, name)(mine)
        opt_theirs = getattr(torch.optim, name)(theirs)
        for key, value in opt_mine.defaults.items():
            assert opt_theirs.defaults[key] == value, (name, key)


def test_updates_keep_the_parameter_objects_and_record_no_graph():
    mine, _ = make_params()
    before = [id(p) for p in mine]
    opt = ember.optim.Adam(mine, lr=0.1)
    for p in mine:
        p.grad = ember.ones_like(p)
    opt.step()
    assert [id(p) for p in mine] == before
    assert all(p.grad_fn is None and p.is_leaf and p.requires_grad for p in mine)
    assert all(t.grad_fn is None for state in opt.state.values() for t in state.values())


def test_functional_forms_are_the_update_loops():
    """``ember_optim.functional.sgd`` is the loop SGD.step calls, usable on its own."""
    from ember_optim import functional

    mine, theirs = make_params()
    rng = np.random.default_rng(3)
    set_grads(mine, theirs, rng)
    buffers = [None] * len(mine)
    with ember.no_grad():
        functional.sgd(mine, [p.grad for p in mine], buffers, lr=0.1, momentum=0.9, dampening=0.0,
                       weight_decay=0.0, nesterov=False, maximize=False)
    torch.optim.SGD(theirs, lr=0.1, momentum=0.9).step()
    assert_params_equal(mine, theirs)
    assert all(b is not None for b in buffers)
    assert sorted(functional.__all__) == sorted(name.lower() for name in CASES)


def test_sgd_step_uses_the_inplace_fast_path():
    """The SGD update writes into the parameters' own memory (no new arrays), as the
    MLP benchmark's hand-written step does."""
    mine, _ = make_params(dtype="float32")
    arrays = [p._data for p in mine]
    opt = ember.optim.SGD(mine, lr=0.1, momentum=0.9)
    for _ in range(2):
        for p in mine:
            p.grad = ember.ones_like(p)
        opt.step()
    assert all(p._data is a for p, a in zip(mine, arrays))
    buffer = opt.state[mine[0]]["momentum_buffer"]
    np.testing.assert_allclose(buffer.numpy(), np.full((3, 4), 1.9, np.float32))
