"""GradScaler against torch.amp.GradScaler("cpu"): the same training loop in both
libraries (scale, backward, step, update), with overflowing gradients injected, so
skipped steps, back-off and growth happen; scales, growth trackers, parameters and
state dicts compared every iteration; the usage errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close


def _loop(lib, iterations, overflow_at):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 2)).astype(np.float32)
    w = lib.tensor(w0, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)
    trace = []
    for i in range(iterations):
        x = lib.tensor(rng.standard_normal((4, 3)).astype(np.float32))
        opt.zero_grad()
        loss = (x @ w).pow(2).mean()
        if i in overflow_at:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        trace.append((scaler.get_scale(), scaler._get_growth_tracker(), w.detach().clone(), scaler.state_dict()))
    return trace


def test_training_loop_matches_torch():
    ours, theirs = _loop(ember, 8, {2, 3}), _loop(torch, 8, {2, 3})
    for i, ((e_scale, e_tracker, e_w, e_state), (t_scale, t_tracker, t_w, t_state)) in enumerate(zip(ours, theirs)):
        assert (e_scale, e_tracker) == (t_scale, t_tracker), f"iteration {i}"
        assert e_state == t_state, f"iteration {i}"
        assert_close(e_w, t_w, rtol=1e-6, atol=1e-6, msg=f"iteration {i}: ")
    assert [s for s, *_ in ours] == [16.0, 32.0, 16.0, 8.0, 8.0, 16.0, 16.0, 32.0]


def test_unscale_then_clip_like_torch():
    results = []
    for lib in (torch, ember):
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=1.0)
        scaler = lib.amp.GradScaler("cpu", init_scale=1024.0)
        scaler.scale((w * w).sum()).backward()
        scaler.unscale_(opt)
        results.append(w.grad.detach().clone())
        lib.nn.utils.clip_grad_norm_([w], 1.0)
        scaler.step(opt)
        scaler.update()
        results.append(w.detach().clone())
    assert_close(results[2], results[0])
    assert_close(results[3], results[1], rtol=1e-6, atol=1e-6)


def test_usage_errors_like_torch():
    for lib in (torch, ember):
        w = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale((w + 1).sum()).backward()
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer"):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update\\(\\)"):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
            scaler.unscale_(opt)
        scaler.update()
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            scaler.step(opt, closure=lambda: 0.0)
        half = lib.zeros(2, dtype=lib.float16, requires_grad=True)
        half_opt = lib.optim.SGD([half], lr=0.1)
        scaler.scale(half.float().sum()).backward()
        with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
            scaler.unscale_(half_opt)
        with pytest.raises(RuntimeError, match="The source state dict is empty"):
            lib.amp.GradScaler("cpu").load_state_dict({})


def test_disabled_scaler_is_a_pass_through_and_state_dict_round_trips():
    scaler = ember.amp.GradScaler("cpu", enabled=False)
    loss = ember.tensor(2.0)
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    source = ember.amp.GradScaler("cpu", init_scale=8.0, growth_interval=7)
    target = ember.amp.GradScaler("cpu")
    target.load_state_dict(source.state_dict())
    assert target.state_dict() == source.state_dict() == torch.amp.GradScaler(
        "cpu", init_scale=8.0, growth_interval=7).state_dict()
    if not ember.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            assert not ember.cuda.amp.GradScaler().is_enabled()
