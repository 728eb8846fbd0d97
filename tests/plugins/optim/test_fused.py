"""The ``foreach`` and ``fused`` paths of SGD, Adam, AdamW, RMSprop and Adagrad (the array
kernels in ember_optim/fused_*.py), and ember's default, which runs the fused path: the
same parameters and state as the single-tensor loop bit for bit, step after step, and
as torch's own paths on the same inputs to rounding."""

import itertools

import numpy as np
import pytest
import torch

import ember
from ember_optim import fused
from ember_optim.fused_adagrad import adagrad_kernel, fused_adagrad_op
from ember_optim.fused_adam import adam_kernel, fused_adam_op
from ember_optim.fused_rmsprop import fused_rmsprop_op, rmsprop_kernel
from ember_optim.fused_sgd import fused_sgd_op, sgd_kernel

SMALL_BLOCK = 256  # the tests cut blocks of this size, so that small parameters span several
BLOCK = fused.BLOCK

# Sizes around the block size, a 0-d and an empty parameter, a transposed one larger
# than a block (not C-contiguous: it goes whole through the fused path, with scratch of
# its own size), and ("G", ...) a parameter whose
# gradient is a transposed view.
SHAPES = [(3, 5), (SMALL_BLOCK + 7,), (2 * SMALL_BLOCK,), (), (0, 4), ("T", 17, 19), ("G", 4, 7)]

SETTINGS = {
    "SGD": [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.9, nesterov=True),
            dict(lr=0.1, momentum=0.8, dampening=0.3, weight_decay=1e-2),
            dict(lr=0.1, momentum=0.9, weight_decay=1e-2, nesterov=True, maximize=True)],
    "Adam": [dict(lr=1e-2), dict(lr=1e-2, weight_decay=1e-2, amsgrad=True),
             dict(lr=1e-2, maximize=True, betas=(0.8, 0.99)), dict(lr=1e-2, betas=(0.3, 0.9), weight_decay=1.0)],
    "AdamW": [dict(lr=1e-2), dict(lr=1e-2, weight_decay=0.1, amsgrad=True, maximize=True)],
    "RMSprop": [dict(lr=1e-2), dict(lr=1e-2, momentum=0.9, weight_decay=1e-2),
                dict(lr=1e-2, centered=True, maximize=True), dict(lr=1e-2, alpha=0.3, centered=True, momentum=0.5)],
    "Adagrad": [dict(lr=0.1), dict(lr=0.1, lr_decay=0.01, weight_decay=1e-2, initial_accumulator_value=0.1),
                dict(lr=0.1, maximize=True, eps=1e-6)],
}
CASES = [(name, settings) for name, settings_list in SETTINGS.items() for settings in settings_list]
FLAGS = {"SGD": ["foreach", "fused"], "Adam": ["foreach", "fused"], "AdamW": ["foreach", "fused"],
         "RMSprop": ["foreach"], "Adagrad": ["foreach", "fused"]}


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    monkeypatch.setattr(fused, "BLOCK", SMALL_BLOCK)


FUSED_OPS = {"SGD": (fused_sgd_op, sgd_kernel), "Adam": (fused_adam_op, adam_kernel),
             "AdamW": (fused_adam_op, adam_kernel), "RMSprop": (fused_rmsprop_op, rmsprop_kernel),
             "Adagrad": (fused_adagrad_op, adagrad_kernel)}


def each_kernel(name, monkeypatch):
    """Yield once per cpu kernel of ``name``'s fused update op, with it in place: the
    registered one (ember-numba's compiled loops for each of them), then the NumPy
    array kernel (NOTE [ The fused update as an op ] in ember_optim/fused_sgd.py)."""
    yield "registered"
    if name in FUSED_OPS:
        op, numpy_kernel = FUSED_OPS[name]
        with monkeypatch.context() as patch:
            patch.setattr(op, "kernels", {})
            patch.setattr(op, "_resolved", {})
            assert op.kernel_for("cpu") is numpy_kernel
            yield "numpy"


def make_values(dtype, seed=0):
    rng = np.random.default_rng(seed)
    values = []
    for shape in SHAPES:
        if shape and shape[0] == "T":
            values.append(rng.standard_normal(shape[1:]).astype(dtype).T)
        else:
            values.append(np.asarray(rng.standard_normal([s for s in shape if s != "G"]), dtype=dtype))
    return values


def run(lib, name, settings, dtype, steps=4, **flags):
    """Parameters after ``steps`` updates with fresh gradients each step, and the optimizer."""
    params = []
    for v in make_values(dtype):
        p = lib.tensor(v.T.copy()).t() if v.ndim == 2 and not v.flags.c_contiguous else lib.tensor(v)
        params.append(p.requires_grad_())
    optimizer = getattr(lib.optim, name)(params, **settings, **flags)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        for p, shape in zip(params, SHAPES):
            g = rng.standard_normal(tuple(p.shape)).astype(dtype)
            p.grad = lib.tensor(g.T.copy()).t() if shape and shape[0] == "G" else lib.tensor(g)
        optimizer.step()
    return [p.detach().numpy().copy() for p in params], optimizer


def states(optimizer):
    """Every state entry of every parameter, in order, as arrays."""
    return [(key, np.asarray(value.numpy() if hasattr(value, "numpy") else value))
            for p in optimizer.param_groups[0]["params"] for key, value in sorted(optimizer.state[p].items())]


def assert_bit_identical(got, expected):
    (params, optimizer), (loop_params, loop_optimizer) = got, expected
    for g, e in zip(params, loop_params):
        np.testing.assert_array_equal(g, e, strict=True)
    for (key, g), (loop_key, e) in zip(states(optimizer), states(loop_optimizer), strict=True):
        assert key == loop_key
        np.testing.assert_array_equal(g, e, err_msg=key, strict=True)


def assert_close(got, expected, dtype, drop=()):
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    for i, (g, e) in enumerate(zip(got, expected)):
        if i not in drop:
            assert g.shape == e.shape
            np.testing.assert_allclose(g, e, **tol)


def strided_apart(flag):
    """Parameters to leave out of a comparison with torch's fused path: torch 2.13's fused
    CPU kernels walk a parameter's memory as if its gradient had the same strides, so
    with a transposed parameter or gradient they pair the wrong elements (torch's own
    single-tensor loop and ember's paths agree with each other there)."""
    return {i for i, shape in enumerate(SHAPES) if shape and shape[0] in ("T", "G")} if flag == "fused" else set()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "settings"), CASES)
def test_the_default_foreach_and_fused_are_bit_identical_to_the_loop_and_close_to_torch(name, settings, dtype,
                                                                                       monkeypatch):
    loop = run(ember, name, settings, dtype, foreach=False)
    for _ in each_kernel(name, monkeypatch):
        default = run(ember, name, settings, dtype)
        assert default[1].param_groups[0]["foreach"] is None  # the group option stays torch's
        assert_bit_identical(default, loop)
        assert_close(default[0], run(torch, name, settings, dtype)[0], dtype)  # torch's default: its loop
        for flag in FLAGS[name]:
            got = run(ember, name, settings, dtype, **{flag: True})
            assert_bit_identical(got, loop)
            theirs, _ = run(torch, name, settings, dtype, **{flag: True})
            assert_close(got[0], theirs, dtype, drop=strided_apart(flag))


def test_the_default_is_bit_identical_at_the_real_block_size(monkeypatch):
    monkeypatch.setattr(fused, "BLOCK", BLOCK)
    for name in ("Adam", "SGD", "RMSprop", "Adagrad"):
        for _ in each_kernel(name, monkeypatch):
            params = {}
            for foreach in (None, False):
                w = ember.nn.Parameter(ember.linspace(-1.0, 1.0, BLOCK + 5))
                optimizer = getattr(ember.optim, name)([w], lr=0.1, foreach=foreach, **(
                    dict(momentum=0.9) if name == "SGD" else {}))
                for step in range(3):
                    w.grad = ember.sin(w.detach() * (step + 1))
                    optimizer.step()
                params[foreach] = w.detach().numpy()
            np.testing.assert_array_equal(params[None], params[False])


@pytest.mark.parametrize("name", list(SETTINGS))
def test_a_group_of_two_dtypes_resumed_from_a_state_dict_stays_bit_identical(name, monkeypatch):
    # Scratch memory is kept per dtype; state loaded from a dict is any tensor of the
    # parameter's shape, not one the kernels made.
    def resumed(**flags):
        rng = np.random.default_rng(3)
        params = [ember.tensor(rng.standard_normal((SMALL_BLOCK + 3,)), dtype=dtype, requires_grad=True)
                  for dtype in (ember.float32, ember.float64, ember.float32)]
        first = getattr(ember.optim, name)(params, **SETTINGS[name][1], foreach=False)
        second = getattr(ember.optim, name)(params, **SETTINGS[name][1], **flags)
        for step in range(4):
            for p in params:
                p.grad = ember.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype)
            (first if step < 2 else second).step()
            if step == 1:
                second.load_state_dict(first.state_dict())
        return [p.detach().numpy() for p in params], second

    loop = resumed(foreach=False)
    for _ in each_kernel(name, monkeypatch):
        for flags in [dict(), *({flag: True} for flag in FLAGS[name])]:
            assert_bit_identical(resumed(**flags), loop)


def test_adam_is_bit_identical_where_the_bias_correction_reaches_one(monkeypatch):
    # From step 36314 (betas 0.9, 0.999) sqrt(1 - beta2 ** step) is 1.0 exactly and the
    # kernel skips the division by it.
    def late_steps(**flags):
        w = ember.nn.Parameter(ember.linspace(-1.0, 1.0, 7))
        optimizer = ember.optim.Adam([w], lr=0.1, **flags)
        for step in range(4):
            w.grad = ember.cos(w.detach() * (step + 1))
            optimizer.step()
            if step == 0:
                optimizer.state[w]["step"] = ember.tensor(36311.0)
        return [w.detach().numpy()], optimizer

    for _ in each_kernel("Adam", monkeypatch):
        assert_bit_identical(late_steps(), late_steps(foreach=False))


@pytest.mark.parametrize(("dtype", "default"), [("float32", "fused"), ("float64", "fused"), ("float16", "loop"),
                                               ("bfloat16", "loop")])
def test_the_default_runs_the_fused_path_where_it_is_bit_identical(dtype, default):
    # float16 and bfloat16 compute in float32 in ember's ops: the kernels would round
    # differently, so those keep the loop.
    w = ember.ones(3, dtype=getattr(ember, dtype), requires_grad=True)
    w.grad = ember.ones(3, dtype=getattr(ember, dtype))
    for flags, path in ((dict(), default), (dict(foreach=False), "loop"), (dict(foreach=True), "foreach"),
                        (dict(fused=True), "fused")):
        group = ember.optim.Adam([w], **flags).param_groups[0]
        assert fused.choose_path(group, [w], [w.grad]) == path


def test_the_flags_are_group_options_like_torchs():
    w = ember.zeros(2, requires_grad=True)
    for (name, settings), flag in itertools.product([("SGD", dict(lr=0.1)), ("AdamW", dict(lr=0.1)),
                                                     ("Adagrad", dict(lr=0.1)), ("RMSprop", dict(lr=0.1))],
                                                    ["foreach", "fused"]):
        if flag not in FLAGS[name]:
            continue
        group = getattr(ember.optim, name)([w], **settings, **{flag: True}).state_dict()["param_groups"][0]
        theirs = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **settings,
                                            **{flag: True}).state_dict()["param_groups"][0]
        assert group["foreach"] == theirs["foreach"] and group.get("fused") == theirs.get("fused")


@pytest.mark.parametrize("flags", [dict(), dict(foreach=True), dict(fused=True)])
def test_each_update_bumps_the_version_counters_once(flags):
    w = ember.zeros(3, requires_grad=True)
    optimizer = ember.optim.Adam([w], **flags)
    w.grad = ember.ones(3)
    before = w._version
    optimizer.step()
    assert w._version == before + 1
    assert optimizer.state[w]["exp_avg"]._version == 1
    assert optimizer.state[w]["step"].item() == 1


def test_foreach_and_fused_together_or_on_integer_parameters_raise_like_torch():
    w = ember.zeros(2, requires_grad=True)
    for name in ("SGD", "Adagrad"):
        for lib, param in ((ember, w), (torch, torch.zeros(2, requires_grad=True))):
            with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
                getattr(lib.optim, name)([param], lr=0.1, foreach=True, fused=True)
    for lib in (ember, torch):  # checked when the step meets the parameter, as torch does
        p = lib.zeros(2, dtype=lib.int64)
        optimizer = lib.optim.Adam([p], fused=True)
        p.grad = lib.ones(2, dtype=lib.int64)
        with pytest.raises(RuntimeError, match="`fused=True` requires all the params to be floating point"):
            optimizer.step()
