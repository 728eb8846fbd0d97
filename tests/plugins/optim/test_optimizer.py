"""The Optimizer base class (ember_optim/optimizer.py) against torch.optim.Optimizer:
parameter groups, zero_grad, state dicts (ember round trips, torch -> ember and
ember -> torch), step hooks, repr and errors."""

import copy
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.plugins.optim.helpers import (
    TORCH_ONLY_OPTIONS,
    assert_params_equal,
    make_params,
    set_grads,
    to_ember_state_dict,
    to_torch_state_dict,
)

SETTINGS = [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)), ("Adam", dict(lr=0.01, amsgrad=True)),
            ("AdamW", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
            ("Adagrad", dict(lr=0.1, lr_decay=0.01)), ("Adadelta", dict()), ("Adamax", dict()),
            ("NAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.01))]
IDS = [name for name, _ in SETTINGS]


def _steps(opt, params, rng, count):
    """``count`` ember steps with random gradients."""
    for _ in range(count):
        for p in params:
            p.grad = ember.tensor(rng.standard_normal(tuple(p.shape)))
        opt.step()


def _groups(params):
    return [{"params": params[:1], "lr": 0.02}, {"params": params[1:]}]


@pytest.mark.parametrize("name, kwargs", SETTINGS, ids=IDS)
def test_state_dict_round_trip(name, kwargs):
    """A second optimizer loaded from the first's state dict continues identically."""
    params, _ = make_params()
    twin = [p.detach().clone().requires_grad_(True) for p in params]
    first = getattr(ember.optim, name)(_groups(params), **kwargs)
    _steps(first, params, np.random.default_rng(0), 4)
    with ember.no_grad():
        for t, p in zip(twin, params):
            t.copy_(p)
    second = getattr(ember.optim, name)(_groups(twin), **kwargs)
    second.load_state_dict(copy.deepcopy(first.state_dict()))
    assert second.param_groups[0]["lr"] == 0.02
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    _steps(first, params, rng_a, 4)
    _steps(second, twin, rng_b, 4)
    if name == "NAdam":
        # Loading casts the float32 `mu_product` to the parameters' float64, as PyTorch
        # does, so the loaded optimizer rounds differently from the original (in both
        # libraries; test_state_dicts_load_across_libraries checks ember does as torch).
        for p, t in zip(params, twin):
            np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=1e-8)
        return
    assert_params_equal(params, [torch.tensor(t.detach().numpy()) for t in twin])


@pytest.mark.parametrize("name, kwargs", SETTINGS, ids=IDS)
@pytest.mark.parametrize("direction", ["torch_to_ember", "ember_to_torch"])
def test_state_dicts_load_across_libraries(name, kwargs, direction):
    """Steps on one side, its state dict loaded on the other, then both continue in lock step."""
    mine, theirs = make_params()
    opt_mine = getattr(ember.optim, name)(_groups(mine), **kwargs)
    opt_theirs = getattr(torch.optim, name)(_groups(theirs), **kwargs)
    rng = np.random.default_rng(2)
    if direction == "torch_to_ember":
        for _ in range(5):
            set_grads(mine, theirs, rng)
            opt_theirs.step()
        with ember.no_grad():
            for m, t in zip(mine, theirs):
                m.copy_(ember.tensor(t.detach().numpy()))
        opt_mine.load_state_dict(to_ember_state_dict(opt_theirs.state_dict()))
        # Loading casts floating state to the parameters' dtype (NAdam's float32
        # mu_product becomes float64); put the source through the same load.
        opt_theirs.load_state_dict(opt_theirs.state_dict())
    else:
        for _ in range(5):
            set_grads(mine, theirs, rng)
            opt_mine.step()
        with torch.no_grad():
            for m, t in zip(mine, theirs):
                t.copy_(torch.tensor(m.detach().numpy()))
        opt_theirs.load_state_dict(to_torch_state_dict(opt_mine.state_dict()))
        opt_mine.load_state_dict(opt_mine.state_dict())
    for _ in range(5):
        set_grads(mine, theirs, rng)
        opt_mine.step()
        opt_theirs.step()
    assert_params_equal(mine, theirs)


def test_state_dict_format_is_torchs():
    mine, theirs = make_params()
    model_groups = lambda ps: [{"params": [ps[2], ps[0]], "lr": 0.5}, {"params": [ps[1]]}]  # noqa: E731
    opt_mine = ember.optim.SGD(model_groups(mine), lr=0.1, momentum=0.9)
    opt_theirs = torch.optim.SGD(model_groups(theirs), lr=0.1, momentum=0.9)
    set_grads(mine, theirs, np.random.default_rng(0), skip=(1,))
    opt_mine.step()
    opt_theirs.step()
    sd_mine, sd_theirs = opt_mine.state_dict(), opt_theirs.state_dict()
    assert [g["params"] for g in sd_mine["param_groups"]] == [g["params"] for g in sd_theirs["param_groups"]]
    assert sorted(sd_mine["state"]) == sorted(sd_theirs["state"]) == [0, 1]
    for group in sd_mine["param_groups"]:
        assert not any(isinstance(v, ember.Tensor) for v in group.values())


def test_load_state_dict_casts_to_the_parameter_dtype_but_keeps_step():
    params = [ember.zeros(3, dtype=ember.float32, requires_grad=True)]
    opt = ember.optim.Adam(params)
    state = {"state": {0: {"step": ember.tensor(3.0), "exp_avg": ember.ones(3, dtype=ember.float64),
                           "exp_avg_sq": ember.ones(3, dtype=ember.float64)}},
             "param_groups": [dict(opt.state_dict()["param_groups"][0], lr=0.5)]}
    opt.load_state_dict(state)
    loaded = opt.state[params[0]]
    assert loaded["exp_avg"].dtype == ember.float32 and loaded["step"].dtype == ember.float32
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["params"][0] is params[0]


def test_load_state_dict_accepts_torch_only_options_and_old_python_steps():
    params = [ember.zeros(3, requires_grad=True)]
    opt = ember.optim.Adam(params)
    group = dict(opt.state_dict()["param_groups"][0], foreach=None, fused=None, capturable=False)
    del group["decoupled_weight_decay"]  # a dict from before the option existed
    opt.load_state_dict({"state": {0: {"step": 2, "exp_avg": ember.zeros(3), "exp_avg_sq": ember.zeros(3)}},
                         "param_groups": [group]})
    assert isinstance(opt.state[params[0]]["step"], ember.Tensor)
    assert opt.param_groups[0]["decoupled_weight_decay"] is False
    params[0].grad = ember.ones(3)
    opt.step()


@pytest.mark.parametrize("make_bad, message", [
    (lambda sd: dict(sd, param_groups=sd["param_groups"] * 2), "different number of parameter groups"),
    (lambda sd: dict(sd, param_groups=[dict(sd["param_groups"][0], params=[0])]), "doesn't match the size"),
])
def test_load_state_dict_errors_match_torch(make_bad, message):
    mine, theirs = make_params()
    for lib, params in ((ember, mine), (torch, theirs)):
        opt = lib.optim.SGD(params, lr=0.1)
        with pytest.raises(ValueError, match=message):
            opt.load_state_dict(make_bad(opt.state_dict()))


def test_named_parameters_give_param_names_like_torch():
    model_mine, model_theirs = ember.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    opt_mine = ember.optim.SGD(model_mine.named_parameters(), lr=0.1)
    opt_theirs = torch.optim.SGD(model_theirs.named_parameters(), lr=0.1)
    assert opt_mine.param_groups[0]["param_names"] == opt_theirs.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt_mine.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    with pytest.raises(ValueError, match="with/without names"):
        opt_mine.add_param_group({"params": [ember.zeros(1, requires_grad=True)]})


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    mine, theirs = make_params()
    set_grads(mine, theirs, np.random.default_rng(0), skip=(2,))
    for lib, params in ((ember, mine), (torch, theirs)):
        lib.optim.SGD(params, lr=0.1).zero_grad(set_to_none=set_to_none)
    for m, t in zip(mine, theirs):
        assert (m.grad is None) == (t.grad is None)
        if t.grad is not None:
            np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())


def test_zero_grad_keeps_the_grad_tensor_and_detaches_it():
    p = ember.ones(2, requires_grad=True)
    (p * p).sum().backward(create_graph=True)
    grad = p.grad
    assert grad.grad_fn is not None
    ember.optim.SGD([p]).zero_grad(set_to_none=False)
    assert p.grad is grad and p.grad.grad_fn is None and not p.grad.requires_grad
    assert p.grad.tolist() == [0.0, 0.0]


def test_repr_matches_torch_without_torch_only_options():
    mine, theirs = make_params()
    for name in ("SGD", "Adam", "RMSprop"):
        optimizer = getattr(ember.optim, name)(_groups(mine), lr=0.1)
        text_mine = repr(optimizer)
        text_theirs = repr(getattr(torch.optim, name)(_groups(theirs), lr=0.1))
        torch_only = TORCH_ONLY_OPTIONS - set(optimizer.param_groups[0])  # SGD and Adam have foreach/fused
        kept = [line for line in text_theirs.splitlines() if line.strip().split(":")[0] not in torch_only]
        assert text_mine == "\n".join(kept)


def test_add_param_group_fills_defaults():
    mine, theirs = make_params()
    opt_mine = ember.optim.Adam(mine[:2], lr=0.1, betas=(0.8, 0.9))
    opt_theirs = torch.optim.Adam(theirs[:2], lr=0.1, betas=(0.8, 0.9))
    opt_mine.add_param_group({"params": mine[2], "lr": 0.3})
    opt_theirs.add_param_group({"params": theirs[2], "lr": 0.3})
    assert opt_mine.param_groups[1]["params"] == [mine[2]]
    for key, value in opt_mine.param_groups[1].items():
        if key != "params":
            assert opt_theirs.param_groups[1][key] == value, key


@pytest.mark.parametrize("call", [
    lambda lib, ps: lib.optim.SGD([], lr=0.1),
    lambda lib, ps: lib.optim.SGD(ps[0], lr=0.1),
    lambda lib, ps: lib.optim.SGD([{"params": {ps[0]}}], lr=0.1),
    lambda lib, ps: lib.optim.SGD([ps[0] * 2], lr=0.1),
    lambda lib, ps: lib.optim.SGD([ps[0], 3.0], lr=0.1),
    lambda lib, ps: lib.optim.SGD([{"params": [ps[0]]}, {"params": [ps[0], ps[1]]}], lr=0.1),
    lambda lib, ps: lib.optim.SGD(ps, lr=-1),
    lambda lib, ps: lib.optim.SGD(ps, momentum=-0.5),
    lambda lib, ps: lib.optim.SGD(ps, nesterov=True),
    lambda lib, ps: lib.optim.SGD(ps, momentum=0.9, dampening=0.1, nesterov=True),
    lambda lib, ps: lib.optim.Adam(ps, betas=(1.0, 0.9)),
    lambda lib, ps: lib.optim.Adam(ps, betas=(0.9, -0.1)),
    lambda lib, ps: lib.optim.Adam(ps, eps=-1e-8),
    lambda lib, ps: lib.optim.AdamW(ps, weight_decay=-0.1),
    lambda lib, ps: lib.optim.RMSprop(ps, alpha=-0.1),
    lambda lib, ps: lib.optim.Adagrad(ps, lr_decay=-1),
    lambda lib, ps: lib.optim.Adagrad(ps, initial_accumulator_value=-1),
    lambda lib, ps: lib.optim.Adadelta(ps, rho=1.5),
    lambda lib, ps: lib.optim.NAdam(ps, momentum_decay=-1),
    lambda lib, ps: lib.optim.RAdam(ps, lr=-0.1),
    lambda lib, ps: lib.optim.SGD(ps).add_param_group([ps[0]]),
])
def test_errors_match_torch(call):
    mine, theirs = make_params()
    with pytest.raises(Exception) as expected:
        call(torch, theirs)
    with pytest.raises(type(expected.value)) as actual:
        call(ember, mine)
    text = str(expected.value)
    if "torch." not in text and "class '" not in text:
        assert str(actual.value) == text
    else:
        assert str(actual.value).split(" but ")[0] == text.split(" but ")[0]


def test_duplicate_parameters_in_a_group_warn_like_torch():
    mine, theirs = make_params()
    for lib, params in ((torch, theirs), (ember, mine)):
        with pytest.warns(UserWarning, match="duplicate parameters"):
            lib.optim.SGD([params[0], params[0]], lr=0.1)


def test_step_hooks_run_in_order_and_can_be_removed():
    params, _ = make_params()
    opt = ember.optim.SGD(params, lr=0.1)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o is opt)))
    opt.step()
    assert calls == [("pre", True), ("post", True)]
    pre.remove()
    opt.step()
    assert calls[2:] == [("post", True)]


def test_a_pre_hook_may_replace_the_arguments():
    params, _ = make_params()
    opt = ember.optim.SGD(params, lr=0.1)
    opt.register_step_pre_hook(lambda o, args, kwargs: ((), {"closure": lambda: 42}))
    assert opt.step() == 42
    opt2 = ember.optim.SGD(params, lr=0.1)
    opt2.register_step_pre_hook(lambda o, args, kwargs: "bad")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt2.step()


def test_step_without_grads_changes_nothing():
    params, _ = make_params()
    before = [p.detach().clone().numpy() for p in params]
    opt = ember.optim.Adam(params, lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
    assert all(np.array_equal(p.detach().numpy(), b) for p, b in zip(params, before))
    assert len(opt.state) == 0


def test_a_subclass_step_without_the_decorator_still_runs_hooks_under_no_grad():
    class SignDescent(ember.optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.sub_(p.grad.sign(), alpha=group["lr"])  # a leaf that requires grad: needs no_grad

    p = ember.tensor([1.0, -2.0], requires_grad=True)
    p.grad = ember.tensor([0.5, -3.0])
    opt = SignDescent([p], lr=0.25)
    seen = []
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append(ember.is_grad_enabled()))
    opt.step()
    assert p.tolist() == [0.75, -1.75] and seen == [True]


@pytest.mark.parametrize("name, kwargs", [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                          ("Adam", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, centered=True))])
def test_training_a_small_model_matches_torch(name, kwargs):
    """Forward, backward and optimizer steps of a two-layer network, both libraries."""
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
    mine = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 1)).double()
    mine.load_state_dict({k: ember.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    opt_mine = getattr(ember.optim, name)(mine.parameters(), **kwargs)
    opt_theirs = getattr(torch.optim, name)(theirs.parameters(), **kwargs)
    rng = np.random.default_rng(0)
    for _ in range(15):
        x = rng.standard_normal((16, 4))
        y = np.sin(x.sum(axis=1, keepdims=True))
        for lib, model, opt in ((ember, mine, opt_mine), (torch, theirs, opt_theirs)):
            opt.zero_grad()
            loss = ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean()
            loss.backward()
            opt.step()
    assert_params_equal(list(mine.parameters()), list(theirs.parameters()))


@pytest.mark.parametrize("name, kwargs", [("Adam", dict(lr=0.01, amsgrad=True)), ("SGD", dict(lr=0.1, momentum=0.9)),
                                          ("NAdam", dict(lr=0.01))])
def test_checkpoint_files_cross_libraries(name, kwargs, tmp_path):
    """A state dict saved by ember.save loads with torch.load(weights_only=True) into
    torch's optimizer, and one saved by torch.save loads with ember.load into ember's."""
    mine, theirs = make_params()
    opt_mine = getattr(ember.optim, name)(mine, **kwargs)
    opt_theirs = getattr(torch.optim, name)(theirs, **kwargs)
    rng = np.random.default_rng(4)
    for _ in range(3):
        set_grads(mine, theirs, rng)
        opt_mine.step()
    with torch.no_grad():
        for m, t in zip(mine, theirs):
            t.copy_(torch.tensor(m.detach().numpy()))
    ember.save(opt_mine.state_dict(), tmp_path / "ember.pt")
    opt_theirs.load_state_dict(torch.load(tmp_path / "ember.pt", weights_only=True))
    torch.save(opt_theirs.state_dict(), tmp_path / "torch.pt")
    opt_mine.load_state_dict(ember.load(tmp_path / "torch.pt"))
    for _ in range(3):
        set_grads(mine, theirs, rng)
        opt_mine.step()
        opt_theirs.step()
    assert_params_equal(mine, theirs)


def test_a_subclass_calling_super_step_runs_the_hooks_once():
    class CountingSGD(ember.optim.SGD):
        def step(self, closure=None):
            self.calls = getattr(self, "calls", 0) + 1
            return super().step(closure)

    params, _ = make_params()
    for p in params:
        p.grad = ember.ones_like(p)
    opt = CountingSGD(params, lr=0.5)
    seen = []
    opt.register_step_pre_hook(lambda o, args, kwargs: seen.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append("post"))
    before = params[0].detach().clone()
    opt.step()
    assert seen == ["pre", "post"] and opt.calls == 1
    np.testing.assert_allclose(params[0].detach().numpy(), before.numpy() - 0.5)
