"""linear_cross_entropy and LinearCrossEntropyLoss (ember_loss/linear_cross_entropy.py)
against torch 2.13: the reference path and the chunked one (every reduction, class
weights, bias, ignore_index, chunk sizes), values and gradients in float32 and float64,
K-dimensional weights, probability targets, unbatched input, the errors and warnings."""

import warnings

import numpy as np
import pytest
import torch

import ember


def _run(lib, dtype, x, linear_weight, target, **kw):
    """``(loss, grad of input, of linear_weight[, of linear_bias])`` under a fixed cotangent."""
    make = lambda a, grad: lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=grad)  # noqa: E731
    inputs = [make(x, True), make(linear_weight, True)]
    extra = {}
    for key, value in kw.items():
        if isinstance(value, np.ndarray):
            extra[key] = make(value, key == "linear_bias")
            if key == "linear_bias":
                inputs.append(extra[key])
        elif key == "options" and value is not None:
            extra[key] = lib.nn.LinearCrossEntropyOptions(**value)
        else:
            extra[key] = value
    target = lib.tensor(target) if target.dtype.kind == "i" else make(target, False)
    loss = lib.nn.functional.linear_cross_entropy(*inputs[:2], target, **extra)
    cotangent = np.random.default_rng(5).standard_normal(tuple(loss.shape))
    loss.backward(lib.tensor(cotangent, dtype=loss.dtype))
    return [loss.detach().double().numpy()] + [t.grad.double().numpy() for t in inputs]


def _compare(dtype, *args, **kw):
    tolerance = dict(rtol=1e-9, atol=1e-10) if dtype == "float64" else dict(rtol=2e-5, atol=2e-6)
    for ours, theirs in zip(_run(ember, dtype, *args, **kw), _run(torch, dtype, *args, **kw)):
        np.testing.assert_allclose(ours, theirs, **tolerance)


OPTIONS = [None, dict(batch_chunk_size=2, allow_retain_graph=True), dict(batch_chunk_size=3), dict(),
           dict(chunking_method="aspect_ratio:2")]
EXTRAS = {"plain": {}, "weight": {"weight": True}, "bias": {"linear_bias": True}, "ignore": {"ignore_index": 1},
          "all": {"linear_bias": True, "weight": True, "ignore_index": 2}}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("extra", sorted(EXTRAS))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", range(len(OPTIONS)))
def test_values_and_gradients_match_torch(options, reduction, extra, dtype):
    rng = np.random.default_rng(0)
    n, features, classes = 7, 4, 6
    x, linear_weight = rng.standard_normal((n, features)), rng.standard_normal((classes, features))
    target = rng.integers(0, classes, n)
    kw = {"reduction": reduction, "options": OPTIONS[options]}
    if "linear_bias" in EXTRAS[extra]:
        kw["linear_bias"] = rng.standard_normal(classes)
    if "weight" in EXTRAS[extra]:
        kw["weight"] = rng.uniform(0.5, 2, classes)
    if "ignore_index" in EXTRAS[extra]:
        kw["ignore_index"] = EXTRAS[extra]["ignore_index"]
    _compare(dtype, x, linear_weight, target, **kw)


def test_unbatched_k_dimensional_and_probability_targets_match_torch():
    rng = np.random.default_rng(1)
    _compare("float64", rng.standard_normal(4), rng.standard_normal((5, 4)), np.array(3),
             options=dict(batch_chunk_size=1))
    _compare("float64", rng.standard_normal((3, 4)), rng.standard_normal((5, 2, 4)), rng.integers(0, 5, (3, 2)),
             linear_bias=rng.standard_normal((5, 2)))
    probabilities = rng.uniform(0, 1, (3, 5))
    _compare("float64", rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), probabilities, label_smoothing=0.1)


def test_unsupported_options_fall_back_with_torch_s_warning():
    rng = np.random.default_rng(2)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.integers(0, 5, 3))
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _run(lib, "float64", *args, label_smoothing=0.2, options=dict(batch_chunk_size=2))
        assert any("``options`` ignored" in str(w.message) for w in caught)
    _compare("float64", *args, label_smoothing=0.2, options=dict(batch_chunk_size=2))


def test_a_second_backward_needs_allow_retain_graph_as_in_torch():
    for lib in (ember, torch):
        x = lib.ones(4, 3, requires_grad=True)
        options = lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
        loss = lib.nn.functional.linear_cross_entropy(x, lib.ones(5, 3), lib.tensor([0, 1, 2, 3]), options=options)
        loss.backward(retain_graph=True)
        with pytest.raises(RuntimeError):
            loss.backward()


def test_errors_match_torch():
    cases = [
        lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 2, 3), lib.ones(5, 3), lib.tensor([0, 1])),
        lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.ones(3), lib.tensor([0, 1])),
        lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.ones(5, 4), lib.tensor([0, 1])),
        lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.ones(5, 3), lib.tensor([0, 1]),
                                                           linear_bias=lib.ones(4)),
        lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(3), lib.ones(5, 2, 3), lib.tensor([0, 1])),
        lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.ones(5, 3), lib.ones(2, 5),
                                                           ignore_index=1),
        lambda lib: lib.nn.LinearCrossEntropyLoss(3, 5, weight=lib.ones(4)),
        lambda lib: lib.nn.LinearCrossEntropyLoss(3, 5, label_smoothing=1.5),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as theirs:
            case(torch)
        with pytest.raises(RuntimeError, match=str(theirs.value).replace("(", r"\(").replace(")", r"\)")
                           .replace("[", r"\[").replace("]", r"\]")):
            case(ember)
    for bad in (dict(acc_policy="fast"), dict(chunking_method="rows"), dict(batch_chunk_size=0)):
        with pytest.raises(ValueError) as theirs:
            torch.nn.LinearCrossEntropyOptions(**bad)
        with pytest.raises(ValueError, match=str(theirs.value).replace("(", r"\(").replace(")", r"\)")):
            ember.nn.LinearCrossEntropyOptions(**bad)


def test_module_matches_torch_s_with_the_same_parameters():
    rng = np.random.default_rng(3)
    theirs = torch.nn.LinearCrossEntropyLoss(4, 5, out_features=(2,), bias=True, reduction="sum").double()
    ours = ember.nn.LinearCrossEntropyLoss(4, 5, out_features=(2,), bias=True, reduction="sum").double()
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x, target = rng.standard_normal((3, 4)), rng.integers(0, 5, (3, 2))
    np.testing.assert_allclose(ours(ember.tensor(x), ember.tensor(target)).item(),
                               theirs(torch.tensor(x), torch.tensor(target)).item(), rtol=1e-12)
    assert repr(ours) == repr(theirs).replace("torch.", "ember.")
