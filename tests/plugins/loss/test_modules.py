"""The loss modules (ember_loss/modules.py) and the plugin's registrations: every module
against its torch counterpart (outputs, gradients, float32/float64, reductions), reprs,
weight buffers in state_dict, the legacy size_average/reduce flags, name resolution
through ember.nn and ember.nn.functional, the ops in ember.ops.loss, and the error that
names ember-loss when the plugin is disabled."""

import os
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember_loss
from ember.testing import assert_parity, make_tensor
from ember_loss import functional, modules


def probabilities(shape, dtype="float32", seed=2):
    return np.asarray(np.random.default_rng(seed).uniform(0.05, 0.95, size=shape), dtype=dtype)


def labels(n, classes, seed=0):
    return np.asarray(np.random.default_rng(seed).integers(0, classes, size=n), dtype="int64")


def signs(n):
    return np.array([1, -1, 1, -1, 1][:n], dtype="int64")


def log_probabilities(shape, dtype):
    p = probabilities(shape, dtype)
    return np.log(p / p.sum(-1, keepdims=True)).astype(dtype)


# name -> (constructor kwargs, inputs(dtype))
CASES = {
    "L1Loss": ({}, lambda d: (make_tensor((3, 4), d, seed=1), make_tensor((3, 4), d, seed=2))),
    "MSELoss": ({}, lambda d: (make_tensor((3, 4), d, seed=1), make_tensor((3, 4), d, seed=2))),
    "SmoothL1Loss": ({"beta": 0.5}, lambda d: (make_tensor((3, 4), d, seed=1), make_tensor((3, 4), d, seed=2))),
    "HuberLoss": ({"delta": 0.8}, lambda d: (make_tensor((3, 4), d, seed=1), make_tensor((3, 4), d, seed=2))),
    "CrossEntropyLoss": ({"ignore_index": 1, "label_smoothing": 0.1},
                         lambda d: (make_tensor((5, 4), d), labels(5, 4))),
    "NLLLoss": ({"ignore_index": 2}, lambda d: (log_probabilities((5, 4), d), labels(5, 4))),
    "BCELoss": ({}, lambda d: (probabilities((3, 4), d, 1), probabilities((3, 4), d))),
    "BCEWithLogitsLoss": ({}, lambda d: (make_tensor((3, 4), d), probabilities((3, 4), d))),
    "KLDivLoss": ({"reduction": "batchmean", "log_target": True},
                  lambda d: (log_probabilities((3, 4), d), log_probabilities((3, 4), d) * 0.5)),
    "CosineEmbeddingLoss": ({"margin": 0.2}, lambda d: (make_tensor((5, 3), d, seed=1),
                                                        make_tensor((5, 3), d, seed=2), signs(5))),
    "MarginRankingLoss": ({"margin": 0.3}, lambda d: (make_tensor((5,), d, seed=1), make_tensor((5,), d, seed=2),
                                                      signs(5).astype(d))),
    "TripletMarginLoss": ({"margin": 0.5, "p": 1.0, "swap": True},
                          lambda d: tuple(make_tensor((4, 3), d, seed=s) for s in range(3))),
    "PoissonNLLLoss": ({"full": True}, lambda d: (make_tensor((3, 4), d), probabilities((3, 4), d) * 4 + 1.5)),
    "GaussianNLLLoss": ({"full": True, "eps": 1e-3},
                        lambda d: (make_tensor((3, 4), d, seed=1), make_tensor((3, 4), d, seed=2),
                                   probabilities((3, 1), d))),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "sum", None])
@pytest.mark.parametrize("name", list(CASES))
def test_module_matches_torch(name, reduction, dtype):
    kwargs, make_inputs = CASES[name]
    kwargs = dict(kwargs)
    if reduction is not None:
        kwargs["reduction"] = reduction
    assert_parity(lambda lib, *xs: getattr(lib.nn, name)(**kwargs)(*xs), *make_inputs(dtype))


@pytest.mark.parametrize("name", list(CASES))
def test_repr_and_attributes_like_torch(name):
    import torch

    kwargs, _ = CASES[name]
    ours, theirs = getattr(ember.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(ours) == repr(theirs)
    for attribute in ("reduction", "ignore_index", "label_smoothing", "beta", "delta", "margin", "p", "eps", "swap",
                      "log_input", "full", "log_target"):
        assert getattr(ours, attribute, None) == getattr(theirs, attribute, None), attribute


def test_weight_buffers_in_state_dict_like_torch():
    import torch

    w, pw = [0.5, 1.0, 2.0], [3.0, 1.0, 0.5]
    pairs = [(ember.nn.CrossEntropyLoss(weight=ember.tensor(w)), torch.nn.CrossEntropyLoss(weight=torch.tensor(w))),
             (ember.nn.NLLLoss(weight=ember.tensor(w)), torch.nn.NLLLoss(weight=torch.tensor(w))),
             (ember.nn.BCELoss(weight=ember.tensor(w)), torch.nn.BCELoss(weight=torch.tensor(w))),
             (ember.nn.BCEWithLogitsLoss(pos_weight=ember.tensor(pw)),
              torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pw))),
             (ember.nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss())]
    for ours, theirs in pairs:
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for key, value in theirs.state_dict().items():
            np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())
        assert repr(ours) == repr(theirs)
    assert pairs[0][0].double().weight.dtype == ember.float64  # buffers follow .to()/.double()


def test_weighted_modules_match_torch():
    w = np.array([0.5, 1.0, 2.0, 1.5])
    ce = lambda lib, x: lib.nn.CrossEntropyLoss(weight=lib.tensor(w), reduction="mean")(x, lib.tensor(labels(5, 4)))
    assert_parity(ce, make_tensor((5, 4), "float64"))
    bce = lambda lib, x, y: lib.nn.BCEWithLogitsLoss(weight=lib.tensor(w), pos_weight=lib.tensor(w[::-1].copy()))(x, y)
    assert_parity(bce, make_tensor((3, 4), "float64"), probabilities((3, 4), "float64"))


@pytest.mark.parametrize("name", ["L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "KLDivLoss",
                                  "MarginRankingLoss", "PoissonNLLLoss"])
@pytest.mark.parametrize("size_average, reduce", [(False, None), (None, False), (True, True), (False, True)])
def test_legacy_flags_like_torch(name, size_average, reduce):
    import torch

    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        theirs = getattr(torch.nn, name)(size_average=size_average, reduce=reduce)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        ours = getattr(ember.nn, name)(size_average=size_average, reduce=reduce)
    assert ours.reduction == theirs.reduction


def test_triplet_margin_module_error_like_torch():
    import torch

    for lib in (torch, ember):
        with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0, got 0"):
            lib.nn.TripletMarginLoss(margin=0)


def test_modules_subclass_ember_module():
    for cls in modules.MODULES:
        assert issubclass(cls, ember.nn.Module)
        assert getattr(ember.nn, cls.__name__) is cls
        assert cls.__module__ == "ember_loss.modules"


def test_functionals_resolve_through_ember_nn_functional():
    for fn in functional.FUNCTIONALS:
        assert getattr(ember.nn.functional, fn.__name__) is fn
    assert ember.nn.functional.cross_entropy is ember_loss.cross_entropy.cross_entropy


def test_create_by_name():
    loss = ember.nn.create("CrossEntropyLoss", label_smoothing=0.2, reduction="sum")
    assert isinstance(loss, ember.nn.CrossEntropyLoss) and loss.label_smoothing == 0.2 and loss.reduction == "sum"


def test_ops_are_registered_under_the_loss_namespace():
    infos = {info.name: info for info in ember.plugins.list_plugins()}
    registered = infos["loss"].registered
    assert infos["loss"].status == "ok" and infos["loss"].distribution == "ember-loss"
    assert "loss::cross_entropy" in registered["ops"] and "loss::nll_loss" in registered["ops"]
    assert sorted(registered["modules"]) == sorted(cls.__name__ for cls in modules.MODULES + modules.OPTIONS)
    assert sorted(registered["functionals"]) == sorted(fn.__name__ for fn in functional.FUNCTIONALS)
    assert ember.ops.loss.cross_entropy is ember_loss.cross_entropy.cross_entropy_op


def test_hook_module_imports_nothing_heavy():
    code = ("import sys, ember_loss; heavy = [m for m in ('ember_loss.cross_entropy', 'ember_loss.modules', "
            "'torch') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_disabled_plugin_names_the_distribution():
    code = ("import ember\n"
            "for get in (lambda: ember.nn.CrossEntropyLoss, lambda: ember.nn.functional.cross_entropy):\n"
            "    try:\n        get()\n    except AttributeError as e:\n        print(e)\n")
    env = dict(os.environ, EMBER_DISABLE_PLUGINS="loss")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 2 and all("ember-loss" in line for line in lines), out.stdout
