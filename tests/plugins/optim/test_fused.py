"""``foreach=True`` and ``fused=True`` for SGD, Adam and AdamW (ember_optim/fused.py): the
same parameters and state as the single-tensor loop, step after step, and as torch's
own foreach and fused paths on the same inputs."""

import itertools

import numpy as np
import pytest
import torch

import ember
from ember_optim import fused

# Sizes around the block size, a 0-d and an empty parameter, and a transposed one (not
# C-contiguous: it goes through the whole-array fallback).
SHAPES = [(3, 5), (fused.BLOCK + 7,), (2 * fused.BLOCK,), (), (0, 4), ("T", 6, 9)]

SGD_SETTINGS = [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.9, nesterov=True),
                dict(lr=0.1, momentum=0.8, dampening=0.3, weight_decay=1e-2),
                dict(lr=0.1, momentum=0.9, weight_decay=1e-2, nesterov=True, maximize=True)]
ADAM_SETTINGS = [("Adam", dict(lr=1e-2)), ("Adam", dict(lr=1e-2, weight_decay=1e-2, amsgrad=True)),
                 ("Adam", dict(lr=1e-2, maximize=True, betas=(0.8, 0.99))),
                 ("AdamW", dict(lr=1e-2)), ("AdamW", dict(lr=1e-2, weight_decay=0.1, amsgrad=True, maximize=True))]


def make_values(dtype, seed=0):
    rng = np.random.default_rng(seed)
    values = []
    for shape in SHAPES:
        if shape and shape[0] == "T":
            values.append(rng.standard_normal(shape[1:]).astype(dtype).T)
        else:
            values.append(np.asarray(rng.standard_normal(shape), dtype=dtype))
    return values


def run(lib, name, settings, dtype, steps=4, **flags):
    """Parameters after ``steps`` updates with fresh gradients each step."""
    values = make_values(dtype)
    params = [lib.tensor(v.T.copy()).t() if v.ndim == 2 and not v.flags.c_contiguous else lib.tensor(v)
              for v in values]
    for p in params:
        p.requires_grad_()
    optimizer = getattr(lib.optim, name)(params, **settings, **flags)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(dtype))
        optimizer.step()
    return [p.detach().numpy().copy() for p in params], optimizer


def against_torch(got, theirs, flag):
    """Pairs to compare with torch. torch 2.13's fused CPU kernels walk a parameter's
    memory as if its gradient had the same strides: with a transposed parameter and a
    contiguous gradient they pair the wrong elements (torch's own single-tensor loop and
    ember's fused path agree with each other there), so that parameter is left out."""
    if flag != "fused":
        return got, theirs
    keep = [i for i, shape in enumerate(SHAPES) if not (shape and shape[0] == "T")]
    return [got[i] for i in keep], [theirs[i] for i in keep]


def assert_same(got, expected, dtype):
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("settings", SGD_SETTINGS)
@pytest.mark.parametrize("flag", ["foreach", "fused"])
def test_sgd_foreach_and_fused_equal_the_single_tensor_loop_and_torch(flag, settings, dtype):
    single, _ = run(ember, "SGD", settings, dtype, foreach=False)
    got, optimizer = run(ember, "SGD", settings, dtype, **{flag: True})
    assert_same(got, single, dtype)
    theirs, _ = run(torch, "SGD", settings, dtype, **{flag: True})
    assert_same(*against_torch(got, theirs, flag), dtype)
    if settings.get("momentum"):
        buffers = [optimizer.state[p]["momentum_buffer"] for p in optimizer.param_groups[0]["params"]]
        assert all(b.shape == p.shape for b, p in zip(buffers, optimizer.param_groups[0]["params"]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("settings", SGD_SETTINGS)
def test_sgd_default_is_foreach_bit_identical_to_the_loop_and_close_to_torchs_default(settings, dtype):
    # NOTE [ SGD's default is foreach ]: a deliberate difference from torch's CPU default
    # that changes nothing but speed.
    default, optimizer = run(ember, "SGD", settings, dtype)
    assert optimizer.param_groups[0]["foreach"] is None  # the group option stays torch's
    loop, _ = run(ember, "SGD", settings, dtype, foreach=False)
    for got, expected in zip(default, loop):
        np.testing.assert_array_equal(got, expected)
    theirs, _ = run(torch, "SGD", settings, dtype)
    assert_same(default, theirs, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "settings"), ADAM_SETTINGS)
@pytest.mark.parametrize("flag", ["foreach", "fused"])
def test_adam_foreach_and_fused_equal_the_single_tensor_loop_and_torch(flag, name, settings, dtype):
    single, reference = run(ember, name, settings, dtype)
    got, optimizer = run(ember, name, settings, dtype, **{flag: True})
    assert_same(got, single, dtype)
    theirs, _ = run(torch, name, settings, dtype, **{flag: True})
    assert_same(*against_torch(got, theirs, flag), dtype)
    for p, q in zip(optimizer.param_groups[0]["params"], reference.param_groups[0]["params"]):
        for key in optimizer.state[p]:
            assert_same([optimizer.state[p][key].numpy()], [reference.state[q][key].numpy()], dtype)


def test_the_flags_are_group_options_like_torchs():
    w = ember.zeros(2, requires_grad=True)
    for (name, cls), flag in itertools.product([("SGD", ember.optim.SGD), ("AdamW", ember.optim.AdamW)],
                                               ["foreach", "fused"]):
        group = cls([w], lr=0.1, **{flag: True}).state_dict()["param_groups"][0]
        theirs = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], lr=0.1,
                                            **{flag: True}).state_dict()["param_groups"][0]
        assert group["foreach"] == theirs["foreach"] and group["fused"] == theirs["fused"]


def test_each_update_bumps_the_version_counters_once():
    w = ember.zeros(3, requires_grad=True)
    optimizer = ember.optim.Adam([w], fused=True)
    w.grad = ember.ones(3)
    before = w._version
    optimizer.step()
    assert w._version == before + 1
    assert optimizer.state[w]["exp_avg"]._version == 1


def test_foreach_and_fused_together_or_on_integer_parameters_raise_like_torch():
    w = ember.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        ember.optim.SGD([w], lr=0.1, foreach=True, fused=True)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1, foreach=True, fused=True)
    for lib in (ember, torch):  # checked when the step meets the parameter, as torch does
        p = lib.zeros(2, dtype=lib.int64)
        optimizer = lib.optim.Adam([p], fused=True)
        p.grad = lib.ones(2, dtype=lib.int64)
        with pytest.raises(RuntimeError, match="`fused=True` requires all the params to be floating point"):
            optimizer.step()
