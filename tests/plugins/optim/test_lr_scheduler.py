"""Every learning-rate scheduler of ember-optim against torch.optim.lr_scheduler: the
sequence of rates (and cycled momenta) over 30+ steps, for several settings each,
compared exactly; state dicts; errors."""

import math
import pickle
import warnings

import pytest
import torch

import ember


def _optimizers(name="SGD", **kwargs):
    """An ember and a torch optimizer over one-parameter groups with rates 0.1 and 0.05."""
    kwargs = kwargs or ({"momentum": 0.9} if name == "SGD" else {})

    def groups(lib):
        return [{"params": [lib.zeros(2, requires_grad=True)]},
                {"params": [lib.zeros(3, requires_grad=True)], "lr": 0.05}]

    return getattr(ember.optim, name)(groups(ember), lr=0.1, **kwargs), \
        getattr(torch.optim, name)(groups(torch), lr=0.1, **kwargs)


def _momenta(opt):
    return [group["betas"][0] if "betas" in group else group.get("momentum") for group in opt.param_groups]


def run_both(make, steps=40, optimizer="SGD", metrics=None, moves=True, **optimizer_kwargs):
    """Build the scheduler on both sides and step them together; compare each step's
    rates (``get_last_lr`` and the groups') and momenta exactly."""
    opt_mine, opt_theirs = _optimizers(optimizer, **optimizer_kwargs)
    mine = make(ember.optim.lr_scheduler, opt_mine)
    theirs = make(torch.optim.lr_scheduler, opt_theirs)
    assert mine.get_last_lr() == theirs.get_last_lr()
    sequence = [mine.get_last_lr()]
    for step in range(steps):
        opt_mine.step()
        opt_theirs.step()
        if metrics is None:
            mine.step()
            theirs.step()
        else:
            mine.step(metrics[step])
            theirs.step(metrics[step])
        assert mine.get_last_lr() == theirs.get_last_lr(), f"step {step}"
        assert [g["lr"] for g in opt_mine.param_groups] == [g["lr"] for g in opt_theirs.param_groups]
        assert _momenta(opt_mine) == _momenta(opt_theirs), f"momentum at step {step}"
        assert getattr(mine, "last_epoch", None) == getattr(theirs, "last_epoch", None)
        sequence.append(mine.get_last_lr())
    assert len({tuple(lrs) for lrs in sequence}) > 1 or not moves, "the schedule never moved"
    return mine, theirs


SCHEDULES = {
    "LambdaLR": lambda lib, opt: lib.LambdaLR(opt, lambda epoch: 0.95 ** epoch),
    "LambdaLR-per-group": lambda lib, opt: lib.LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: 0.9 ** e]),
    "MultiplicativeLR": lambda lib, opt: lib.MultiplicativeLR(opt, lambda epoch: 0.97),
    "StepLR": lambda lib, opt: lib.StepLR(opt, step_size=7, gamma=0.5),
    "StepLR-default-gamma": lambda lib, opt: lib.StepLR(opt, step_size=3),
    "MultiStepLR": lambda lib, opt: lib.MultiStepLR(opt, milestones=[5, 12, 12, 30], gamma=0.3),
    "ConstantLR": lambda lib, opt: lib.ConstantLR(opt, factor=0.25, total_iters=8),
    "ConstantLR-default": lambda lib, opt: lib.ConstantLR(opt),
    "LinearLR": lambda lib, opt: lib.LinearLR(opt, start_factor=0.1, end_factor=1.0, total_iters=12),
    "LinearLR-decay": lambda lib, opt: lib.LinearLR(opt, start_factor=1.0, end_factor=0.2, total_iters=20),
    "ExponentialLR": lambda lib, opt: lib.ExponentialLR(opt, gamma=0.9),
    "PolynomialLR": lambda lib, opt: lib.PolynomialLR(opt, total_iters=25, power=2.0),
    "PolynomialLR-linear": lambda lib, opt: lib.PolynomialLR(opt, total_iters=10),
    "CosineAnnealingLR": lambda lib, opt: lib.CosineAnnealingLR(opt, T_max=10),
    "CosineAnnealingLR-eta_min": lambda lib, opt: lib.CosineAnnealingLR(opt, T_max=7, eta_min=0.001),
    "WarmRestarts": lambda lib, opt: lib.CosineAnnealingWarmRestarts(opt, T_0=5),
    "WarmRestarts-T_mult": lambda lib, opt: lib.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=1e-3),
    "CyclicLR-triangular": lambda lib, opt: lib.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-triangular2": lambda lib, opt: lib.CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3,
                                                           step_size_down=5, mode="triangular2"),
    "CyclicLR-exp_range": lambda lib, opt: lib.CyclicLR(opt, 0.01, 0.1, step_size_up=5, mode="exp_range",
                                                         gamma=0.95, base_momentum=0.7, max_momentum=0.95),
    "CyclicLR-scale_fn": lambda lib, opt: lib.CyclicLR(opt, 0.01, 0.1, step_size_up=3, scale_fn=lambda x: 0.5 ** x,
                                                        scale_mode="iterations", cycle_momentum=False),
    "OneCycleLR-cos": lambda lib, opt: lib.OneCycleLR(opt, max_lr=0.5, total_steps=41),
    "OneCycleLR-linear": lambda lib, opt: lib.OneCycleLR(opt, max_lr=[0.5, 0.2], epochs=5, steps_per_epoch=9,
                                                         anneal_strategy="linear", pct_start=0.25),
    "OneCycleLR-three-phase": lambda lib, opt: lib.OneCycleLR(opt, max_lr=0.3, total_steps=45, three_phase=True,
                                                              div_factor=10.0, final_div_factor=100.0),
    "OneCycleLR-three-phase-linear": lambda lib, opt: lib.OneCycleLR(opt, max_lr=0.3, total_steps=41,
                                                                     three_phase=True, anneal_strategy="linear"),
    "SequentialLR": lambda lib, opt: lib.SequentialLR(
        opt, [lib.LinearLR(opt, start_factor=0.1, total_iters=5), lib.CosineAnnealingLR(opt, T_max=20)],
        milestones=[5]),
    "SequentialLR-three": lambda lib, opt: lib.SequentialLR(
        opt, [lib.ConstantLR(opt, factor=0.5, total_iters=3), lib.ExponentialLR(opt, gamma=0.9),
              lib.StepLR(opt, step_size=4, gamma=0.5)], milestones=[6, 15]),
    "ChainedScheduler": lambda lib, opt: lib.ChainedScheduler(
        [lib.ConstantLR(opt, factor=0.1, total_iters=4), lib.ExponentialLR(opt, gamma=0.9)]),
    "ChainedScheduler-warmup-cosine": lambda lib, opt: lib.ChainedScheduler(
        [lib.LinearLR(opt, start_factor=0.2, total_iters=6), lib.CosineAnnealingLR(opt, T_max=15),
         lib.MultiStepLR(opt, milestones=[20], gamma=0.5)], optimizer=opt),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_sequence_matches_torch(name):
    run_both(SCHEDULES[name], steps=ONE_CYCLE_TOTAL_STEPS.get(name, 41) - 1)


# OneCycleLR runs exactly its total_steps; the others run 40 steps.
ONE_CYCLE_TOTAL_STEPS = {"OneCycleLR-cos": 41, "OneCycleLR-linear": 45, "OneCycleLR-three-phase": 45,
                         "OneCycleLR-three-phase-linear": 41}


@pytest.mark.parametrize("name", ["CyclicLR-exp_range", "OneCycleLR-cos", "OneCycleLR-three-phase"])
def test_momentum_cycling_of_adam_betas(name):
    run_both(SCHEDULES[name], steps=39, optimizer="Adam")


def test_cycling_momentum_needs_a_momentum_option():
    for lib, opt in zip((ember, torch), _optimizers("Adagrad")):
        with pytest.raises(ValueError, match="optimizer must support momentum"):
            lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)


def test_one_cycle_past_its_total_steps_raises_like_torch():
    mine, theirs = run_both(lambda lib, opt: lib.OneCycleLR(opt, max_lr=0.5, total_steps=10), steps=10)
    with pytest.raises(ValueError) as expected:
        theirs.step()
    with pytest.raises(ValueError) as actual:
        mine.step()
    assert str(actual.value) == str(expected.value)


PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.88, 0.8801, 0.88, 0.88,
                   0.88, 0.88, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7]


@pytest.mark.parametrize("kwargs", [
    dict(), dict(patience=2), dict(patience=1, factor=0.5, cooldown=2),
    dict(mode="max", patience=1, factor=0.5), dict(threshold=0.05, patience=1),
    dict(threshold=0.005, threshold_mode="abs", patience=0, cooldown=1),
    dict(mode="max", threshold=0.02, threshold_mode="abs", patience=2, min_lr=[0.02, 0.01]),
    dict(patience=0, factor=0.1, min_lr=0.0009, eps=1e-4),
])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    metrics = PLATEAU_METRICS if kwargs.get("mode") != "max" else [-m for m in PLATEAU_METRICS]
    run_both(lambda lib, opt: lib.ReduceLROnPlateau(opt, **kwargs), steps=len(metrics), metrics=metrics)


def test_reduce_lr_on_plateau_takes_a_tensor_metric():
    opt, _ = _optimizers()
    scheduler = ember.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    for value in (1.0, 2.0, 3.0):
        scheduler.step(ember.tensor(value))
    assert scheduler.get_last_lr() == [0.1 * 0.1 * 0.1, 0.05 * 0.1 * 0.1]


def test_step_with_an_epoch_uses_the_closed_form_like_torch():
    opt_mine, opt_theirs = _optimizers()
    mine = ember.optim.lr_scheduler.StepLR(opt_mine, step_size=3, gamma=0.5)
    theirs = torch.optim.lr_scheduler.StepLR(opt_theirs, step_size=3, gamma=0.5)
    opt_mine.step()
    opt_theirs.step()
    for epoch in (7, 2, 11):
        with pytest.warns(UserWarning, match="epoch parameter"):
            mine.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs.step(epoch)
        assert mine.get_last_lr() == theirs.get_last_lr()


def test_warm_restarts_with_fractional_epochs():
    opt_mine, opt_theirs = _optimizers()
    mine = ember.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt_mine, T_0=4, T_mult=2)
    theirs = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt_theirs, T_0=4, T_mult=2)
    for i in range(60):
        epoch = i / 5
        mine.step(epoch)
        theirs.step(epoch)
        assert mine.get_last_lr() == theirs.get_last_lr(), epoch
        assert (mine.T_cur, mine.T_i, mine.last_epoch) == (theirs.T_cur, theirs.T_i, theirs.last_epoch)


def test_scheduler_stepped_before_the_optimizer_warns():
    opt, _ = _optimizers()
    scheduler = ember.optim.lr_scheduler.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        scheduler.step()


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "CyclicLR-triangular2", "OneCycleLR-cos",
                                  "SequentialLR", "ChainedScheduler", "LambdaLR", "WarmRestarts-T_mult"])
def test_state_dict_resumes_the_schedule(name):
    """A scheduler loaded from another's state dict (over an optimizer loaded likewise)
    continues with the same rates; the state dict has torch's keys."""
    make = SCHEDULES[name]
    opt_a, opt_torch = _optimizers()
    first = make(ember.optim.lr_scheduler, opt_a)
    for _ in range(12):
        opt_a.step()
        first.step()
    state = first.state_dict()
    torch_state = make(torch.optim.lr_scheduler, opt_torch).state_dict()
    assert set(state) <= set(torch_state) | {"_get_lr_called_within_step", "_is_initial"}, set(state) ^ set(
        torch_state)
    pickle.dumps(state)
    opt_b, _ = _optimizers()
    second = make(ember.optim.lr_scheduler, opt_b)
    opt_b.load_state_dict(opt_a.state_dict())
    second.load_state_dict(state)
    for _ in range(20):
        opt_a.step()
        opt_b.step()
        first.step()
        second.step()
        assert first.get_last_lr() == second.get_last_lr()


def test_resuming_needs_initial_lr():
    opt_mine, opt_theirs = _optimizers()
    with pytest.raises(KeyError) as expected:
        torch.optim.lr_scheduler.StepLR(opt_theirs, step_size=2, last_epoch=3)
    with pytest.raises(KeyError) as actual:
        ember.optim.lr_scheduler.StepLR(opt_mine, step_size=2, last_epoch=3)
    assert "param 'initial_lr' is not specified in param_groups[0]" in str(expected.value)
    assert "param 'initial_lr' is not specified in param_groups[0]" in str(actual.value)


def test_cosine_resumed_from_a_checkpoint_matches_torch():
    """A scheduler created with ``last_epoch >= 0`` (resuming) takes its first step from
    the closed form, then recursively."""
    def make(lib, opt):
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"]
        return lib.CosineAnnealingLR(opt, T_max=10, last_epoch=4)
    run_both(make, steps=30)


@pytest.mark.parametrize("call", [
    lambda lib, opt: lib.optim.lr_scheduler.StepLR(object(), step_size=2),
    lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0]),
    lambda lib, opt: lib.optim.lr_scheduler.MultiplicativeLR(opt, [1.0, 2.0]),
    lambda lib, opt: lib.optim.lr_scheduler.ConstantLR(opt, factor=1.5),
    lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, start_factor=0),
    lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, end_factor=2.0),
    lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=0),
    lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0),
    lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, eta_min="0"),
    lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, [0.1], 1.0),
    lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="other"),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=0),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, epochs=2, steps_per_epoch=0),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10, pct_start=1),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="exp"),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.0),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="middle"),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, threshold_mode="log"),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, min_lr=[0.1]),
    lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(opt, [], milestones=[]),
    lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.StepLR(opt, 2)], milestones=[3]),
    lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.ReduceLROnPlateau(opt)], milestones=[]),
    lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler([]),
    lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler([object()]),
])
def test_errors_match_torch(call):
    opt_mine, opt_theirs = _optimizers()
    with pytest.raises(Exception) as expected:
        call(torch, opt_theirs)
    with pytest.raises(type(expected.value)) as actual:
        call(ember, opt_mine)
    assert str(actual.value) == str(expected.value)


def test_sequential_lr_from_different_optimizers_is_an_error():
    opt_a, _ = _optimizers()
    opt_b, _ = _optimizers()
    lib = ember.optim.lr_scheduler
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        lib.SequentialLR(opt_a, [lib.StepLR(opt_a, 2), lib.StepLR(opt_b, 2)], milestones=[3])


def test_cosine_annealing_follows_its_closed_form():
    """The recursive form stays on the closed-form cosine (to rounding) over two periods."""
    opt, _ = _optimizers()
    scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.01)
    for epoch in range(1, 41):
        opt.step()
        scheduler.step()
        expected = 0.01 + (0.1 - 0.01) * (1 + math.cos(math.pi * epoch / 10)) / 2
        assert math.isclose(scheduler.get_last_lr()[0], expected, rel_tol=1e-9, abs_tol=1e-12)
