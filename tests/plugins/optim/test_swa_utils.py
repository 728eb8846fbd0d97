"""Weight averaging (ember_optim/swa_utils.py) against torch.optim.swa_utils on a small
model with BatchNorm: AveragedModel (SWA, EMA through avg_fn and multi_avg_fn, buffers
averaged or copied), SWALR's rates, update_bn's statistics."""

import numpy as np
import pytest
import torch

import ember


def make_models(seed=0):
    torch.manual_seed(seed)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    mine = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
    mine.load_state_dict({k: ember.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


def train_a_little(mine, theirs, rng):
    """The same parameter change and the same training forward (moving the BatchNorm
    statistics) on both models."""
    with torch.no_grad(), ember.no_grad():
        for p_mine, p_theirs in zip(mine.parameters(), theirs.parameters()):
            delta = rng.standard_normal(tuple(p_theirs.shape)).astype(np.float32) * 0.1
            p_mine.add_(ember.tensor(delta))
            p_theirs.add_(torch.tensor(delta))
        x = rng.standard_normal((8, 3)).astype(np.float32)
        mine.train()(ember.tensor(x))
        theirs.train()(torch.tensor(x))


def assert_same_state(mine, theirs):
    expected = theirs.state_dict()
    actual = mine.state_dict()
    assert list(actual) == list(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(actual[key].numpy(), value.numpy(), rtol=1e-6, atol=1e-7, err_msg=key)
        assert str(actual[key].dtype).split(".")[-1] == str(value.dtype).split(".")[-1], key


AVERAGING = {
    "swa": lambda lib: {},
    "swa-buffers": lambda lib: {"use_buffers": True},
    "ema-multi": lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_ema_multi_avg_fn(0.9)},
    "ema-multi-buffers": lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_ema_multi_avg_fn(0.8),
                                      "use_buffers": True},
    "ema-avg_fn": lambda lib: {"avg_fn": lib.optim.swa_utils.get_ema_avg_fn(0.7)},
    "swa-multi": lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_swa_multi_avg_fn()},
    "swa-avg_fn-buffers": lambda lib: {"avg_fn": lib.optim.swa_utils.get_swa_avg_fn(), "use_buffers": True},
    "custom": lambda lib: {"avg_fn": lambda avg, current, n: 0.5 * avg + 0.5 * current},
}


@pytest.mark.parametrize("name", list(AVERAGING))
def test_averaged_model_matches_torch(name):
    mine, theirs = make_models()
    avg_mine = ember.optim.swa_utils.AveragedModel(mine, **AVERAGING[name](ember))
    avg_theirs = torch.optim.swa_utils.AveragedModel(theirs, **AVERAGING[name](torch))
    rng = np.random.default_rng(1)
    for _ in range(6):
        train_a_little(mine, theirs, rng)
        avg_mine.update_parameters(mine)
        avg_theirs.update_parameters(theirs)
        assert_same_state(avg_mine, avg_theirs)
    assert int(avg_mine.n_averaged) == 6
    x = rng.standard_normal((5, 3)).astype(np.float32)
    out_mine = avg_mine.eval()(ember.tensor(x))
    out_theirs = avg_theirs.eval()(torch.tensor(x))
    np.testing.assert_allclose(out_mine.detach().numpy(), out_theirs.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_averaged_model_is_a_copy_and_leaves_the_model_alone():
    mine, _ = make_models()
    averaged = ember.optim.swa_utils.AveragedModel(mine)
    assert averaged.module is not mine
    assert all(a is not b for a, b in zip(averaged.parameters(), mine.parameters()))
    before = [p.detach().clone().numpy() for p in mine.parameters()]
    averaged.update_parameters(mine)
    averaged.update_parameters(mine)
    assert all(np.array_equal(p.detach().numpy(), b) for p, b in zip(mine.parameters(), before))
    assert [name for name, _ in averaged.named_buffers()][0] == "n_averaged"
    assert averaged.n_averaged.dtype == ember.int64


def test_only_one_averaging_function():
    mine, theirs = make_models()
    for lib, model in ((torch, theirs), (ember, mine)):
        swa = lib.optim.swa_utils
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            swa.AveragedModel(model, avg_fn=swa.get_swa_avg_fn(), multi_avg_fn=swa.get_swa_multi_avg_fn())


@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_ema_decay_out_of_range(decay):
    for lib in (torch, ember):
        for make in (lib.optim.swa_utils.get_ema_avg_fn, lib.optim.swa_utils.get_ema_multi_avg_fn):
            with pytest.raises(ValueError, match=f"Invalid decay value {decay}"):
                make(decay)


@pytest.mark.parametrize("kwargs", [dict(swa_lr=0.05), dict(swa_lr=[0.01, 0.2], anneal_epochs=5),
                                    dict(swa_lr=0.3, anneal_epochs=3, anneal_strategy="linear"),
                                    dict(swa_lr=0.02, anneal_epochs=0)])
def test_swalr_matches_torch(kwargs):
    from tests.plugins.optim.test_lr_scheduler import run_both

    run_both(lambda lib, opt: (ember.optim.swa_utils if lib is ember.optim.lr_scheduler
                               else torch.optim.swa_utils).SWALR(opt, **kwargs), steps=20,
             moves=kwargs.get("anneal_epochs") != 0)  # no annealing: swa_lr from the start


def test_swalr_after_another_schedule_matches_torch():
    """The usual recipe: a cosine schedule, then SWALR takes over from the rate it left."""
    from tests.plugins.optim.test_lr_scheduler import _optimizers

    opt_mine, opt_theirs = _optimizers()
    schedulers = []
    for lib, opt in ((ember, opt_mine), (torch, opt_theirs)):
        cosine = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
        for _ in range(8):
            opt.step()
            cosine.step()
        schedulers.append(lib.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=4))
    for _ in range(10):
        for opt, scheduler in zip((opt_mine, opt_theirs), schedulers):
            opt.step()
            scheduler.step()
        assert schedulers[0].get_last_lr() == schedulers[1].get_last_lr()


@pytest.mark.parametrize("call", [
    lambda lib, opt: lib.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="exp"),
    lambda lib, opt: lib.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=-1),
    lambda lib, opt: lib.optim.swa_utils.SWALR(opt, swa_lr=[0.1]),
])
def test_swalr_errors_match_torch(call):
    from tests.plugins.optim.test_lr_scheduler import _optimizers

    opt_mine, opt_theirs = _optimizers()
    with pytest.raises(ValueError) as expected:
        call(torch, opt_theirs)
    with pytest.raises(ValueError) as actual:
        call(ember, opt_mine)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("batches_as", ["tensors", "tuples"])
def test_update_bn_matches_torch(batches_as):
    mine, theirs = make_models()
    rng = np.random.default_rng(2)
    train_a_little(mine, theirs, rng)
    mine[1].momentum = theirs[1].momentum = 0.3
    mine.eval()
    theirs.eval()
    batches = [rng.standard_normal((6, 3)).astype(np.float32) * (i + 1) for i in range(4)]
    if batches_as == "tensors":
        loader_mine = [ember.tensor(b) for b in batches]
        loader_theirs = [torch.tensor(b) for b in batches]
    else:
        loader_mine = [(ember.tensor(b), 0) for b in batches]
        loader_theirs = [(torch.tensor(b), 0) for b in batches]
    ember.optim.swa_utils.update_bn(loader_mine, mine)
    torch.optim.swa_utils.update_bn(loader_theirs, theirs)
    assert_same_state(mine, theirs)
    assert mine[1].momentum == 0.3 and not mine.training and not mine[1].training


def test_update_bn_on_an_averaged_model_matches_torch():
    mine, theirs = make_models()
    avg_mine = ember.optim.swa_utils.AveragedModel(mine)
    avg_theirs = torch.optim.swa_utils.AveragedModel(theirs)
    rng = np.random.default_rng(3)
    for _ in range(3):
        train_a_little(mine, theirs, rng)
        avg_mine.update_parameters(mine)
        avg_theirs.update_parameters(theirs)
    batches = [rng.standard_normal((5, 3)).astype(np.float32) for _ in range(3)]
    ember.optim.swa_utils.update_bn([ember.tensor(b) for b in batches], avg_mine)
    torch.optim.swa_utils.update_bn([torch.tensor(b) for b in batches], avg_theirs)
    assert_same_state(avg_mine, avg_theirs)
    assert avg_mine.training


def test_update_bn_without_batch_norm_does_nothing():
    model = ember.nn.Linear(3, 2)
    calls = []
    ember.optim.swa_utils.update_bn(iter(lambda: calls.append(1) or ember.ones(1, 3), None), model)
    assert calls == []
